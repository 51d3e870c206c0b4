"""The mpi kernel under real mpiexec (2, 3 and 4 ranks, oversubscribed on a
small machine), and the library algorithm selection of mpi_tuning."""
from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import time
import tomllib
from pathlib import Path

import pytest

from conftest import run_bounded
import sqlalchemy as sa

from clusterbench.launch import mpi_tuning
from clusterbench import suites
from clusterbench.errors import BadInput
from clusterbench.launch.messages import waits_named
from clusterbench.launch.mpiexec import flavour

LATENCY_OPS = ["pingpong", "allreduce", "reduce", "alltoall", "allgather", "bcast", "barrier"]
BANDWIDTH_OPS = ["bw", "bibw"]
COLLECTIVES_CHECKED = ["allreduce", "reduce", "alltoall", "allgather", "bcast"]
COMMON_KEYS = {"phase", "mode", "rate", "rate_unit", "seconds", "bytes", "size_bytes", "iterations", "element_type",
               "t_avg_us", "t_min_us", "t_max_us", "median_us", "p99_us", "check", "ranks", "nodes",
               "ranks_per_node", "library_tuning", "warnings"}
# Small and few: 4 ranks on 2 cores time-slice, every message costs milliseconds.
FAST = ("--iterations=10", "--warmup=2", "--min-iterations=2")
FASTER = ("--iterations=3", "--warmup=1", "--min-iterations=1")


def launch(mpiexec: str, ranks: int, env: dict[str, str] | None = None) -> list[str]:
    cmd = [mpiexec, "-n", str(ranks)]
    for k, v in sorted((env or {}).items()):
        cmd += ["-genv", k, v]
    return cmd


def sizes_of(records: list[dict]) -> list[int]:
    return [r["size_bytes"] for r in records]


def assert_sane(rec: dict, op: str, ranks: int) -> None:
    assert COMMON_KEYS <= set(rec), COMMON_KEYS - set(rec)
    assert rec["phase"] == op and rec["ranks"] == ranks and rec["nodes"] == 1 and rec["ranks_per_node"] == ranks
    assert rec["seconds"] > 0 and rec["rate"] > 0 and rec["iterations"] >= 1
    assert rec["t_min_us"] <= rec["t_avg_us"] * (1 + 1e-12) and rec["t_avg_us"] <= rec["t_max_us"] * (1 + 1e-12)
    assert 0 < rec["iteration_min_us"] <= rec["median_us"] <= rec["p99_us"]
    # the driver's per-iteration entry: each rank's own mean iteration time, the slowest rank
    assert rec["rank_seconds_min"] == pytest.approx(rec["t_min_us"] / 1e6)
    assert rec["rank_seconds_max"] == pytest.approx(rec["t_max_us"] / 1e6)
    assert 0 <= rec["slowest_rank"] < ranks and rec["ops"] == rec["iterations"]
    assert rec["ops_per_s"] == pytest.approx(1 / rec["seconds"])
    if op in BANDWIDTH_OPS:
        assert rec["rate_unit"] == "MiB/s" and rec["rate_decimal_unit"] == "MB/s"
        assert rec["rate"] == pytest.approx(rec["bytes"] / rec["seconds"] / 2**20)
        assert rec["rate_decimal"] == pytest.approx(rec["bytes"] / rec["seconds"] / 1e6)
    else:
        assert rec["rate_unit"] == "us" and rec["rate"] == pytest.approx(rec["seconds"] * 1e6)
        assert rec["rate"] == pytest.approx(rec["t_avg_us"])
    if op in ("allreduce", "reduce"):
        assert rec["element_type"] == "MPI_FLOAT" and rec["count"] == rec["size_bytes"] // 4
    elif op == "barrier":
        assert rec["element_type"] is None and rec["size_bytes"] == 0
    else:
        assert rec["element_type"] == "MPI_BYTE"
    if op in COLLECTIVES_CHECKED:
        assert rec["check"] == "passed" and rec["check_max_rel_error"] <= rec["check_tolerance"]
    else:
        assert rec["check"] == "not applicable"
    if op in ["pingpong"] + BANDWIDTH_OPS:
        assert rec["pairs"] == ranks // 2 and rec["pairs_same_node"] == rec["pairs"] and rec["same_node"] is True
        assert rec["bandwidth_mib_s"] > 0 and rec["bandwidth_mb_s"] == pytest.approx(rec["bandwidth_mib_s"] * 1.048576)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("op", LATENCY_OPS + BANDWIDTH_OPS)
def test_every_operation_on_2_ranks_gives_one_record_per_size(run_cbk, mpiexec, op):
    r = run_cbk("mpi", f"--op={op}", "--sizes=4,1k,64k", *FAST, launcher=launch(mpiexec, 2))
    assert r.status == 0, r.stderr
    recs = r.measurements(op)
    assert sizes_of(recs) == ([0] if op == "barrier" else [4, 1024, 65536])
    for rec in recs:
        assert_sane(rec, op, 2)
        assert rec["mode"] == "n/a" and rec["algorithm"] == "library" and rec["repetition"] == 0
        assert rec["sweep_key"] == "size_bytes" and rec["qualifiers"] == ["algorithm"]  # docs/records.md
    run = r.run_record()
    assert run["ranks"] == 2 and len(run["hosts"]) == 2


@pytest.mark.timeout(90)
def test_every_operation_on_4_oversubscribed_ranks(run_cbk, mpiexec):
    for op in LATENCY_OPS + BANDWIDTH_OPS:
        r = run_cbk("mpi", f"--op={op}", "--sizes=4,4k", *FASTER, "--window=4", launcher=launch(mpiexec, 4))
        assert r.status == 0, (op, r.stderr)
        recs = r.measurements(op)
        assert sizes_of(recs) == ([0] if op == "barrier" else [4, 4096])
        for rec in recs:
            assert_sane(rec, op, 4)
            oversubscribed = any("oversubscribed" in w for w in rec["warnings"])
            assert oversubscribed == (4 > (os.cpu_count() or 1))


@pytest.mark.timeout(60)
@pytest.mark.parametrize("op,algorithm,ranks", [
    ("allreduce", "ring", 2), ("allreduce", "ring", 3), ("allreduce", "ring", 4),
    ("allreduce", "recursive-doubling", 2), ("allreduce", "recursive-doubling", 4),
    ("allreduce", "rabenseifner", 2), ("allreduce", "rabenseifner", 4),
    ("allgather", "ring", 3), ("allgather", "recursive-doubling", 4),
    ("bcast", "binomial", 3), ("alltoall", "pairwise", 3),
])
def test_hand_written_algorithm_gives_the_library_result(run_cbk, mpiexec, op, algorithm, ranks):
    # 4 B is one float: fewer elements than ranks, so some blocks are empty;
    # 4100 B = 1025 floats splits unevenly over 2, 3 and 4 ranks.
    r = run_cbk("mpi", f"--op={op}", f"--algorithm={algorithm}", "--sizes=4,12,4100,64k", *FASTER,
                launcher=launch(mpiexec, ranks))
    assert r.status == 0, r.stderr
    recs = r.measurements(op)
    assert sizes_of(recs) == [4, 12, 4100, 65536]
    for rec in recs:
        assert rec["algorithm"] == algorithm and rec["check"] == "passed"
        assert rec["check_reference"] == ("MPI_Allreduce" if op == "allreduce" else "expected bytes")
        assert rec["check_max_rel_error"] <= rec["check_tolerance"]
        assert rec["library_selection"] is None


@pytest.mark.timeout(60)
@pytest.mark.parametrize("ranks", [2, 4])
@pytest.mark.parametrize("algorithm", ["ring", "recursive-doubling", "rabenseifner"])
def test_a_broken_allreduce_is_caught_before_timing(run_cbk, mpiexec, algorithm, ranks):
    r = run_cbk("mpi", "--op=allreduce", f"--algorithm={algorithm}", "--sizes=4,1k", *FASTER,
                launcher=launch(mpiexec, ranks), env={"CBK_TEST_MPI_BROKEN": algorithm})
    assert r.status == 1, r.stderr
    assert r.measurements() == []
    (err,) = r.errors
    assert err["rank"] == 0 and f"allreduce {algorithm} at 4 B gives a wrong result" in err["message"]
    assert "MPI_Allreduce" in err["message"]


@pytest.mark.timeout(30)
def test_the_broken_hook_leaves_other_algorithms_alone(run_cbk, mpiexec):
    r = run_cbk("mpi", "--op=allreduce", "--algorithm=ring", "--sizes=4,1k", *FASTER,
                launcher=launch(mpiexec, 2), env={"CBK_TEST_MPI_BROKEN": "rabenseifner"})
    assert r.status == 0, r.stderr
    assert [rec["check"] for rec in r.measurements()] == ["passed", "passed"]


@pytest.mark.timeout(30)
def test_library_reductions_are_checked_against_the_exact_sum(run_cbk, mpiexec):
    for op in ("allreduce", "reduce"):
        r = run_cbk("mpi", f"--op={op}", "--sizes=8,4k", *FAST, launcher=launch(mpiexec, 2))
        assert r.status == 0, r.stderr
        assert {rec["check_reference"] for rec in r.measurements()} == {"exact sum"}


@pytest.mark.timeout(30)
def test_pingpong_is_half_a_round_trip_with_units_and_placement(run_cbk, mpiexec):
    r = run_cbk("mpi", "--op=pingpong", "--sizes=1,8,1k,256k", *FAST, launcher=launch(mpiexec, 2))
    assert r.status == 0, r.stderr
    recs = r.measurements("pingpong")
    assert sizes_of(recs) == [1, 8, 1024, 262144]
    for rec in recs:
        assert rec["rate_unit"] == "us" and rec["rate"] > 0 and rec["bytes"] == rec["size_bytes"]
        # IMB PingPong's bandwidth: the message over the one-way time
        assert rec["bandwidth_mb_s"] == pytest.approx(rec["size_bytes"] / rec["seconds"] / 1e6)
        assert rec["same_node"] is True and rec["pairing"] == "half" and rec["pairs"] == 1
    assert r.run_record()["hosts"][0] == r.run_record()["hosts"][1]


@pytest.mark.timeout(30)
def test_iterations_shrink_with_size_and_warmup_with_them(run_cbk, mpiexec):
    r = run_cbk("mpi", "--op=pingpong", "--sizes=1k,64k,1m", "--iterations=100", "--warmup=10",
                "--min-iterations=4", "--volume=4m", launcher=launch(mpiexec, 2))
    assert r.status == 0, r.stderr
    recs = r.measurements()
    assert [x["iterations"] for x in recs] == [100, 64, 4]
    assert [x["warmup_iterations"] for x in recs] == [10, 7, 1]


@pytest.mark.timeout(30)
def test_default_sweep_is_powers_of_two_and_reductions_start_at_one_float(run_cbk, mpiexec):
    r = run_cbk("mpi", "--op=bcast", "--max-size=64", *FASTER, launcher=launch(mpiexec, 2))
    assert sizes_of(r.measurements()) == [1, 2, 4, 8, 16, 32, 64]
    r = run_cbk("mpi", "--op=allreduce", "--max-size=64", *FASTER, launcher=launch(mpiexec, 2))
    assert sizes_of(r.measurements()) == [4, 8, 16, 32, 64]


@pytest.mark.timeout(30)
def test_pairing_first_runs_imb_pingpong_on_odd_rank_counts(run_cbk, mpiexec):
    r = run_cbk("mpi", "--op=pingpong", "--pairing=first", "--sizes=8", *FASTER, launcher=launch(mpiexec, 3))
    assert r.status == 0, r.stderr
    (rec,) = r.measurements()
    assert rec["pairs"] == 1 and rec["pairing"] == "first" and rec["same_node"] is True


@pytest.mark.timeout(30)
def test_back_to_back_collectives_and_the_empty_iteration(run_cbk, mpiexec):
    r = run_cbk("mpi", "--op=allreduce", "--sync=none", "--sizes=8", *FAST, launcher=launch(mpiexec, 2))
    assert r.status == 0, r.stderr
    assert r.measurements()[0]["sync"] == "none"
    r = run_cbk("mpi", "--op=none", "--sync=none", "--iterations=1000", launcher=launch(mpiexec, 2))
    (rec,) = r.measurements("none")
    assert rec["rate_unit"] == "us" and rec["rate"] > 0 and rec["element_type"] is None
    assert rec["iterations"] == 1000 and rec["check"] == "not applicable"


@pytest.mark.timeout(90)
def test_an_op_list_measures_each_in_order_in_one_launch_with_buffers_for_the_largest(run_cbk, mpiexec):
    """pingpong first sizes the buffers for 64 KiB; alltoall then needs 4 x 64 KiB
    per rank and allreduce its reference buffers: each check must still pass."""
    ops = ["pingpong", "alltoall", "barrier", "allreduce", "bw"]
    r = run_cbk("mpi", f"--op={','.join(ops)}", "--sizes=4,64k", *FASTER, "--window=4", launcher=launch(mpiexec, 4))
    assert r.status == 0, r.stderr
    assert list(dict.fromkeys(m["phase"] for m in r.measurements())) == ops
    for op in ops:
        recs = r.measurements(op)
        assert sizes_of(recs) == ([0] if op == "barrier" else [4, 65536])
        for rec in recs:
            assert_sane(rec, op, 4)
    assert r.run_record()["parameters"]["op"] == ",".join(ops)


# ---- bad input: one error from rank 0, exit 2, no hang ----

@pytest.mark.timeout(30)
@pytest.mark.parametrize("ranks,args,message", [
    (3, ["--op=pingpong"], "needs an even number of ranks, got 3"),
    (3, ["--op=bw", "--pairing=neighbour"], "needs an even number of ranks, got 3"),
    (2, ["--op=pingpong", "--sizes=8,1k,512"], "--sizes must increase: 512 B follows 1 KiB"),
    (2, ["--op=allreduce", "--sizes=6"], "size 6 B is not a whole number of floats"),
    (2, ["--op=allreduce", "--algorithm=butterfly"], "--algorithm=butterfly is not one of"),
    (2, ["--op=bcast", "--algorithm=ring"], "algorithm ring is not available for bcast (available: library,binomial)"),
    (3, ["--op=allreduce", "--algorithm=recursive-doubling"], "needs a power-of-two number of ranks, got 3"),
    (3, ["--op=allreduce", "--algorithm=rabenseifner"], "needs a power-of-two number of ranks, got 3"),
    (2, ["--op=bcast", "--min-size=1m", "--max-size=4k"], "--min-size=1 MiB is larger than --max-size=4 KiB"),
    (2, ["--op=bcast", "--sizes=8,lots"], "--sizes: 'lots' is not a size"),
    (3, ["--op=allreduce,pingpong"], "pingpong with --pairing=half pairs every rank and needs an even number"),
    (2, ["--op=bcast,pingpong", "--algorithm=binomial"], "algorithm binomial is not available for pingpong"),
    (2, ["--op=pingpong,bw,pingpong"], "names pingpong twice"),
    (2, ["--op=pingpong,,bw"], "'' is not one of: pingpong,bw"),
])
def test_bad_input_gives_one_error_from_rank_0_and_exit_2(run_cbk, mpiexec, ranks, args, message):
    r = run_cbk("mpi", *args, *FASTER, launcher=launch(mpiexec, ranks), timeout=25)
    assert r.status == 2, r.stderr
    assert len(r.errors) == 1, r.stderr
    assert message in r.errors[0]["message"]
    assert r.errors[0].get("rank", 0) == 0
    assert r.measurements() == []


@pytest.mark.timeout(30)
def test_a_minimum_of_iterations_above_the_maximum_is_refused(run_cbk, cbk_bin, mpiexec):
    """--min-iterations=100 --iterations=10 measured 10 iterations per size,
    below the minimum the help promises ("never drop below this"), in silence."""
    args = ["--op=pingpong", "--sizes=8", "--warmup=1", "--min-iterations=100", "--iterations=10"]
    message = "--min-iterations=100 is larger than --iterations=10"
    check = subprocess.run([cbk_bin, "--check", "mpi", *args], capture_output=True, text=True)
    assert check.returncode == 2 and message in check.stderr
    r = run_cbk("mpi", *args, launcher=launch(mpiexec, 2), timeout=25)
    assert r.status == 2 and len(r.errors) == 1 and message in r.errors[0]["message"], r.stderr
    assert r.measurements() == []
    # the default minimum (10) yields to a smaller --iterations, which the user did choose
    few = run_cbk("mpi", *args[:3], "--iterations=5", launcher=launch(mpiexec, 2), timeout=25)
    assert few.status == 0 and [m["ops"] for m in few.measurements()] == [5], few.stderr


@pytest.mark.timeout(30)
def test_check_mode_leaves_rank_count_rules_to_the_launch(cbk_bin, mpiexec):
    ok = subprocess.run([cbk_bin, "--check", "mpi", "--op=pingpong"], capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    bad = subprocess.run([cbk_bin, "--check", "mpi", "--op=pingpong", "--sizes=2,1"], capture_output=True, text=True)
    assert bad.returncode == 2 and "--sizes must increase" in bad.stderr


# ---- the library's own algorithm, selected through the launcher ----

@pytest.mark.timeout(60)
def test_mpich_cvar_selection_is_recorded_and_the_result_still_checks(run_cbk, mpiexec):
    if flavour(mpiexec) != "mpich":
        pytest.skip("needs MPICH's mpiexec")
    env = mpi_tuning.selection_env("mpich", "allreduce", "recursive-doubling")
    r = run_cbk("mpi", "--op=allreduce", "--sizes=4,4100,64k", *FAST, launcher=launch(mpiexec, 2, env))
    assert r.status == 0, r.stderr
    for rec in r.measurements():
        assert rec["check"] == "passed" and rec["check_reference"] == "exact sum"
        assert rec["library_selection"] == "MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM=recursive_doubling"
        for k, v in env.items():
            assert rec["library_tuning"][k] == v
    # without selection the record says so
    r = run_cbk("mpi", "--op=allreduce", "--sizes=4", *FASTER, launcher=launch(mpiexec, 2))
    assert r.measurements()[0]["library_selection"] == "default"


@pytest.mark.timeout(60)
def test_mpich_obeys_the_selection(run_cbk, mpiexec):
    """pairwise_sendrecv_replace only works in place: MPICH must refuse it,
    which proves the variables reach its algorithm selection."""
    if flavour(mpiexec) != "mpich":
        pytest.skip("needs MPICH's mpiexec")
    env = mpi_tuning.selection_env("mpich", "alltoall", "pairwise_sendrecv_replace")
    r = run_cbk("mpi", "--op=alltoall", "--sizes=4", *FASTER, launcher=launch(mpiexec, 2, env))
    # The refusal itself proves the variables reach MPICH's selection. Its message
    # ("not usable") can be lost when the aborting rank takes the job down first
    # on a loaded machine, so it is not asserted.
    assert r.status != 0, r.stderr
    env = mpi_tuning.selection_env("mpich", "alltoall", "pairwise")
    r = run_cbk("mpi", "--op=alltoall", "--sizes=4", *FASTER, launcher=launch(mpiexec, 2, env))
    assert r.status == 0, r.stderr


def test_selection_env_mpich_exact_strings():
    assert mpi_tuning.selection_env("mpich", "allreduce", "ring") == {
        "MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM": "ring",
        "MPIR_CVAR_ALLREDUCE_DEVICE_COLLECTIVE": "0",
        "MPIR_CVAR_COLLECTIVE_FALLBACK": "error",
    }
    assert mpi_tuning.selection_env("mpich", "allreduce", "rabenseifner")[
        "MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM"] == "reduce_scatter_allgather"
    assert mpi_tuning.selection_env("mpich", "bcast", "scatter-ring-allgather") == {
        "MPIR_CVAR_BCAST_INTRA_ALGORITHM": "scatter_ring_allgather",
        "MPIR_CVAR_BCAST_DEVICE_COLLECTIVE": "0",
        "MPIR_CVAR_COLLECTIVE_FALLBACK": "error",
    }
    assert mpi_tuning.selection_env("mpich", "alltoall", "Bruck")["MPIR_CVAR_ALLTOALL_INTRA_ALGORITHM"] == "brucks"


def test_selection_env_openmpi_exact_strings():
    assert mpi_tuning.selection_env("openmpi", "allreduce", "recursive-doubling") == {
        "OMPI_MCA_coll_tuned_use_dynamic_rules": "1",
        "OMPI_MCA_coll_tuned_allreduce_algorithm": "3",
    }
    assert mpi_tuning.selection_env("openmpi", "allreduce", "ring")["OMPI_MCA_coll_tuned_allreduce_algorithm"] == "4"
    assert mpi_tuning.selection_env("openmpi", "allreduce", "rabenseifner")[
        "OMPI_MCA_coll_tuned_allreduce_algorithm"] == "6"
    assert mpi_tuning.selection_env("openmpi", "bcast", "binomial") == {
        "OMPI_MCA_coll_tuned_use_dynamic_rules": "1",
        "OMPI_MCA_coll_tuned_bcast_algorithm": "6",
    }
    assert mpi_tuning.selection_env("openmpi", "alltoall", "bruck")["OMPI_MCA_coll_tuned_alltoall_algorithm"] == "3"
    assert mpi_tuning.selection_env("openmpi", "barrier", "double_ring")[
        "OMPI_MCA_coll_tuned_barrier_algorithm"] == "2"


@pytest.mark.parametrize("name", ["library", "default", "AUTO"])
def test_the_library_choice_sets_nothing(name):
    assert mpi_tuning.selection_env("mpich", "allreduce", name) == {}
    assert mpi_tuning.selection_env("openmpi", "alltoall", name) == {}


def test_unknown_names_are_rejected_with_the_valid_ones():
    with pytest.raises(BadInput, match="MPICH has no allreduce algorithm 'butterfly' .*recursive_doubling"):
        mpi_tuning.selection_env("mpich", "allreduce", "butterfly")
    with pytest.raises(BadInput, match=r"Open MPI \(coll/tuned\) has no bcast algorithm 'ring'"):
        mpi_tuning.selection_env("openmpi", "bcast", "ring")
    with pytest.raises(BadInput, match="MPI flavour 'intel'"):
        mpi_tuning.selection_env("intel", "allreduce", "ring")
    with pytest.raises(BadInput, match="collective 'scan'"):
        mpi_tuning.selection_env("mpich", "scan", "ring")
    assert "ring" in mpi_tuning.algorithms("mpich", "allgather")
    assert mpi_tuning.algorithms("openmpi", "allreduce")[:2] == ["basic_linear", "nonoverlapping"]


def test_recorded_variables_picks_mpi_tuning_only():
    env = {"MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM": "ring", "OMPI_MCA_coll_tuned_use_dynamic_rules": "1",
           "OMPI_MCA_btl": "^openib", "UCX_TLS": "rc,sm", "FI_PROVIDER": "verbs", "I_MPI_ADJUST_ALLREDUCE": "2",
           "PATH": "/usr/bin", "HOME": "/root", "MPIR_CVARX": "no", "OMPI_MCA_orte_hnp_uri": "123@tcp://x"}
    assert mpi_tuning.recorded_variables(env) == {
        "FI_PROVIDER": "verbs", "I_MPI_ADJUST_ALLREDUCE": "2", "MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM": "ring",
        "OMPI_MCA_btl": "^openib", "OMPI_MCA_coll_tuned_use_dynamic_rules": "1", "UCX_TLS": "rc,sm",
    }
    assert list(mpi_tuning.recorded_variables(env)) == sorted(mpi_tuning.recorded_variables(env))
    assert mpi_tuning.recorded_variables({}) == {}


# ---- suites and the orchestrator ----

def suite_steps_of_mpi():
    doc = (Path(__file__).resolve().parent.parent / "docs" / "kernels" / "mpi.md").read_text()
    (e7,) = re.findall(r"```toml\n(.*?)```", doc, re.S)
    steps = [s for name in ("quick", "mpi-sweep") for s in suites.load(name, {}).steps if s.kernel == "mpi"]
    tomllib.loads(e7)
    return steps, e7


@pytest.mark.timeout(60)
def test_shipped_and_documented_suites_give_valid_mpi_steps(cbk_bin, mpiexec, tmp_path):
    steps, e7 = suite_steps_of_mpi()
    path = tmp_path / "e7-placement.toml"
    path.write_text(e7)
    placement = suites.load(str(path), {}).steps
    assert {(s.ranks, s.ranks_per_node) for s in placement} == {(16, 16), (16, 4), (16, 1)}
    steps += placement
    assert steps and all(s.requires == ("mpi",) for s in steps)
    for s in steps:
        p = subprocess.run([cbk_bin, "--check", "mpi", *s.cbk_args()], capture_output=True, text=True)
        assert p.returncode == 0, (s.title(), p.stderr)


@pytest.mark.timeout(120)
def test_a_suite_step_stores_one_sample_per_size_and_repetition(cli, mpiexec, tmp_path, store_url):
    suite = tmp_path / "small.toml"
    suite.write_text('description = "t"\n[[steps]]\nkernel = "mpi"\nnp = 2\nrepeat = 2\nrequires = ["mpi"]\n'
                     'params = { op = "allreduce", algorithm = "ring", sizes = "8,1k", iterations = 10, warmup = 1 }\n')
    r = cli("run", str(suite))
    assert r.status == 0, r.stderr
    with sa.create_engine(store_url).connect() as c:
        rows = c.execute(sa.text("select phase, mode, unit, value, record from samples")).all()
    assert len(rows) == 4
    assert {(p, m, u) for p, m, u, _, _ in rows} == {("allreduce", "ring", "us")}
    recs = [json.loads(rec) if isinstance(rec, str) else rec for *_, rec in rows]
    assert sorted((x["repetition"], x["size_bytes"]) for x in recs) == [(0, 8), (0, 1024), (1, 8), (1, 1024)]
    assert all(v > 0 for _, _, _, v, _ in rows) and all(x["check"] == "passed" for x in recs)


@pytest.mark.timeout(240)
def test_a_build_without_mpi_skips_mpi_steps_and_runs_the_rest(cbk_minimal, tmp_path, store_url):
    import sys

    suite = tmp_path / "mixed.toml"
    suite.write_text('description = "t"\n[[steps]]\nkernel = "mpi"\nnp = 2\nrequires = ["mpi"]\n'
                     'params = { op = "pingpong", sizes = "8" }\n[[steps]]\nkernel = "null"\nrepeat = 1\n')
    # no mpiexec on this PATH either, as on a machine without MPI
    env = dict(os.environ, CLUSTERBENCH_CBK=str(cbk_minimal), CLUSTERBENCH_DB=store_url, PATH="/usr/bin:/bin")
    p = run_bounded([sys.executable, "-m", "clusterbench", "run", str(suite), "--quiet"], timeout=120, env=env)
    assert p.returncode == 0, p.stderr
    with sa.create_engine(store_url).connect() as c:
        steps = c.execute(sa.text("select kernel, status, message from steps order by position")).all()
    assert [tuple(s) for s in steps] == [("mpi", "skipped", "cbk was built without MPI"), ("null", "ok", None)]


@pytest.mark.timeout(240)
def test_a_build_without_mpi_skips_a_step_on_several_ranks_that_does_not_say_it_needs_mpi(cbk_minimal, tmp_path,
                                                                                             store_url):
    """io500-like's mdtest steps run on 2 ranks without `requires = ["mpi"]`:
    mpiexec started two single-rank cbks, and the step failed with "mpiexec
    and cbk's MPI library do not work together here"."""
    import sys

    suite = tmp_path / "ranks.toml"
    suite.write_text('description = "t"\n[[steps]]\nkernel = "null"\nnp = 2\nrepeat = 1\n'
                     '[[steps]]\nkernel = "null"\nrepeat = 1\n')
    # the suite's PATH: an mpiexec on it, as where a site's MPI module is loaded after the install
    env = dict(os.environ, CLUSTERBENCH_CBK=str(cbk_minimal), CLUSTERBENCH_DB=store_url)
    p = run_bounded([sys.executable, "-m", "clusterbench", "run", str(suite), "--quiet"], timeout=120, env=env)
    assert p.returncode == 0, p.stderr
    with sa.create_engine(store_url).connect() as c:
        steps = c.execute(sa.text("select kernel, status, message from steps order by position")).all()
    assert [tuple(s) for s in steps] == [("null", "skipped", "2 ranks need MPI, and cbk was built without MPI"),
                                         ("null", "ok", None)]


@pytest.mark.timeout(120)
def test_a_build_without_mpi_refuses_a_kernel_on_several_ranks_in_one_line(cbk_minimal, tmp_path):
    import sys

    db = tmp_path / "never.db"
    env = dict(os.environ, CLUSTERBENCH_CBK=str(cbk_minimal))
    p = run_bounded([sys.executable, "-m", "clusterbench", "run", "null", "--np", "2", "--seconds=0.01",
                     "--db", f"sqlite:///{db}"], timeout=60, env=env)
    assert p.returncode == 2, p.stdout + p.stderr
    assert p.stderr.strip().splitlines() == [
        "Error: this run: every step would be skipped here, nothing to measure: "
        "2 ranks need MPI, and cbk was built without MPI"]
    assert not db.exists()


@pytest.mark.timeout(60)
def test_more_warmup_than_timed_iterations_runs_cleanly(run_cbk, mpiexec):
    """Warm-up iterations are timed into the same array: it must hold the longer run."""
    r = run_cbk("mpi", "--op=pingpong", "--sizes=8,1k", "--iterations=10", "--warmup=100", launcher=launch(mpiexec, 2))
    assert r.status == 0, r.stderr
    assert [(m["iterations"], m["warmup_iterations"]) for m in r.measurements("pingpong")] == [(10, 100), (10, 100)]


def rank_process(launcher: subprocess.Popen, rank: int, timeout_s: float = 30):
    """The process of one rank under launcher (MPICH's PMI_RANK, Open MPI's OMPI_COMM_WORLD_RANK)."""
    import psutil

    for _ in range(int(timeout_s / 0.1)):
        for p in psutil.Process(launcher.pid).children(recursive=True):
            try:
                env = p.environ()
            except psutil.Error:
                continue
            if str(rank) in (env.get("PMI_RANK"), env.get("OMPI_COMM_WORLD_RANK")) and p.name() == "cbk":
                return p
        time.sleep(0.1)
    raise AssertionError(f"rank {rank} never started")


@pytest.mark.timeout(120)
def test_a_rank_stopped_in_a_timed_collective_is_the_one_the_others_do_not_name(cbk_bin, mpiexec, tmp_path):
    """The scaling step's collectives are timed MPI calls, left as they are; a rank stopped in one
    (a node frozen) held the others in MPI_Allreduce, and they said nothing. The stall watch
    (kernels/core/patient_wait.h) sees the loop's times stop changing: past CBK_WAIT_NOTE_S every
    rank still running names the step's part, here the timed allreduce of 64 KiB, and the stopped
    rank is the one that says nothing. A loop that runs long but moves on (seconds here, past the
    bound) is not taken for a stall."""
    import psutil

    cmd = launch(mpiexec, 3) + [cbk_bin, "mpi", "--op=allreduce", "--sizes=64k", "--iterations=1000000",
                                "--min-iterations=1000000", "--warmup=2", "--repetitions=1"]
    err = tmp_path / "stderr"
    with open(err, "w") as f:
        launcher = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=f, start_new_session=True,
                                    env=dict(os.environ, CBK_WAIT_NOTE_S="1"))
    try:
        rank2 = rank_process(launcher, 2)
        for _ in range(600):   # seconds of CPU in the loop: well past the bound of 1 s, moving on
            if sum(rank2.cpu_times()[:2]) > 3:
                break
            time.sleep(0.1)
        before = err.read_text()
        rank2.suspend()
        for _ in range(300):
            if len(re.findall(r"^cbk: rank [01] ", err.read_text(), re.M)) >= 2:
                break
            time.sleep(0.1)
        said = err.read_text()
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(launcher.pid, signal.SIGKILL)   # the stopped rank too: SIGKILL needs no SIGCONT
        with contextlib.suppress(psutil.Error, NameError):
            rank2.kill()   # should the launcher's MPI have put its ranks in a group of their own
        launcher.wait(timeout=30)
    assert "has waited" not in before, before
    notes = re.findall(r"^cbk: rank (\d) \([^)]+\) has waited \d+ s in (.+)$", said, re.M)
    assert sorted(r for r, _ in notes) == ["0", "1"], said
    assert {what for _, what in notes} == {
        f"the timed allreduce of 64 KiB (library), a collective of 3 ranks on {socket.gethostname()}: a rank that "
        f"does not say so holds it"}, said
    # the step's message names it: no rank knows, every rank's notes together do (launch/messages.py)
    assert waits_named(said).startswith("rank 2 said nothing: the likely holder of the others' waits; "), said


def stderr_of_ranks_one_stopped(cbk_bin, mpiexec, tmp_path, args, rank, point, ranks=3) -> str:
    """cbk run on `ranks` ranks, `rank` stopping itself at `point` (CBK_TEST_STOP_AT), notes after 1 s:
    what the ranks said once all the others said they waited, or the run ended; every rank killed after."""
    import psutil

    err = tmp_path / "stderr"
    with open(err, "w") as f:
        launcher = subprocess.Popen(launch(mpiexec, ranks) + [cbk_bin, *args], stdout=subprocess.DEVNULL,
                                    stderr=f, start_new_session=True,
                                    env=dict(os.environ, CBK_WAIT_NOTE_S="1", CBK_TEST_STOP_AT=f"{rank}:{point}"))
    try:
        for _ in range(300):
            if len(re.findall(r"^cbk: rank \d ", err.read_text(), re.M)) >= ranks - 1 or launcher.poll() is not None:
                break
            time.sleep(0.1)
        return err.read_text()
    finally:
        ranks = psutil.Process(launcher.pid).children(recursive=True) if launcher.poll() is None else []
        with contextlib.suppress(ProcessLookupError):
            os.killpg(launcher.pid, signal.SIGKILL)   # the stopped rank too: SIGKILL needs no SIGCONT
        for p in ranks:   # should the launcher's MPI have put its ranks in a group of their own
            with contextlib.suppress(psutil.Error):
                p.kill()
        launcher.wait(timeout=30)


STOPPED_AT = {
    # where (CBK_TEST_STOP_AT, kernels/core/test_stop.h): the run, and where the others wait
    "setup": (["mpi", "--op=allreduce", "--sizes=8"],
              "the set-up's exchange of host names, a collective of 3 ranks: a rank that does not say so holds it"),
    "placement": (["mpi", "--op=allreduce", "--sizes=8"],
                  "the set-up's exchange of placement, a collective of 3 ranks on {host}: a rank that does not say "
                  "so holds it"),
    "closing": (["linkmatrix", "--size=4k", "--window=1", "--iterations=2", "--latency-iterations=2"],
                "the closing exchanges (TCP counts, the records' reductions), a collective of 3 ranks on {host}: a "
                "rank that does not say so holds it"),
}


@pytest.mark.timeout(120)
@pytest.mark.parametrize(("point", "rank"), [("setup", 2), ("placement", 1), ("closing", 1)])
def test_a_rank_stopped_where_no_wait_was_watched_is_the_one_the_others_notes_leave_out(
        cbk_bin, mpiexec, tmp_path, point, rank):
    """A rank stopped (a node frozen) in the set-up's exchange of host names or of placement, or before
    the link matrix's closing exchanges: the others waited there and said nothing. Now they say
    where, and of which ranks on which hosts, so the step's message names the rank that did not
    (a collective's wait knows no peer: kernels/core/patient_wait.h). The rank stops itself at that
    point (the test hook CBK_TEST_STOP_AT): no outside signal could hit it there on time."""
    args, what = STOPPED_AT[point]
    others = sorted({0, 1, 2} - {rank})
    said = stderr_of_ranks_one_stopped(cbk_bin, mpiexec, tmp_path, args, rank, point)
    notes = re.findall(r"^cbk: rank (\d) \([^)]+\) has waited \d+ s in (.+)$", said, re.M)
    assert sorted(int(r) for r, _ in notes) == others, said
    assert {w for _, w in notes} == {what.format(host=socket.gethostname())}, said
    assert waits_named(said).startswith(f"rank {rank} said nothing: the likely holder of the others' waits; "), said


@pytest.mark.timeout(120)
@pytest.mark.parametrize(("point", "rank", "ranks"), [("validation", 2, 3), ("barrier", 0, 3), ("barrier", 1, 3),
                                                      ("barrier", 2, 4)])
def test_a_rank_stopped_in_the_drivers_own_waits_is_named_whatever_the_kernel(
        cbk_bin, mpiexec, tmp_path, point, rank, ranks):
    """The driver's waits between a kernel's, its agreement on validation and its barrier before each
    repetition, were MPI's blocking calls: a rank stopped before them (a node frozen) left the others
    silent until the step's time limit, in every kernel (null here, which has no wait of its own). Now
    they are patient (kernels/core/patient_wait.h) and the step's message names the rank that said
    nothing. The barrier is a dissemination barrier (log2 of the ranks in rounds, each on one peer):
    each rank names the peer of the round it is held in, and on 4 ranks, rank 2 stopped, rank 1 names
    rank 3, which waits itself (in round 0, on rank 2) and never sends rank 1 its round 1."""
    said = stderr_of_ranks_one_stopped(cbk_bin, mpiexec, tmp_path, ["null", "--repetitions=2"], rank, point, ranks)
    host = socket.gethostname()
    in_agreement = (f"in the agreement on validation, a collective of 3 ranks on {host}: a rank that does not say "
                    "so holds it")

    def in_barrier_on(peer: int) -> str:
        return f"on rank {peer} ({host}) in a barrier of {ranks} ranks on {host}"

    expected = {
        ("validation", 2): {"0": in_agreement, "1": in_agreement},
        ("barrier", 0): {"1": in_barrier_on(0), "2": in_barrier_on(0)},
        ("barrier", 1): {"0": in_barrier_on(1), "2": in_barrier_on(1)},
        ("barrier", 2): {"0": in_barrier_on(2), "1": in_barrier_on(3), "3": in_barrier_on(2)},
    }[point, rank]
    assert dict(re.findall(r"^cbk: rank (\d) \([^)]+\) has waited \d+ s (.+)$", said, re.M)) == expected, said
    assert waits_named(said).startswith(f"rank {rank} said nothing: the likely holder of the others' waits; "), said
