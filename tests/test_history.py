"""`clusterbench list` as a browsable history (E11): filters, and the
per-month/user/... summary of how many runs ran, failed and how long."""
from __future__ import annotations

import datetime as dt
import re
import socket

import pytest

from conftest import run_bounded

from clusterbench.analysis.run_groups import summarise
from clusterbench.store.database import Store
from clusterbench.store.schema import runs, steps

UTC = dt.timezone.utc
pytestmark = pytest.mark.both_stores


def seed(store_url: str) -> None:
    """Five runs by two users over two months, with each outcome."""
    store = Store(store_url)
    plan = [  # user, start, seconds, status, kernel
        ("ana", dt.datetime(2026, 10, 3, 9, 0, tzinfo=UTC), 60, "ok", "randio"),
        ("ana", dt.datetime(2026, 10, 20, 9, 0, tzinfo=UTC), 120, "failed", "seqio"),
        ("bo", dt.datetime(2026, 11, 1, 0, 0, tzinfo=UTC), 30, "ok", "randio"),
        ("bo", dt.datetime(2026, 11, 2, 8, 0, tzinfo=UTC), 10, "interrupted", "mpi"),
        ("ana", dt.datetime(2026, 11, 5, 8, 0, tzinfo=UTC), 7200, "ok", "stream"),
    ]
    for user, start, seconds, status, kernel in plan:
        rid = store.begin_run(label=f"{user}-{kernel}", command=f"clusterbench run {kernel}", suite=None, user=user)
        store.begin_step(rid, position=0, name=None, kernel=kernel, params={}, launcher="local", ranks=1,
                         ranks_per_node=None)
        store.finish_run(rid, status)
        with store.engine.begin() as c:  # back-date it: the history spans months
            c.execute(runs.update().where(runs.c.id == rid).values(
                started=start, finished=start + dt.timedelta(seconds=seconds)))
            c.execute(steps.update().where(steps.c.run_id == rid).values(status=status))


def test_summary_counts_outcomes_and_time_per_month(store_url):
    seed(store_url)
    groups = {g.key: g for g in summarise(Store(store_url).list_runs(), "month")}
    assert list(groups) == ["2026-10", "2026-11"]
    oct_, nov = groups["2026-10"], groups["2026-11"]
    assert (oct_.runs, oct_.ok, oct_.failed, oct_.cut_short) == (2, 1, 1, 0)
    assert (nov.runs, nov.ok, nov.failed, nov.cut_short) == (3, 2, 0, 1)
    assert oct_.total_s == 180 and nov.total_s == 7240 and nov.median_s == 30


def test_list_filters_narrow_the_runs(cli, store_url):
    seed(store_url)

    def ids(*args):
        r = cli("list", *args)
        assert r.status == 0, r.stderr
        return [line.split()[1] for line in r.stdout.splitlines() if line.startswith("│ ")]

    assert ids("--user", "bo") == ["4", "3"]
    assert ids("--status", "failed") == ["2"]
    assert ids("--kernel", "randio") == ["3", "1"]
    assert ids("--since", "2026-11-01", "--until", "2026-11-05") == ["4", "3"]
    assert ids("--since", "2026-11") == ["5", "4", "3"]
    r = cli("list", "--user", "nobody")
    assert r.status == 0 and "no matching runs" in r.stdout
    r = cli("list", "--since", "yesterday")
    assert r.status == 2 and "yesterday" in r.stderr


def test_list_orders_runs_by_when_they_started_not_by_when_they_were_stored(cli, store_url):
    """An old file imported today was listed above yesterday's runs (by id), though --help says
    newest first; and --limit 2 kept it over them."""
    seed(store_url)
    store = Store(store_url)
    old = store.begin_run(label="imported-2025", command="clusterbench import", suite=None, user="ana")
    store.finish_run(old, "ok")
    with store.engine.begin() as c:
        c.execute(runs.update().where(runs.c.id == old).values(
            started=dt.datetime(2025, 6, 1, 12, 0, tzinfo=UTC), finished=dt.datetime(2025, 6, 1, 12, 1, tzinfo=UTC)))
    r = cli("list")
    assert r.status == 0, r.stderr
    assert [line.split()[1] for line in r.stdout.splitlines() if line.startswith("│ ")] == ["5", "4", "3", "2", "1",
                                                                                              str(old)]
    r = cli("list", "--limit", "2")
    assert [line.split()[1] for line in r.stdout.splitlines() if line.startswith("│ ")] == ["5", "4"]


def test_an_empty_list_names_its_filters_and_a_value_no_run_has(cli, store_url):
    """'no matching runs' alone: `--user Ana` (runs are ana's) or a swapped filter read as an
    empty store. The answer names the filters, and a user, host or label no run has at all is
    named with those the store holds."""
    seed(store_url)
    r = cli("list", "--user", "Ana", "--since", "2026-10")
    assert r.status == 0 and len(r.stdout.strip().splitlines()) == 1, r.stdout
    assert r.stdout.startswith("no matching runs (user Ana, since 2026-10-01) in "), r.stdout
    assert "; no run has user 'Ana' (users: ana, bo)" in r.stdout, r.stdout
    r = cli("list", "--user", "bo", "--status", "failed")   # each value exists; together they match nothing
    assert r.stdout.startswith("no matching runs (user bo, status failed) in ") and "no run has" not in r.stdout
    r = cli("list", "--label", "ana-randoi")
    assert "no run has label 'ana-randoi' (labels: ana-randio, ana-seqio, ana-stream, bo-mpi, bo-randio)" in r.stdout


def test_list_matches_a_host_in_any_case_as_dns_names_it(cli, store_url):
    """`--host VM` for runs started on vm listed none, and its hint named the host the user had typed."""
    seed(store_url)
    host = socket.gethostname()
    r = cli("list", "--host", host.swapcase() if host.swapcase() != host else host.upper())
    assert r.status == 0 and sum(line.startswith("│ ") for line in r.stdout.splitlines()) == 5, r.stdout
    r = cli("list", "--host", host.upper() + "-other")
    assert r.stdout.startswith("no matching runs") and f"no run has host '{host.upper()}-other' (hosts: {host})" \
        in r.stdout, r.stdout


def test_list_refuses_an_empty_date_range(cli, store_url):
    """`--since 2026-11-05 --until 2026-11-01` (swapped) said "no matching runs", exit 0, as if
    none ran in November; --until is exclusive, so --since X --until X is empty too."""
    seed(store_url)
    for since, until in (("2026-11-05", "2026-11-01"), ("2026-11", "2026-11"), ("2026-11-02 08:00", "2026-11-02")):
        r = cli("list", "--since", since, "--until", until)
        assert r.status == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
        assert f"--since {since if len(since) != 7 else since + '-01'} is not before --until" in r.stderr, r.stderr
    r = cli("list", "--since", "2026-11-02 07:59", "--until", "2026-11-02 08:01")
    assert r.status == 0 and [ln.split()[1] for ln in r.stdout.splitlines() if ln.startswith("│ ")] == ["4"]


def test_list_refuses_a_kernel_nothing_knows(cli, store_url):
    """`list --kernel randoi` said "no matching runs" (exit 0), as if no randio run were stored;
    trend refuses the same name. A kernel cbk has that no stored run ran is an empty answer."""
    seed(store_url)
    r = cli("list", "--kernel", "randoi")
    assert r.status == 2 and "no such kernel: 'randoi'" in r.stderr and "randio" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    r = cli("list", "--by", "month", "--kernel", "randoi")
    assert r.status == 2 and "randoi" in r.stderr
    r = cli("list", "--kernel", "pario")   # cbk has it; no stored run ran it
    assert r.status == 0 and "no matching runs" in r.stdout


def test_list_by_user_prints_the_report_table(cli, store_url):
    seed(store_url)
    r = cli("list", "--by", "user")
    assert r.status == 0, r.stderr
    lines = {line.split()[1]: line.split("│")[2:-1] for line in r.stdout.splitlines() if line.startswith("│ ")}
    cells = {user: [c.strip() for c in row] for user, row in lines.items()}
    # runs, ok, failed, cut short, running, time used, median run
    assert cells["ana"] == ["3", "2", "1", "0", "0", "2.0 h", "2.0 min"]
    assert cells["bo"] == ["2", "1", "0", "1", "0", "40.0 s", "20.0 s"]
    r = cli("list", "--by", "month", "--kernel", "randio")
    assert r.status == 0 and "2026-10" in r.stdout and "2026-11" in r.stdout and "2 runs by month" in r.stdout


def test_list_by_month_title_does_not_read_as_if_runs_were_cut_short(cli, store_url):
    """#38: all runs ok, and the title said "(cut short: interrupted ...)"."""
    seed(store_url)
    r = cli("list", "--by", "month", "--status", "ok")
    assert r.status == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].strip() == "3 runs by month"
    assert lines[-1].strip() == "cut short: interrupted by a signal or killed"  # the column's meaning, below


def test_piped_tables_are_not_cut_to_80_columns(cbk_bin, store_url):
    """In a CI log or a file rich would assume 80 columns and elide cells."""
    import os
    import sys

    seed(store_url)
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    env.update(CLUSTERBENCH_CBK=cbk_bin, CLUSTERBENCH_DB=store_url)
    out = run_bounded([sys.executable, "-m", "clusterbench", "list"], timeout=120, env=env).stdout
    assert "clusterbench run stream" in out and "…" not in out
    assert max(len(line) for line in out.splitlines()) > 80


def test_list_by_and_the_history_page_count_groups_the_same_way(cli, store_url, tmp_path):
    """docs/team.md: `list --by` prints the history page's per-group counts.
    Both now count store.list_runs rows with run_groups.summarise; the page
    had its own query and counter, no "running" column, and `list` had no
    kernel grouping. Beside seed's runs: one with two kernels, one with no
    step and no user, one of a suite, and one still running (this process's)."""
    seed(store_url)
    store = Store(store_url)
    two = store.begin_run(label="both", command="clusterbench run quick", suite="quick", user="cy")
    for position, kernel in enumerate(("seqio", "randio")):
        store.begin_step(two, position=position, name=None, kernel=kernel, params={}, launcher="local", ranks=1,
                         ranks_per_node=None)
    store.finish_run(two, "failed", "randio: no space left")
    store.finish_run(store.begin_run(label=None, command="clusterbench run null", suite=None, user=None), "ok")
    store.begin_run(label="still", command="clusterbench run stream", suite=None, user="ana")   # running
    page = tmp_path / "history.html"
    r = cli("history", "-o", str(page))
    assert r.status == 0, r.stderr
    html = page.read_text()
    for by in ("month", "user", "host", "kernel", "suite"):
        r = cli("list", "--by", by, "--width", "300")
        assert r.status == 0, r.stderr
        rows = [[c.strip() for c in line.split("│")[1:-1]] for line in r.stdout.splitlines() if line.startswith("│ ")]
        listed = {row[0]: row[1:6] for row in rows}     # runs, ok, failed, cut short, running
        body = re.search(rf'<table id="by-{by}".*?<tbody>(.*?)</tbody>', html, re.S).group(1)
        shown = {}
        for tr in re.findall(r"<tr>(.*?)</tr>", body, re.S):
            tds = [re.sub(r"<[^>]+>", "", td) for td in re.findall(r"<td[^>]*>(.*?)</td>", tr, re.S)]
            shown[tds[0]] = tds[1:6]
        assert listed == shown, by
        assert sum(int(v[0]) for v in listed.values()) >= 8, by   # every run in some group
    assert re.search(r'<td data-sort="seqio">seqio</td><td data-sort="2">2</td>', html)   # both runs of seqio
