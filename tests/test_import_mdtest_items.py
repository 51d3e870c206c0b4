"""clusterbench import of mdtest: LLNL's mdtest 1.7 to 1.9.3.
Real outputs in tests/fixtures/import (tests/fixtures/README says how
each was made)."""
from __future__ import annotations

import pytest

from conftest import REPO, store_rows

from clusterbench.importers.import_runs import parse_file

FIXTURES = REPO / "tests" / "fixtures" / "import"


def phases(name: str, run_index: int = 0) -> dict:
    run = parse_file(str(FIXTURES / name))[run_index]
    (step,) = run.steps
    return {s.phase: s for s in step.samples}


def test_llnl_mdtest_1_7_and_1_8_are_read():
    # "... on 1 nodes" (1.9 prints "node(s)"); LLNL's 1.7.4 calls itself 1.7.3 and has no file read
    # and no tree phases
    for name, version, count in (("mdtest-1.8.4-llnl-iterations.txt", "1.8.4", 9),
                                 ("mdtest-1.7.4-llnl-iterations.txt", "1.7.3", 6)):
        (run,) = parse_file(str(FIXTURES / name))
        (step,) = run.steps
        assert (run.version, step.ranks, step.kernel, len(step.samples)) == (version, 2, "metadata", count)
        assert {s.phase: s for s in step.samples}["file-stat"].record["iterations"] == 2
    assert phases("mdtest-1.8.4-llnl-iterations.txt")["dir-stat"].value == 1041259.138


def test_import_of_llnl_mdtest_1_8_stores_it_and_a_cut_one_is_refused_in_one_line(cli, store_url, tmp_path):
    good = FIXTURES / "mdtest-1.8.4-llnl-iterations.txt"
    assert cli("import", str(good)).status == 0
    assert store_rows(store_url, "select count(*) from runs") == [(1,)]
    cut = tmp_path / "mdtest.out"
    cut.write_text(good.read_text().split("SUMMARY")[0])   # the job was killed before mdtest's table
    bad = cli("import", str(cut))
    assert bad.status == 2 and bad.stderr.strip().count("\n") == 0 and "no SUMMARY table" in bad.stderr
    assert store_rows(store_url, "select count(*) from runs") == [(1,)]
