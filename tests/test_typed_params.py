"""Typed parameters from the plan on (#34 item 1): each value read once by
its type in `cbk --describe` and stored in one canonical text, and
Sample.key() as the one "same measurement" of compare and trend."""
from __future__ import annotations

import json
import subprocess

import pytest
import sqlalchemy as sa

from conftest import as_json, store_rows

from clusterbench import catalogue
from clusterbench.run.plan import expand
from clusterbench.results.params import canonical, typed
from clusterbench.results.sizes import parse_size, size_arg

MPI_FAST = ("--iterations=10", "--warmup=2", "--min-iterations=2", "--repeat", "2", "--quiet")


@pytest.mark.parametrize("text", ["1m", "1024k", "1048576", "1M", "1MiB", "1024KB", "1.0m", " 1m "])
def test_every_spelling_of_a_mebibyte_has_one_canonical_text(text):
    null = catalogue.load().kernel("null")
    assert canonical(null, {"bytes": text}) == {"bytes": "1m"}


def test_canonical_text_by_type_and_back():
    cat = catalogue.load()
    mpi, null = cat.kernel("mpi"), cat.kernel("null")
    got = canonical(mpi, {"sizes": "8, 1024K,1m", "iterations": "+010", "op": "pingpong, bw", "max-size": "4096k"})
    assert got == {"sizes": "8,1m,1m", "iterations": "10", "op": "pingpong,bw", "max-size": "4m"}
    assert canonical(mpi, {"sizes": "powers-of-two"}) == {"sizes": "powers-of-two"}   # the keyword stays
    assert canonical(null, {"seconds": "0.50", "bytes": "1.5g"}) == {"seconds": "0.5", "bytes": "1536m"}
    assert canonical(null, {"seconds": "2.0"}) == {"seconds": "2"}
    # a value its type cannot read is left for cbk --check to refuse, in its own words
    assert canonical(null, {"bytes": "lots"}) == {"bytes": "lots"}
    assert typed(mpi.param("sizes"), "8,1m") == [8, 1 << 20]
    assert typed(null.param("bytes"), "1m") == 1 << 20


def test_the_one_parser_reads_sizes_as_cbk_does(cbk_bin):
    """sizes.parse_size and cbk_parse_size (C) agree on what is a size and
    on its byte count (null reports the bytes it was given)."""
    for text in ("1m", "1024k", "4KiB", "1.5g", "8", "1.3", "1.5x", "k"):
        r = subprocess.run([cbk_bin, "null", f"--bytes={text}", "--repetitions=1"], capture_output=True,
                           text=True, timeout=30)
        n = parse_size(text)
        if n is None:
            assert r.returncode == 2, text
            continue
        assert r.returncode == 0, (text, r.stderr)
        rec = next(json.loads(line) for line in r.stdout.splitlines() if '"measurement"' in line)
        assert rec["bytes"] == n, text
    assert [size_arg(n) for n in (8, 1000, 1024, 1 << 20, 3 << 29, 1 << 40)] == \
        ["8", "1000", "1k", "1m", "1536m", "1t"]


def test_a_sweep_of_two_spellings_of_one_size_is_one_step():
    steps = expand("null", {"bytes": ["1m", "1024k", "2m"]}, repeat=1)
    assert [s.params["bytes"] for s in steps] == ["1m", "2m"]


def test_compare_matches_1m_against_1024k_as_the_same_measurement(cli, store_url):
    assert cli("run", "null", "--bytes=1m", "--repeat", "3", "--label", "a", "--quiet").status == 0
    assert cli("run", "null", "--bytes=1024k", "--repeat", "3", "--label", "b", "--quiet").status == 0
    r = cli("compare", "a", "b", "--format", "json")
    assert r.status == 0, r.stderr   # before: "no measurement with equal kernel and parameters", exit 2
    points = json.loads(r.stdout)["points"]
    assert points and all(p["kernel"] == "null" and p["params"]["bytes"] == "1m" for p in points), points
    assert store_rows(store_url, "select params from steps") == [('{"bytes": "1m"}',)] * 2


@pytest.mark.timeout(300)
def test_trend_over_a_size_sweep_gives_one_series_per_message_size(cli, store_url, mpiexec):
    """Two `run mpi --op=pingpong --sizes=8,1m` runs: an 8 B and a 1 MiB
    series of two points each, not one series mixing the two latencies."""
    for _ in range(2):
        r = cli("run", "mpi", "--np", "2", "--op=pingpong", "--sizes=8,1m", *MPI_FAST)
        assert r.status == 0, r.stderr
    from clusterbench.analysis import trend_series
    from clusterbench.store import Store

    found = trend_series.load(Store(store_url), "mpi", "pingpong")
    assert sorted(s.key.size_bytes for s in found) == [8, 1 << 20]
    assert all(len(s.points) == 2 and s.points[0].n == 2 for s in found)
    # each series holds its own size's latencies: its first point is the
    # median of run 1's samples of that size (not compared with each other:
    # a loaded machine once gave an 8 B pingpong a 2.9 ms repetition)
    import statistics

    for series in found:
        values = [v for v, rec in store_rows(
            store_url, "select m.value, m.record from samples m join steps s on m.step_id = s.id "
                       "where s.run_id = 1")
            if as_json(rec).get("size_bytes") == series.key.size_bytes]
        assert len(values) == 2 and series.points[0].median == pytest.approx(statistics.median(values))

    r = cli("trend", "mpi:pingpong")
    assert r.status == 0, r.stderr
    assert "mpi:pingpong:library 8 B" in r.stdout and "mpi:pingpong:library 1 MiB" in r.stdout
    for given in ("sizes=1m", "sizes=1048576", "sizes=1024k"):   # the help's example, in every spelling
        r = cli("trend", "mpi:pingpong", "--param", given)
        assert r.status == 0 and "mpi:pingpong:library 1 MiB" in r.stdout and "8 B" not in r.stdout, (given, r.stdout)
    r = cli("trend", "mpi:pingpong", "--param", "size=1m")
    assert r.status == 2 and "no parameter size (parameters: " in r.stderr and "sizes" in r.stderr, r.stderr


@pytest.mark.parametrize("param, message", [
    ("sizes=xyz", "--param sizes=xyz: not a list of sizes of --sizes"),
    ("iterations=ten", "--param iterations=ten: not a whole number of --iterations"),
    ("max-size=1q", "--param max-size=1q: not a size (e.g. 4k, 1g) of --max-size"),
])
def test_trend_refuses_a_parameter_value_its_type_cannot_read(param, message):
    """Matched as text, `--param sizes=xyz` matched no step and trend said no
    run measured the figure, when the value was the mistake."""
    from clusterbench.analysis.trend_series import wanted_params
    from clusterbench.errors import BadInput

    with pytest.raises(BadInput) as e:
        wanted_params("mpi", dict([param.split("=")]))
    assert e.value.message.startswith(message), e.value.message
    assert wanted_params("mpi", {"sizes": "powers-of-two", "iterations": "+010"}) == (
        {"sizes": "powers-of-two", "iterations": "10"}, None)


def test_the_trend_help_example_names_a_real_parameter(cli):
    r = cli("trend", "--help")
    assert "--param sizes=1m" in r.stdout and "--param size=1m" not in r.stdout


@pytest.mark.both_stores
def test_a_store_written_before_canonical_parameters_is_migrated(store_url):
    """A 0004 store with parameters as typed: after opening, every parameter
    a kernel describes is canonical; an undescribed kernel's are untouched."""
    from alembic import command
    from alembic.config import Config

    from clusterbench.store import Store
    from clusterbench.store.revisions import MIGRATIONS

    engine = sa.create_engine(store_url)
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    old = [("null", {"bytes": "1024k", "seconds": "0.50"}), ("null", {"bytes": "1m"}),
           ("mpi", {"sizes": "8,1M", "op": "pingpong", "iterations": "010"}), ("fio", {"bs": "4KiB"})]
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "0004")
        conn.execute(sa.text("insert into runs (label, started, status) values ('old', '2025-01-01', 'ok')"))
        for i, (kernel, params) in enumerate(old):
            conn.execute(sa.text("insert into steps (run_id, position, kernel, params, launcher, ranks, status, "
                                 "started) values (1, :i, :k, :p, 'local', 1, 'ok', '2025-01-01')"),
                         {"i": i, "k": kernel, "p": json.dumps(params)})
    store = Store(store_url)
    assert [st.params for st in store.steps_of(1)] == [
        {"bytes": "1m", "seconds": "0.5"}, {"bytes": "1m"}, {"sizes": "8,1m", "op": "pingpong", "iterations": "10"},
        {"bs": "4KiB"}]
    assert store_rows(store_url, "select version_num from alembic_version") == [("0012",)]


def test_a_parameter_given_twice_is_refused_by_cbk_and_by_run(cbk_bin, cli, store_url):
    """The last of two values won in silence in cbk and in run: `--bytes=1m
    ... --bytes=1g` measured what the user may not have read last."""
    p = subprocess.run([cbk_bin, "null", "--bytes=1m", "--seconds=0.001", "--bytes=1g"], capture_output=True,
                       text=True, timeout=30)
    assert p.returncode == 2 and p.stdout == ""
    assert json.loads(p.stderr)["message"].endswith("--bytes given twice (1m, then 1g): give it once")
    r = cli("run", "null", "--bytes=1m", "--seconds", "0.001", "--bytes", "1g")
    assert r.status == 2 and "--bytes given twice (1m, then 1g): give it once" in r.stderr
    assert cli("run", "null", "--bytes=1m,1g", "--seconds=0.001", "--repeat", "1", "--quiet").status == 0   # a sweep
    assert store_rows(store_url, "select id from runs") == [(1,)]   # the refused run stored nothing
