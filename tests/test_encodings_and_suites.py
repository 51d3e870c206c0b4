"""Encodings (#20 finding 7) and malformed suites (finding 8).

Non-UTF-8 labels, --dir values and working directories end in one line or
a stored run, never a traceback; cbk's JSON is valid UTF-8 whatever the
path bytes, and a long multibyte message is cut on a character boundary.
Every malformed suite is refused before anything runs."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

NON_UTF8 = b"caf\xe9-\xff"


def test_cbk_json_carries_non_utf8_path_bytes_as_surrogate_escapes(cbk_bin, tmp_path):
    target = os.path.join(os.fsencode(tmp_path), NON_UTF8)
    os.mkdir(target)
    p = subprocess.run([cbk_bin, "seqio", b"--dir=" + target, "--file-size=64k", "--block-size=4k"],
                       capture_output=True, timeout=60)
    assert p.returncode == 0, p.stderr
    records = [json.loads(line.decode("utf-8")) for line in p.stdout.splitlines()]  # strict UTF-8
    dirs = {r["dir"] for r in records if r.get("type") == "measurement"}
    assert dirs and all(os.fsencode(d) == target for d in dirs)  # the bytes come back exactly
    assert os.listdir(target) == []


def test_cbk_cuts_a_long_multibyte_message_on_a_character_boundary(cbk_bin, tmp_path):
    for pad in ("", "x"):  # both parities of the cut
        # a path longer than cbk's longest message (CBK_MESSAGE_MAX, 10 KiB), so the message is cut
        missing = f"{tmp_path}/{pad}" + "/".join(["é" * 100] * 60)
        p = subprocess.run([cbk_bin, "seqio", f"--dir={missing}", "--file-size=64k", "--block-size=4k"],
                           capture_output=True, timeout=60)
        assert p.returncode == 2
        text = (p.stdout + p.stderr).decode("utf-8")  # strict: a cut character would fail here
        message = next(json.loads(line)["message"] for line in text.splitlines() if line.startswith("{"))
        assert not any("\udc80" <= ch <= "\udcff" for ch in message), message[-40:]  # no stray byte
        assert len(message.encode()) < len(missing.encode()), "the message was not cut"
        assert message.endswith(("é", "/")), message[-40:]


@pytest.fixture
def env(cbk_bin, store_url):
    return dict(os.environ, CLUSTERBENCH_CBK=cbk_bin, CLUSTERBENCH_DB=store_url, COLUMNS="300")


def run(args: list, env: dict, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "clusterbench", *args], capture_output=True, env=env, cwd=cwd,
                          timeout=120)


def test_a_non_utf8_label_is_refused_in_one_line(env, tmp_path, store_url):
    p = run(["run", "null", "--seconds=0.01", b"--label=" + NON_UTF8], env)
    assert p.returncode == 2 and b"Traceback" not in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1 and b"not UTF-8" in p.stderr
    assert not os.path.exists(store_url.removeprefix("sqlite:///"))


def test_non_utf8_dir_and_working_directory_are_measured_and_stored(env, tmp_path):
    target = os.path.join(os.fsencode(tmp_path), NON_UTF8)
    os.mkdir(target)
    p = run(["run", "seqio", b"--dir=" + target, "--file-size=64k", "--block-size=4k", "--repeat", "2"], env)
    assert p.returncode == 0, p.stderr
    p = run(["run", "seqio", "--file-size=64k", "--block-size=4k", "--repeat", "2"], env, cwd=target)
    assert p.returncode == 0, p.stderr
    assert os.listdir(target) == []
    for args in (["list"], ["show", "1", "2"], ["export", "--format", "json", "1", "2"]):
        p = run(args, env)
        assert p.returncode == 0 and b"Traceback" not in p.stderr, p.stderr
        p.stdout.decode("utf-8")
    assert b"caf\\\\xe9-\\\\xff" in run(["export", "--format", "json", "1"], env).stdout  # the bytes, as \xNN


MALFORMED = {
    "requires-as-string": ('requires = "mpi"', "requires = 'mpi'"),
    "ppn-not-a-number": ('np = 2\nppn = "x"', "ppn = 'x'"),
    "repeat-fraction": ("repeat = 2.7", "repeat = 2.7"),
    "repeat-zero": ("repeat = 0", "repeat = 0"),
    "repeat-bool": ("repeat = true", "repeat = True"),
    "np-empty-list": ("np = []", "np = []"),
    "np-past-mpis-int": ("np = 2147483648", "np = 2147483648"),   # what --np refuses (launch.MAX_RANKS)
    "name-with-nul": ('name = "a\\u0000b"', "name ="),
    # as --label: a tab, a C1 control or a bidirectional override was stored and shown without it
    "name-with-tab": ('name = "a\\tb"', "name = 'a\\tb': expected text without control characters"),
    "name-with-c1": ('name = "a\\u009bb"', "name = 'a\\x9bb': expected text without control characters"),
    "name-with-bidi": ('name = "a\\u202eb"', "expected text without control characters"),
    "env-value-with-nul": ('env = { A = "x\\u0000y" }', "env.A: a value cannot hold a NUL character"),
    "params-table": ("params = { seconds = { a = 1 } }", "params.seconds"),
    "unknown-key": ("color = 1", "color"),
    "million-point-sweep": ("params = { seconds = [" + ", ".join(["0.1"] * 1000) + "], x = ["
                            + ", ".join(["1"] * 1000) + "] }", "more than 10,000 steps"),
}


# whole files (bytes), not a step's body: issue #36's probe
MALFORMED_FILES = {
    "binary": (bytes(range(256)) * 4, b"not UTF-8 text"),
    "non-utf8-step-name": (b'[[steps]]\nname = "disk \xff"\nkernel = "null"\n', b"not UTF-8 text (byte 0xff"),
    "arrays-5000-deep": (b"[[steps]]\nkernel = \"null\"\nparams = { a = " + b"[" * 5000 + b"]" * 5000 + b" }\n",
                         b"nested too deeply"),
    "tables-900-deep": (b"[[steps]]\nkernel = \"null\"\nparams = { a = " + b"{b=" * 900 + b"1" + b"}" * 900 + b" }\n",
                        b"nested too deeply"),
    "unknown-top-level-key": (b'descripton = "typo"\n[[steps]]\nkernel = "null"\n', b"unknown key(s) descripton"),
    "duplicate-step-names": (b'[[steps]]\nname = "disk"\nkernel = "null"\n[[steps]]\nname = "disk"\nkernel = "null"\n',
                             b"step 2: name 'disk' is step 1's too"),
    "over-1-MiB": (b"# " + b"x" * (1 << 20) + b"\n", b"larger than 1 MiB"),
}


@pytest.mark.parametrize("case", sorted(MALFORMED_FILES))
def test_a_suite_file_that_is_not_one_is_refused_in_one_line(case, tmp_path, cbk_bin):
    from click.testing import CliRunner

    from clusterbench.cli import cli

    data, expected = MALFORMED_FILES[case]
    suite = tmp_path / "bad.toml"
    suite.write_bytes(data)
    db = tmp_path / "store.db"
    r = CliRunner().invoke(cli, ["run", str(suite), "--db", str(db)], env={"CLUSTERBENCH_CBK": cbk_bin})
    assert r.exit_code == 2 and not (r.exception and not isinstance(r.exception, SystemExit)), r.output
    assert len(r.output.strip().splitlines()) == 1 and expected.decode() in r.output, r.output
    assert sorted(os.listdir(tmp_path)) == ["bad.toml"]  # no store, nothing else


def test_a_suite_name_of_a_fifo_or_a_device_is_refused_as_not_a_file(tmp_path, cbk_bin):
    """Said 'does not exist' (is_file() was False): the name is there, it is
    not a file to read (files/small_file.py)."""
    from click.testing import CliRunner

    from clusterbench.cli import cli

    os.mkfifo(tmp_path / "fifo.toml")
    (tmp_path / "zero.toml").symlink_to("/dev/zero")
    for name in ("fifo.toml", "zero.toml"):
        r = CliRunner().invoke(cli, ["run", str(tmp_path / name), "--db", str(tmp_path / "store.db")],
                               env={"CLUSTERBENCH_CBK": cbk_bin})
        assert r.exit_code == 2 and r.output.strip() == f"Error: suite file {tmp_path / name}: not a regular file", \
            r.output
    assert sorted(os.listdir(tmp_path)) == ["fifo.toml", "zero.toml"]


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_a_malformed_suite_is_refused_before_anything_runs(case, tmp_path, cbk_bin):
    from click.testing import CliRunner

    from clusterbench.cli import cli

    body, expected = MALFORMED[case]
    suite = tmp_path / "bad.toml"
    suite.write_text(f'[[steps]]\nkernel = "null"\n{body}\n')
    db = tmp_path / "store.db"
    r = CliRunner().invoke(cli, ["run", str(suite), "--db", str(db)], env={"CLUSTERBENCH_CBK": cbk_bin})
    assert r.exit_code == 2 and not (r.exception and not isinstance(r.exception, SystemExit)), r.output
    assert len(r.output.strip().splitlines()) == 1 and expected in r.output, r.output
    assert sorted(os.listdir(tmp_path)) == ["bad.toml"]  # no store, nothing else


def test_a_whole_number_in_a_steps_env_reaches_its_launch_as_text(tmp_path, cbk_bin):
    """The schema takes a step's env values as strings or whole numbers, and
    env = { OMP_NUM_THREADS = 4 } ended in a TypeError traceback (os.fsencode
    of an int) once the run was stored, failed."""
    import subprocess
    import sys

    suite = tmp_path / "env.toml"
    seen = tmp_path / "seen"
    # a cbk that records the variable, then runs the real one
    wrapper = tmp_path / "cbk"
    wrapper.write_text(f'#!/bin/sh\n[ "$1" = null ] && echo "$OMP_NUM_THREADS" >> {seen}\nexec {cbk_bin} "$@"\n')
    wrapper.chmod(0o755)
    suite.write_text('[[steps]]\nkernel = "null"\nrepeat = 2\nenv = { OMP_NUM_THREADS = 4 }\n')
    env = dict(os.environ, CLUSTERBENCH_CBK=str(wrapper), CLUSTERBENCH_DB=str(tmp_path / "store.db"),
               XDG_CACHE_HOME=str(tmp_path / "cache"))
    r = subprocess.run([sys.executable, "-m", "clusterbench", "run", str(suite), "--quiet", "--report-dir",
                        str(tmp_path)], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    assert seen.read_text().split() == ["4"], seen.read_text()


def test_a_suites_rank_counts_stop_where_the_command_lines_do():
    """A suite's np and ppn stopped at 1,000,000, --np at MPI's int: a run of
    2 million ranks could be asked for on the command line, not in a suite."""
    import json

    from clusterbench.launch import MAX_RANKS
    from clusterbench.suites import SCHEMA_FILE

    assert json.loads(SCHEMA_FILE.read_text())["$defs"]["count"]["maximum"] == MAX_RANKS
