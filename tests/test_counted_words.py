"""A count agrees with its noun in every human-facing text
(output/counted_text.py): "1 difference", "2 ranks", "1 run"; the reports
said "(1 differences)", "1 difference(s)", "1 rank(s)", "outlier(s) by"
and prune "would delete 1 runs". The store holds the golden runs (tests/golden/runs.jsonl)."""
from __future__ import annotations

from test_golden_reports import fill_store


def test_reports_and_compare_count_in_words_that_agree(cli, store_url, tmp_path):
    fill_store(store_url)
    for name in ("r.md", "r.html"):
        assert cli("report", "base", "tuned", "-o", str(tmp_path / name)).status == 0
    table = cli("compare", "base", "tuned").stdout
    show = cli("show", "1").stdout
    texts = [(tmp_path / "r.md").read_text(), (tmp_path / "r.html").read_text(), table, show]
    for text in texts:
        # "disk(s) sda" names a list, not a count
        assert "(s)" not in text.replace("disk(s) ", "") and "1 differences" not in text
    md, html = texts[0], texts[1]
    assert "### Environment: base vs tuned (1 difference)" in md
    assert "<h3>Environment: base vs tuned (1 difference)</h3>" in html
    assert "environment: base vs tuned: 1 difference" in table
    assert "`seqio --dir=/scratch/golden --file-size=4m --block-size=1m`, 1 rank; 5 repetitions\n" in md
    assert "`mpi --op=pingpong --sizes=8,1k`, 2 ranks; 5 repetitions\n" in md
    assert "4 figures are flagged and are not what their mode claims" in html
    assert "(median of 3 repetitions)" in show and ", 2 ranks" in show
    assert "warning: outlier by modified Z-score > 18.6 at n = 5 (write fsync): 1,662 MiB/s" in show
    assert "- **NUMA**: 1 node; node0: cpus 0-15" in md


def test_prune_counts_one_run_as_one_run(cli, store_url):
    fill_store(store_url)
    out = cli("prune", "--run", "1", "--dry-run").stdout
    assert out.startswith("would delete 1 run, 7 steps, "), out
    assert " and 1 environment named (1)" in out


def test_counted():
    from clusterbench.output.counted_text import counted

    assert [counted(n, "difference") for n in (0, 1, 2, 1500)] == [
        "0 differences", "1 difference", "2 differences", "1,500 differences"]
    assert counted(1, "status", "statuses") == "1 status" and counted(3, "status", "statuses") == "3 statuses"
