"""A store on a full disk (issue #36, item 6): one line and exit status 1,
never a driver's traceback, and a run whose store fills mid-run is closed
as failed, not left `running` (store/failures.py, store/disk_reserve.py).
Each test runs on a 1 MiB tmpfs in a private mount namespace (full_disk.py)."""
from __future__ import annotations

import os
import sqlite3

from full_disk import run_on_full_disk


def _env(cbk_bin: str) -> dict:
    return dict(os.environ, CLUSTERBENCH_CBK=cbk_bin, COLUMNS="200")


def _errors(stderr: str) -> list[str]:
    return [ln for ln in stderr.splitlines() if ln.strip()]


# polls the store (a reader in WAL mode) until run 2 has stored samples: then the disk is filled
WAIT_FOR_SAMPLES = """
import sqlite3, sys, time
for _ in range(600):
    time.sleep(0.05)
    try:
        with sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True) as db:
            if db.execute("select count(*) from samples join steps on steps.id = samples.step_id"
                          " where steps.run_id = 2").fetchone()[0] >= 5:
                break
    except sqlite3.Error:
        pass
"""


def test_a_run_whose_store_fills_mid_run_exits_1_in_one_line_and_is_closed_failed(cbk_bin, tmp_path):
    out = tmp_path / "copy"
    out.mkdir()
    # the disk fills while the run stores its samples (as a benchmark's own files or another job fill it)
    script = ('"$PY" -m clusterbench run null --seconds=0.01 --repeat 1 --quiet --db "$FULL/r.db" >/dev/null || exit 98\n'
              '( "$PY" -c "$WAIT_FOR_SAMPLES" "$FULL/r.db"; fill ) &\n'
              '"$PY" -m clusterbench run null --seconds=0.002 --repeat 100000 --quiet --db "$FULL/r.db" '
              '2>"$OUT/stderr"; echo "status=$?"\n'
              'wait; rm -f "$FULL/filler"\n'
              'cp "$FULL"/r.db* "$OUT"/')
    r = run_on_full_disk(tmp_path, script, env=dict(_env(cbk_bin), OUT=str(out), WAIT_FOR_SAMPLES=WAIT_FOR_SAMPLES))
    assert "status=1" in r.stdout, (r.stdout, r.stderr)
    errors = _errors((out / "stderr").read_text())
    assert len(errors) == 1 and "database or disk is full" in errors[0] and "Traceback" not in errors[0], errors
    with sqlite3.connect(out / "r.db") as db:
        status, message = db.execute("select status, message from runs where id = 2").fetchone()
        steps = db.execute("select status from steps where run_id = 2").fetchall()
        samples = db.execute("select count(*) from samples join steps on steps.id = samples.step_id "
                             "where steps.run_id = 2").fetchone()[0]
    assert status == "failed" and "database or disk is full" in message
    assert steps == [("failed",)] and samples > 0   # what was measured before the disk filled is kept


def test_a_store_on_a_disk_with_no_byte_free_is_one_line_and_unchanged(cbk_bin, tmp_path):
    out = tmp_path / "copy"
    out.mkdir()
    script = ('"$PY" -m clusterbench run null --seconds=0.01 --repeat 1 --quiet --db "$FULL/r.db" >/dev/null || exit 98\n'
              'fill; sha256sum "$FULL/r.db"\n'
              'for c in list "show 1" "export 1" "run null --seconds=0.01 --repeat 1 --quiet"; do\n'
              '  "$PY" -m clusterbench $c --db "$FULL/r.db" >/dev/null 2>>"$OUT/stderr"; echo "status=$?"\n'
              'done\n'
              'sha256sum "$FULL/r.db"; for f in "$FULL"/*; do echo "${f##*/} $(stat -c %s "$f")"; done')
    r = run_on_full_disk(tmp_path, script, env=dict(_env(cbk_bin), OUT=str(out)))
    lines = r.stdout.splitlines()
    assert lines.count("status=1") == 4, r.stdout
    assert lines[0].split()[0] == lines[5].split()[0]   # the store's bytes as they were
    sizes = dict(line.split() for line in lines[6:])
    # SQLite may leave an empty -wal (and its index) it could not write: no data in them
    assert set(sizes) - {"r.db-wal", "r.db-shm"} == {"filler", "r.db"} and sizes.get("r.db-wal", "0") == "0"
    errors = _errors((out / "stderr").read_text())
    assert len(errors) == 4 and all("disk I/O error" in e or "disk is full" in e for e in errors), errors
    assert not any("Traceback" in e for e in errors)


# Another writer that takes the space while cbk's file is being written: it polls for the file
# (every 0.5 ms), then writes until the file system is full, holds that while the file exists and
# gives it back when the file is gone, so a repetition whose write outran it does not fail the next
# one's space check, and the next repetition is raced again.
FILLER = """
import glob, os, sys, time
pattern, filler, stop = sys.argv[1:4]
block = bytes(1 << 20)
while not os.path.exists(stop):
    if not glob.glob(pattern):
        time.sleep(0.0005)
        continue
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    try:
        while os.write(fd, block):
            pass
    except OSError:
        pass   # full
    os.close(fd)
    while glob.glob(pattern) and not os.path.exists(stop):
        time.sleep(0.001)
    os.unlink(filler)
"""


def test_a_disk_that_fills_mid_run_is_a_failed_measurement_said_once(cbk_bin, tmp_path):
    """The space check passed, then another writer took the space: cbk's
    ENOSPC is a failed measurement, exit 1, its message not prefixed twice,
    its files removed. The file (32 MiB in 4 KiB writes, tens of
    milliseconds on a 64 MiB tmpfs) lives long enough for the filler to
    take the space while it is written: the first repetition nearly always
    fails, and one that outran the filler is followed by another race."""
    out = tmp_path / "copy"
    out.mkdir()
    script = ('mkdir "$FULL/big" && mount -t tmpfs -o size=64m cbbig "$FULL/big" && mkdir "$FULL/big/d" || exit 99\n'
              '"$PY" -c "$FILLER" "$FULL/big/d/cbk-*/[!.]*" "$FULL/big/filler" "$FULL/stop" &\n'
              'timeout 120 "$PY" -m clusterbench run seqio --file-size=32m --block-size=4k --repeat 1000 '
              '--dir="$FULL/big/d" --db "$OUT/r.db" >"$OUT/stdout" 2>"$OUT/stderr"; echo "status=$?"\n'
              'touch "$FULL/stop"; wait; ls -A "$FULL/big/d"; echo listed')
    r = run_on_full_disk(tmp_path, script, env=dict(_env(cbk_bin), OUT=str(out), FILLER=FILLER))
    assert r.stdout.splitlines() == ["status=1", "listed"], (r.stdout, r.stderr)   # the directory is empty again
    said = (out / "stdout").read_text() + (out / "stderr").read_text()
    assert "step failed: seqio: write " in said and "No space left on device" in said, said
    assert "seqio: seqio:" not in said and "Traceback" not in said
    with sqlite3.connect(out / "r.db") as db:
        assert db.execute("select status, message from steps").fetchall() == [
            ("failed", next(ln for ln in said.splitlines() if "step failed" in ln).split("step failed: ", 1)[1].strip())]
