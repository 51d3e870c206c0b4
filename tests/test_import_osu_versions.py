"""OSU micro-benchmarks 5.5, 5.9, 6.2, 7.0, 7.1 and 7.2, the versions between the 5.3 and 7.4
fixtures that sites run: every figure each file printed is what the import reads
(tests/fixtures/README says how each file was made). 7.1 adds "# Datatype: MPI_CHAR." under the
heading, 7.0 on print osu_mbw_mr's title twice, 5.9 on add the -c Validation column."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from clusterbench.importers.import_runs import parse_file

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "import"
VERSIONS = ("5.5", "5.9", "6.2", "7.0", "7.1", "7.2")
OPS = {"latency": "pingpong", "bw": "bw", "bibw": "bibw", "mbw_mr": "bw", "allreduce": "allreduce"}
# the plain runs of each tool; -D and -T runs are tested on their own below
NAMES = sorted(p.name for p in FIXTURES.glob("osu-*.txt")
               if p.name.split("-")[1] in VERSIONS and not any(k in p.name for k in ("-ddt", "-types", "-float")))


def printed_rows(name: str) -> list[list[str]]:
    """The table's rows as the file printed them: every line that starts with a size."""
    return [line.split() for line in (FIXTURES / name).read_text().splitlines() if re.match(r"\d", line)]


def test_every_tool_of_every_version_has_its_real_file():
    for version in VERSIONS:
        for tool in OPS:
            assert (FIXTURES / f"osu-{version}-{tool}.txt").is_file()


@pytest.mark.parametrize("name", NAMES)
def test_every_figure_read_is_the_one_the_file_printed(name):
    version, tool = name.split("-")[1], name.split("-")[2].removesuffix(".txt")
    (run,) = parse_file(str(FIXTURES / name))
    (step,) = run.steps
    if tool == "allreduce" and version in ("7.1", "7.2"):   # MPI_CHARs summed: not the kernel's float sum
        assert (step.kernel, step.params) == ("osu", {"test": "Allreduce Latency", "datatype": "MPI_CHAR"})
    else:
        assert (run.tool, run.version, step.kernel, step.params["op"]) == ("OSU", version, "mpi", OPS[tool])
    rows = printed_rows(name)
    assert [s.size_bytes for s in step.samples] == [int(r[0]) for r in rows]
    for s, row in zip(step.samples, rows):
        printed = float(row[1])
        if s.unit == "MiB/s":   # OSU's MB/s are 10^6 bytes/s
            assert s.record["rate_decimal"] == printed and s.value == pytest.approx(printed * 1e6 / 2**20)
        else:
            assert (s.unit, s.value) == ("us", printed)
    if tool == "mbw_mr":
        assert [s.record["messages_per_s"] for s in step.samples] == [float(r[2]) for r in rows]
        assert step.params["window"] == "64" and step.ranks == 2


@pytest.mark.parametrize("version", VERSIONS)
def test_full_allreduce_keeps_min_max_and_iterations_as_printed(version):
    name = f"osu-{version}-allreduce-full.txt"
    (run,) = parse_file(str(FIXTURES / name))
    got = [(s.size_bytes, s.value, s.record["t_min_us"], s.record["t_max_us"], s.record["iterations"])
           for s in run.steps[0].samples]
    assert got == [(int(r[0]), float(r[1]), float(r[2]), float(r[3]), int(r[4])) for r in printed_rows(name)]


@pytest.mark.parametrize("name", [n for n in NAMES if "-validate" in n])
def test_validated_rows_that_passed_are_all_taken(name):
    rows = printed_rows(name)
    assert rows and all(r[-1] == "Pass" for r in rows)
    (run,) = parse_file(str(FIXTURES / name))
    assert len(run.steps[0].samples) == len(rows) and not any("validation" in n for n in run.notes)


@pytest.mark.parametrize("version", ["7.0", "7.1", "7.2"])
def test_mbw_mr_title_printed_twice_by_7x_is_one_test(version):
    # 7.x's osu_mbw_mr prints its title line twice before the table: one step, not a second run
    text = (FIXTURES / f"osu-{version}-mbw_mr.txt").read_text()
    assert text.count(f"# OSU MPI Multiple Bandwidth / Message Rate Test v{version}") == 2
    runs = parse_file(str(FIXTURES / f"osu-{version}-mbw_mr.txt"))
    assert len(runs) == 1 and len(runs[0].steps) == 1


def test_derived_datatype_runs_are_osu_steps_with_the_bytes_they_sent():
    """7.x's -D packs each message as a derived datatype and prints the bytes it sent ("Transmit
    Size"): osu_latency -D vect:2:1 was stored as the mpi kernel's pingpong of Size contiguous bytes,
    compared with plain runs as one measurement, and its Transmit Size column was dropped."""
    (run,) = parse_file(str(FIXTURES / "osu-7.2-latency-ddt.txt"))
    (step,) = run.steps
    assert (step.kernel, step.params, step.ranks) == (
        "osu", {"test": "Latency", "derived-datatype": "block_length 1, stride 2"}, 2)
    rows = printed_rows("osu-7.2-latency-ddt.txt")
    assert [(s.size_bytes, s.value, s.record["transmit_bytes"]) for s in step.samples] == \
        [(int(r[0]), float(r[1]), int(r[2])) for r in rows]
    # a collective prints no layout line; still not the kernel's bcast
    (run,) = parse_file(str(FIXTURES / "osu-7.2-bcast-ddt.txt"))
    (step,) = run.steps
    assert (step.kernel, step.params) == ("osu", {"test": "Broadcast Latency",
                                                  "derived-datatype": "layout not printed"})
    rows = printed_rows("osu-7.2-bcast-ddt.txt")
    assert [(s.size_bytes, s.value, s.record["transmit_bytes"]) for s in step.samples] == \
        [(int(r[0]), float(r[1]), int(r[2])) for r in rows]


def tables_by_datatype(name: str) -> dict[str, list[tuple[int, float]]]:
    """Each "# Datatype: X." table's rows (size, figure) as the file printed them."""
    tables: dict[str, list[tuple[int, float]]] = {}
    current = None
    for line in (FIXTURES / name).read_text().splitlines():
        typed = re.match(r"# Datatype: (\w+)\.", line)
        if typed:
            current = tables.setdefault(typed.group(1), [])
        elif re.match(r"\d", line):
            current.append((int(line.split()[0]), float(line.split()[1])))
    return tables


@pytest.mark.parametrize("name,kernel_datatype,op,title", [
    ("osu-7.2-allreduce-all-types.txt", "MPI_FLOAT", "allreduce", "Allreduce Latency"),
    ("osu-7.2-latency-all-types.txt", "MPI_CHAR", "pingpong", "Latency"),
])
def test_each_datatype_table_of_dash_t_all_is_a_step_of_its_own(name, kernel_datatype, op, title):
    """7.x -T all prints a table per datatype under one title: the three were read as one step, every
    row tagged with the first datatype, each size three times over. The kernel's op is the table of
    the datatype it moves (allreduce sums MPI_FLOATs; pingpong moves bytes); the others are osu steps
    named by their datatype."""
    (run,) = parse_file(str(FIXTURES / name))
    tables = tables_by_datatype(name)
    assert len(run.steps) == len(tables) == 3
    for step, (datatype, rows) in zip(run.steps, tables.items()):
        if datatype == kernel_datatype:
            assert (step.kernel, step.params) == ("mpi", {"op": op})
        else:
            assert (step.kernel, step.params) == ("osu", {"test": title, "datatype": datatype})
        assert [(s.size_bytes, s.value) for s in step.samples] == rows
        assert {s.record["element_type"] for s in step.samples} == {datatype}


def test_allreduce_is_the_kernels_only_where_osu_summed_floats():
    # the mpi kernel's allreduce sums MPI_FLOATs, as OSU did before 7.1; 7.1 on sum MPI_CHARs unless -T says
    (floats,) = parse_file(str(FIXTURES / "osu-7.2-allreduce-float.txt"))
    assert (floats.steps[0].kernel, floats.steps[0].params) == ("mpi", {"op": "allreduce"})
    (chars,) = parse_file(str(FIXTURES / "osu-7.2-allreduce.txt"))
    assert chars.steps[0].kernel == "osu" and chars.steps[0].samples[0].phase == "allreduce-latency"
    (before,) = parse_file(str(FIXTURES / "osu-7.0-allreduce.txt"))   # no Datatype line: floats
    assert (before.steps[0].kernel, before.steps[0].params) == ("mpi", {"op": "allreduce"})
