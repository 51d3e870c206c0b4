"""manyfiles on real files (E4): end-to-end timing, per-file percentiles, modes."""
from __future__ import annotations

import pytest

from conftest import tree


@pytest.mark.timeout(120)
@pytest.mark.parametrize("write, read", [("fsync", "cold"), ("buffered", "warm"), ("direct", "direct"),
                                         ("fsync", "none")])
def test_modes_count_every_file_and_clean_up(run_cbk, tmp_path, write, read):
    r = run_cbk("manyfiles", f"--dir={tmp_path}", "--files=12", "--file-size=1m", "--block-size=32k",
                f"--write={write}", f"--read={read}", "--verify")
    assert r.status == 0, r.stderr
    writes = r.measurements("write")
    assert [w["mode"] for w in writes] == (["buffered", "buffered+sync"] if write == "buffered" else [write])
    for m in writes + r.measurements("read"):
        assert m["files"] == 12 and m["bytes"] == 12 * 2**20 and m["ops"] == 12 * 32
        assert m["files_per_s"] == pytest.approx(12 / m["seconds"]) or m["mode"] == "buffered+sync"
        assert 0 < m["file_seconds_p50"] <= m["file_seconds_p90"] <= m["file_seconds_p99"] <= m["file_seconds_max"]
        assert m["file_seconds_max"] <= m["seconds"] + 1e-6
    if read == "none":
        assert r.measurements("read") == []
    else:
        (rd,) = r.measurements("read")
        assert rd["verify_ok"] is True
        if read == "cold":
            assert rd["cold_achieved"] is True
    assert tree(tmp_path) == []


@pytest.mark.timeout(60)
def test_verify_names_the_corrupted_file_and_offset(run_cbk, tmp_path):
    r = run_cbk("manyfiles", f"--dir={tmp_path}", "--files=3", "--file-size=256k", "--block-size=32k",
                "--read=warm", "--verify", env={"CBK_TEST_CORRUPT_OFFSET": "70000"})
    assert r.status == 1
    (rd,) = r.measurements("read")
    assert rd["verify_ok"] is False and rd["verify_bad_file"] == 0 and rd["verify_first_bad_offset"] == 70000
    assert tree(tmp_path) == []


@pytest.mark.timeout(60)
def test_too_little_space_for_all_files_is_bad_input(run_cbk, tmp_path):
    r = run_cbk("manyfiles", f"--dir={tmp_path}", "--files=100000", "--file-size=1t")
    assert r.status == 2 and "not enough space" in r.errors[0]["message"]
    assert tree(tmp_path) == []
