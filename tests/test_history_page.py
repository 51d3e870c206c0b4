"""The history page, trend and prune on a generated team store (tests/history_store.py):
several users, hosts and months, failures, and a planted step change in seqio's cold read."""
from __future__ import annotations

import datetime as dt
import random
import re
import shutil
from types import SimpleNamespace

import pytest

from conftest import store_rows
from history_store import CHANGE_AT, KERNEL_AFTER, KERNEL_BEFORE, fill
from test_report_browser import dump_dom, page_requests


def rows_of(dom: str, table_id: str) -> list[str]:
    body = re.search(rf'<table id="{table_id}".*?<tbody>(.*?)</tbody>', dom, re.S).group(1)
    return re.findall(r"<tr[^>]*>.*?</tr>", body, re.S)


def cells(row: str) -> list[str]:
    return [re.sub(r"<[^>]+>", "", c) for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]


def visible(rows: list[str]) -> list[str]:
    return [r for r in rows if 'class="hidden"' not in r]


@pytest.mark.timeout(240)
def test_history_page_in_chromium_filters_sorts_and_finds_the_planted_change(cli, store_url, tmp_path):
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        pytest.skip("chromium is not installed (scripts/apt-packages.txt lists it)")
    planted = fill(store_url)
    out = tmp_path / "history.html"
    r = cli("history", "-o", str(out))
    assert r.status == 0, r.stderr
    text = out.read_text()
    # self-contained: no address to fetch anything from
    assert not re.search(r"""(src|href)\s*=\s*["'](?!#)""", text) and "<link" not in text
    assert not re.search(r"url\((?!#)", text) and "@import" not in text

    # the page's address presets the filter box (as typing does) and sorts the longest runs by duration
    page = SimpleNamespace(as_uri=lambda: out.as_uri() + "#filter=bo&sort=longest:7")
    dom = dump_dom(chromium, page, tmp_path / "profile", tmp_path / "net.json")
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert page_requests(tmp_path / "net.json") == []
    assert "CONSOLE" not in dom.stderr, dom.stderr
    html = dom.stdout
    for table in ("by-month", "by-user", "by-host", "by-kernel", "by-suite", "failures", "longest", "changes"):
        assert f'id="{table}"' in html
    # six months of runs, all in the month table; the filter (driven through the page's address, as typing
    # in the box does) left only bo's rows
    assert [cells(r)[0] for r in rows_of(html, "by-month")] == ["2026-03", "2026-04", "2026-05", "2026-06",
                                                                 "2026-07", "2026-08"]
    assert [cells(r)[0] for r in visible(rows_of(html, "by-user"))] == ["bo"]
    assert re.search(r'id="count-by-user">1 of 3 rows shown<', html)
    shown = visible(rows_of(html, "longest"))
    assert shown and all(cells(r)[2] == "bo" for r in shown)
    # sorted by duration (column 7), shortest first
    durations = [float(re.search(r'data-sort="([^"]+)"', r.split("<td")[8]).group(1)) for r in rows_of(html, "longest")]
    assert durations == sorted(durations) and len(durations) == 20
    failures = rows_of(html, "failures")
    assert sorted(int(cells(r)[0]) for r in failures) == planted["failed"]
    assert all("No space left on device" in cells(r)[8] for r in failures)
    # the planted change, and no other
    (change,) = rows_of(html, "changes")
    figure, date, between, _, step, _, env = cells(change)
    assert figure.startswith("seqio:read:cold") and between.endswith(f"run {planted['change_run']}")
    assert dt.date.fromisoformat(date) >= CHANGE_AT.date() and float(step.split()[0]) == pytest.approx(-30, abs=5)
    assert f"kernel release: {KERNEL_BEFORE} → {KERNEL_AFTER}" in env
    assert html.count('class="change"') == 1    # one dashed line in the plots


@pytest.mark.both_stores
@pytest.mark.timeout(120)
def test_history_counts_match_the_store(store_url):
    from clusterbench.report.history_page import load_runs, summarise
    from clusterbench.store import Store

    planted = fill(store_url)
    store = Store(store_url)
    history = load_runs(store, None)
    assert len(history.runs) == len(history.rows) == planted["runs"]
    by_user = {g.key: g for g in summarise(history.rows, "user", history.details)}
    for user, n, failed in store_rows(store_url, "select r.user, count(*), sum(case when status = 'failed' "
                                                 "then 1 else 0 end) from runs r group by r.user"):
        assert (by_user[user].runs, by_user[user].failed) == (n, failed)
    by_kernel = {g.key: g for g in summarise(history.rows, "kernel", history.details)}
    ((seqio_bytes,),) = store_rows(store_url, "select sum(s.bytes) from samples s join steps t on t.id = s.step_id "
                                              "where t.kernel = 'seqio' and s.phase = 'write'")
    assert by_kernel["seqio"].bytes_written == seqio_bytes and by_kernel["mpi"].bytes_written == 0
    since = load_runs(store, dt.datetime(2026, 7, 1, tzinfo=dt.timezone.utc)).runs
    assert since and all(r.started.month >= 7 for r in since)
    assert store.size_bytes() > 10_000


@pytest.mark.both_stores
@pytest.mark.timeout(120)
def test_trend_prints_the_series_and_the_planted_change(cli, store_url):
    planted = fill(store_url)
    r = cli("trend", "seqio:read:cold")
    assert r.status == 0, r.stderr
    assert "1 change point" in r.stdout and "1 change points" not in r.stdout
    assert f"-> run {planted['change_run']})" in r.stdout
    assert f"kernel release: {KERNEL_BEFORE} -> {KERNEL_AFTER}" in r.stdout and "Pettitt" in r.stdout
    # the generated environments hold the keys the capture stores: a report of one says its OS and kernel
    # (with the old os.pretty_name and os.kernel it said "OS not available; kernel not available")
    r = cli("report", str(planted["change_run"]), "--format", "md", "-o", "-")
    assert r.status == 0 and f"Debian GNU/Linux 12, kernel {KERNEL_AFTER}" in r.stdout, r.stdout + r.stderr
    r = cli("trend", "seqio:write:fsync", "--param", "size=1m")
    assert r.status == 0 and "0 change points" in r.stdout
    # the store measured the figure: the line names the filters that left no run, or it read as if it never had
    assert "no run that ended ok measured seqio:read (host node02) in " in \
        cli("trend", "seqio:read", "--host", "node02").stdout
    assert "no run that ended ok measured seqio:read (label seqio-ana, size=4m, since 2026-03-02 08:30) in " in \
        cli("trend", "seqio:read", "--param", "size=4m", "--label", "seqio-ana", "--since", "2026-03-02 08:30").stdout
    page = cli("history", "-o", "-", "--since", "2026-06-01 12:00").stdout
    assert "runs since 2026-06-01 12:00," in page   # not "since 2026-06-01": that day's morning is left out
    for bad in ("seqio", "seqio::cold", "a:b:c:d"):
        r = cli("trend", bad)
        assert r.status == 2 and r.stderr.count("\n") == 1 and "KERNEL:PHASE" in r.stderr


@pytest.mark.both_stores
@pytest.mark.timeout(120)
def test_trend_of_a_figure_the_store_never_measured_is_one_line_and_exit_2(cli, store_url):
    """`trend nope:x` exited 0 with "no run that ended ok measured nope:x", as
    if the figure existed and had no runs yet; show, compare, report and
    export refuse a run that does not exist with one line and exit 2."""
    fill(store_url)
    for figure, says, names in (("nope:read", "no such kernel: 'nope'", ("seqio", "randio", "null")),
                                ("seqio:x", "seqio never measured a phase 'x'", ("read", "write")),
                                ("seqio:read:x", "seqio:read never measured a mode 'x'", ("cold",))):
        r = cli("trend", figure)
        assert r.status == 2 and r.stderr.count("\n") == 1, (figure, r.stderr)
        assert says in r.stderr and all(n in r.stderr for n in names), (figure, r.stderr)
        assert "Traceback" not in r.stderr and r.stdout == ""
    # a figure that exists: filters that leave no run are an empty answer, as list's are
    r = cli("trend", "seqio:read:cold", "--since", "2099-01-01")
    assert r.status == 0 and "no run that ended ok measured seqio:read:cold" in r.stdout, r.stderr
    # a kernel cbk has and no run in the store measured (an empty store too): nothing to trend yet
    r = cli("trend", "null:null")
    assert r.status == 0 and "no run that ended ok measured null:null" in r.stdout, r.stderr


@pytest.mark.timeout(120)
def test_trend_writes_the_interval_as_show_does_and_names_every_column(cli, store_url):
    """#38: trend said "95 % CI" where show says "(94%)" for the same interval,
    left its last column unnamed and said "1 runs"."""
    fill(store_url)
    r = cli("trend", "seqio:read:cold")
    assert r.status == 0, r.stderr
    assert "95 % CI" not in r.stdout and "CI of median" in r.stdout
    assert re.search(r"│ [\d,.]+\.\.[\d,.]+ \(\d+%\) │", r.stdout)
    header = next(line for line in r.stdout.splitlines() if "started (UTC)" in line)
    assert [c.strip() for c in header.split("┃")[1:-1]][-1] == "change"
    one = cli("trend", "seqio:read:cold", "--since", "2026-08-20")
    assert one.status == 0 and ": 1 run, " in one.stdout and "1 runs" not in one.stdout


@pytest.mark.both_stores
@pytest.mark.timeout(120)
def test_prune_deletes_old_runs_keeps_labels_on_request_and_dry_runs(cli, store_url):
    fill(store_url)
    old = "started < '2026-05-01'"
    ((n_old,),) = store_rows(store_url, f"select count(*) from runs where {old}")
    ((n_old_unlabelled,),) = store_rows(store_url, f"select count(*) from runs where {old} and label is null")
    ((n_all,),) = store_rows(store_url, "select count(*) from runs")
    ((samples_old,),) = store_rows(store_url, "select count(*) from samples s join steps t on t.id = s.step_id "
                                              f"join runs r on r.id = t.run_id where r.{old}")
    r = cli("prune", "--before", "2026-05-01", "--dry-run")
    assert r.status == 0 and f"would delete {n_old} runs, {n_old} steps, {samples_old} samples" in r.stdout
    assert store_rows(store_url, "select count(*) from runs") == [(n_all,)]
    r = cli("prune", "--before", "2026-05-01", "--keep-labels")
    assert r.status == 0 and f"deleted {n_old_unlabelled} runs" in r.stdout
    assert store_rows(store_url, f"select count(*) from runs where {old}") == [(n_old - n_old_unlabelled,)]
    assert cli("prune", "--before", "2026-05-01").status == 0
    assert store_rows(store_url, f"select count(*) from runs where {old}") == [(0,)]
    assert store_rows(store_url, "select count(*) from runs") == [(n_all - n_old,)]
    assert store_rows(store_url, "select count(*) from steps where run_id not in (select id from runs)") == [(0,)]
    assert store_rows(store_url, "select count(*) from samples where step_id not in (select id from steps)") == [(0,)]
    # every environment left is still some run's
    assert store_rows(store_url, "select count(*) from environments where hash not in "
                                 "(select environment_hash from run_hosts)") == [(0,)]
    r = cli("prune", "--before", "last week")
    assert r.status == 2 and "last week" in r.stderr


@pytest.mark.both_stores
@pytest.mark.timeout(120)
def test_prune_deletes_the_runs_named_and_nothing_else(cli, store_url):
    """A run measured wrong, or a file imported twice before import refused
    it, could only go with everything older than it (--before)."""
    fill(store_url)
    ((n_all,),) = store_rows(store_url, "select count(*) from runs")
    (label, n_label), = store_rows(store_url, "select label, count(*) from runs where label is not null "
                                              "group by label order by count(*), label limit 1")
    ((first,),) = store_rows(store_url, "select min(id) from runs where label is null")
    r = cli("prune", "--run", str(first), "--run", label, "--dry-run")
    assert r.status == 0 and f"would delete {1 + n_label} runs" in r.stdout, r.stdout
    assert store_rows(store_url, "select count(*) from runs") == [(n_all,)]
    assert cli("prune", "--run", str(first), "--run", label).status == 0
    assert store_rows(store_url, "select count(*) from runs") == [(n_all - 1 - n_label,)]
    assert store_rows(store_url, f"select count(*) from runs where id = {first} or label = '{label}'") == [(0,)]
    assert store_rows(store_url, "select count(*) from samples where step_id not in (select id from steps)") == [(0,)]
    for args, message in ((("--run", "no-such-label"), "no run with id or label 'no-such-label'"),
                          ((), "give --before DATE"), (("--run", "1", "--before", "2026-01-01"), "one of them")):
        r = cli("prune", *args)
        assert r.status == 2 and message in r.stderr, r.stderr
    assert store_rows(store_url, "select count(*) from runs") == [(n_all - 1 - n_label,)]


def test_pettitt_finds_a_step_ignores_noise_and_a_single_wild_run():
    from clusterbench.analysis.trend_series import change_points

    rnd = random.Random(7)
    step = [100 + rnd.gauss(0, 2) for _ in range(15)] + [85 + rnd.gauss(0, 2) for _ in range(15)]
    assert [i for i, _ in change_points(step)] == [15]
    two = step + [110 + rnd.gauss(0, 2) for _ in range(15)]
    assert [i for i, _ in change_points(two)] == [15, 30]
    flat = [100 + rnd.gauss(0, 2) for _ in range(40)]
    flat[20] = 500.0   # one wild run is not a change
    assert change_points(flat) == []
    assert change_points([1.0, 2.0, 3.0]) == []   # too short for MIN_SEGMENT on both sides
    # the last run before a clean step is the slowest of its side: ranks alone (K's argmax) would date the
    # change one run early, as they cannot tell which side that run belongs to
    edge = [101, 103, 100, 102, 104, 101, 103, 102, 101, 100, 104, 102, 103, 99] + [70, 71, 69, 72, 70, 71, 70, 69]
    assert [i for i, _ in change_points(edge)] == [14]


@pytest.mark.timeout(120)
def test_history_page_prints_figures_as_the_reports_do_never_in_exponent_notation(cli, store_url, tmp_path):
    """randio's 20,000 IOPS read "2e+04" on the plot's axis, "2.01e+04 IOPS" in
    a point's title: the page now prints figures by output/figure_digits.number."""
    fill(store_url)
    out = tmp_path / "history.html"
    assert cli("history", "-o", str(out)).status == 0
    text = out.read_text()
    assert not re.search(r"\de[+-]\d", text)
    titles = re.findall(r"<title>run \d+ [\d-]+: ([^<]+) IOPS</title>", text)
    assert titles and all(re.fullmatch(r"\d\d,\d{3}", t) for t in titles), titles[:5]


@pytest.mark.timeout(120)
def test_trend_and_the_history_page_say_what_changed_in_words_as_compare_does(cli, store_url, tmp_path):
    """The environment lines under a change point printed the stored key and
    Python's text of each value: "memory.total_bytes: 17179869184 ->
    34359738368", and "tuned.profile: None -> latency-performance" for a
    key one side lacks, where compare says "memory, total" in binary units.
    They now say the key in words, each value as compare does, and
    "(absent)" for a side without the key."""
    from clusterbench import environment
    from clusterbench.store import Store

    store = Store(store_url)
    before = {"capture.schema": 1, "host.name": "node01", "kernel.release": "6.1.0-18-amd64",
              "memory.total_bytes": 16 * 2**30}
    after = {**before, "kernel.release": "6.1.0-21-amd64", "memory.total_bytes": 32 * 2**30,
             "tuned.profile": "latency-performance"}
    for i in range(20):
        env = before if i < 10 else after
        env_hash = environment.snapshot_hash(env)
        store.add_environment(env, env_hash)
        run_id = store.begin_run(label=None, command="clusterbench run seqio", suite=None)
        store.link_host(run_id, "node01", env_hash)
        step = store.begin_step(run_id, position=0, name=None, kernel="seqio", params={}, launcher="local",
                                ranks=1, ranks_per_node=None)
        for rep in range(3):
            store.add_sample(step, {"repetition": rep, "phase": "read", "mode": "cold",
                                    "rate": (1000.0 if i < 10 else 700.0) + i % 3 + rep, "rate_unit": "MiB/s"}, [])
        store.finish_step(step, "ok")
        store.finish_run(run_id, "ok")
    r = cli("trend", "seqio:read:cold")
    assert r.status == 0 and "1 change point" in r.stdout, r.stdout + r.stderr
    changed = r.stdout.split("(run 10 -> run 11)")[1].splitlines()[1:4]
    compared = cli("compare", "10", "11").stdout
    assert "16 GiB" in compared and "memory" in compared and "memory.total_bytes" not in compared   # compare's words
    assert [line.strip() for line in changed] == [   # the tuned profile first, as every diff lists it
        "tuned profile: (absent) -> latency-performance", "kernel release: 6.1.0-18-amd64 -> 6.1.0-21-amd64",
        "memory: 16 GiB -> 32 GiB"], r.stdout
    assert cli("history", "-o", str(tmp_path / "h.html")).status == 0
    page = (tmp_path / "h.html").read_text()
    assert ("tuned profile: (absent) → latency-performance; kernel release: 6.1.0-18-amd64 → 6.1.0-21-amd64; "
            "memory: 16 GiB → 32 GiB") in page, page


def test_a_run_whose_end_is_before_its_start_has_no_duration_anywhere(cli, store_url):
    """A run during which the clock stepped back (or an imported file's
    dates) ends before it starts: list said "-3600.0 s", and list --by and
    the history page took an hour off its group's time used and median run.
    show already gave it no time; now list, list --by and the history page
    agree: no duration, and none counted."""
    from clusterbench.store import Store

    store = Store(store_url)
    back = store.begin_run(label="back", command="clusterbench run null", suite=None)
    store.finish_run(back, "ok")
    store.rows.update("runs", {"id": back}, {"finished": store.run(back).started - dt.timedelta(hours=1)})
    listed = cli("list").stdout
    assert re.search(r"│ back +│ ok +│ [0-9-]+ [0-9:]+ +│ - +│", listed), listed
    by_month = cli("list", "--by", "month").stdout
    assert "3600" not in by_month and re.search(r"│ +1 │ +1 │ +0 │ +0 │ +0 │ +- │ +- │", by_month), by_month
    page = cli("history", "-o", "-").stdout
    assert "3600" not in page and "-1.0 h" not in page and "-60.0 min" not in page
    assert "took" not in cli("show", str(back)).stdout


@pytest.mark.timeout(120)
def test_a_change_from_a_median_of_0_is_said_so_not_nan(cli, store_url):
    """A figure whose runs read 0 (a rate that measured nothing) and then
    did not: the change point's change divided by 0, and trend and the
    history page printed "+nan %". They say "from a median of 0", as the
    regression gate does; the page sorts it above every ratio."""
    from clusterbench import environment
    from clusterbench.store import Store

    store = Store(store_url)
    env = {"host.name": "node01"}
    store.add_environment(env, environment.snapshot_hash(env))
    for i in range(20):
        run_id = store.begin_run(label=None, command="clusterbench run null", suite=None)
        store.link_host(run_id, "node01", environment.snapshot_hash(env))
        step = store.begin_step(run_id, position=0, name=None, kernel="null", params={}, launcher="local", ranks=1,
                                ranks_per_node=None)
        for rep in range(3):
            store.add_sample(step, {"repetition": rep, "phase": "null", "mode": "n/a",
                                    "rate": 0.0 if i < 10 else 100.0 + rep, "rate_unit": "MiB/s"}, [])
        store.finish_step(step, "ok")
        store.finish_run(run_id, "ok")
    r = cli("trend", "null:null")
    assert r.status == 0 and "1 change point" in r.stdout, r.stdout + r.stderr
    assert "nan" not in r.stdout and "median 0 -> 101 MiB/s (from a median of 0), p = " in r.stdout, r.stdout
    page = cli("history", "-o", "-").stdout
    assert "nan %" not in page and 'data-sort="nan"' not in page
    assert '<td data-sort="Infinity">from a median of 0</td>' in page
