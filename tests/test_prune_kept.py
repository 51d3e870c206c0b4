"""What prune says it kept and why: `prune --run L --keep-labels` said
"1 still running, kept" of a labelled run that had finished long ago (one
count stood for both reasons a named run is kept)."""
from __future__ import annotations


def _store(url: str) -> dict[str, int]:
    from clusterbench.store import Store

    store = Store(url)
    ids = {}
    for name, label in (("labelled", "base"), ("plain", None), ("running", "base")):
        ids[name] = store.begin_run(label=label, command="clusterbench run null", suite=None, user="t")
        if name != "running":
            store.finish_run(ids[name], "ok")
    return ids


def test_prune_says_a_labelled_run_was_kept_for_its_label_not_as_running(cli, store_url):
    ids = _store(store_url)
    out = cli("prune", "--run", str(ids["labelled"]), "--keep-labels", "--dry-run")
    assert out.status == 0, out.stderr
    assert out.stdout.startswith("would delete 0 runs, "), out.stdout
    assert "; 1 labelled run kept" in out.stdout and "running" not in out.stdout, out.stdout


def test_prune_tells_labelled_and_running_runs_apart(cli, store_url):
    ids = _store(store_url)
    out = cli("prune", "--run", "base", "--run", str(ids["plain"]), "--keep-labels")
    assert out.status == 0, out.stderr
    assert out.stdout.startswith("deleted 1 run, "), out.stdout
    assert "; 1 labelled run kept; 1 run still running, kept" in out.stdout, out.stdout
    listed = cli("list").stdout
    assert "base" in listed   # both base runs are still there
    gone = cli("show", str(ids["plain"]))
    assert gone.status == 2 and "no run" in gone.stderr.lower(), gone


def test_prune_before_a_date_in_the_future_is_refused_and_deletes_nothing(cli, store_url):
    """--before 2999-01 (a typo'd year) deleted every run, as any date after the newest run does."""
    import datetime as dt

    _store(store_url)
    out = cli("prune", "--before", "2999-01")
    assert out.status == 2 and "--before 2999-01-01 is in the future" in out.stderr, out.stderr
    tomorrow = (dt.datetime.now(dt.timezone.utc) + dt.timedelta(days=1)).strftime("%Y-%m-%d")
    taken = cli("prune", "--before", tomorrow, "--dry-run")   # every run of today: a date still taken
    assert taken.status == 0 and taken.stdout.startswith("would delete 2 runs"), taken.stdout + taken.stderr


def test_prune_before_a_time_of_day_says_the_time_not_only_its_day(cli, store_url):
    """--before '2026-12-07 12:30' said "would delete 2 runs ... started
    before 2026-12-07": read as keeping that day's runs, which it deletes."""
    import datetime as dt

    _store(store_url)
    soon = dt.datetime.now(dt.timezone.utc).replace(second=0, microsecond=0) + dt.timedelta(minutes=2)
    soon += dt.timedelta(minutes=1) if (soon.hour, soon.minute) == (0, 0) else dt.timedelta()   # midnight: a day
    out = cli("prune", "--before", f"{soon:%Y-%m-%d %H:%M}", "--dry-run")
    assert out.status == 0 and out.stdout.startswith("would delete 2 runs"), out.stdout + out.stderr
    assert f"started before {soon:%Y-%m-%d %H:%M} (UTC) from" in out.stdout, out.stdout
    day = cli("prune", "--before", "2020-01-01", "--dry-run")
    assert "started before 2020-01-01 (UTC) from" in day.stdout, day.stdout
