"""Every multi-host feature across separate test hosts (clusterbench testbed:
one network, UTS and IPC namespace per host), with MPICH and with Open MPI:
one environment snapshot per host, ranks placed on the hosts asked for, the
E7 crossover between shared memory and a 1 Gbit/s link, pario's shifted
reads reading what another host wrote, and one GPU set per rank by each
host's node-local rank (E11; the grants set as the batch systems set them,
no GPU needed).

The cluster (4 hosts, links shaped to 1 Gbit/s) is built once for the module.
The MPICH cbk is the default build; the Open MPI one is .venv-openmpi/bin/cbk
(scripts/build-openmpi-cbk.sh, run by scripts/setup.sh --test)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, find_cbk, store_rows, run_bounded
from clusterbench.testbed import cluster as tc

pytestmark = [pytest.mark.skipif(tc.why_not() is not None, reason=f"no test cluster: {tc.why_not()}"),
              pytest.mark.long_module]

LINK_MB_S = 125.0            # 1 Gbit/s in decimal MB/s
# tbf's bucket holds max(64 KiB, 1 ms of the rate) = 125,000 B and refills
# while a pingpong side waits for the reply: each 1 MiB message passes that
# much at once, so a one-way time can beat the rate by 2^20 / (2^20 - 125,000)
BUCKET_BYTES = 125_000
PINGPONG_MAX_MB_S = LINK_MB_S * 2**20 / (2**20 - BUCKET_BYTES)
HOSTS = ["h01", "h02", "h03", "h04"]
OPENMPI_CBK = REPO / ".venv-openmpi" / "bin" / "cbk"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    c = tc.up(tmp_path_factory.mktemp("testbed") / "tb", len(HOSTS), link="1gbit")
    yield c
    tc.down(c.dir)


@pytest.fixture(scope="module", params=["mpich", "openmpi"])
def family_cbk(request) -> str:
    if request.param == "openmpi":
        if not os.access(OPENMPI_CBK, os.X_OK):
            pytest.skip("no Open MPI cbk: run scripts/build-openmpi-cbk.sh")
        return str(OPENMPI_CBK)
    return find_cbk()


@pytest.fixture
def hcli(cluster, family_cbk, tmp_path):
    """clusterbench against a private store, with the test cluster's launcher environment."""
    store = f"sqlite:///{tmp_path / 'results.db'}"

    def run(*args: str, timeout: float = 240, env: dict | None = None) -> subprocess.CompletedProcess:
        env = {**os.environ, **cluster.env(), "CLUSTERBENCH_CBK": family_cbk, "CLUSTERBENCH_DB": store,
               "COLUMNS": "200", **(env or {})}
        p = run_bounded([sys.executable, "-m", "clusterbench", *args], timeout=timeout, env=env, cwd=tmp_path)
        return p

    return run


def exported(hcli, run_id: str = "1") -> dict:
    p = hcli("export", run_id, "--format", "json")
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)["runs"][0]


def measurements(step: dict) -> list[dict]:
    return [s["record"] for s in step["samples"] if s["record"].get("type") == "measurement"]


@pytest.mark.timeout(400)
def test_hostfile_runs_snapshot_every_host_and_place_ranks_across_hosts(cluster, hcli, tmp_path):
    p = hcli("run", str(REPO / "tests" / "fixtures" / "e7-placements.toml"), "--hostfile", str(cluster.hostfile),
             "--oversubscribe",
             "--report", str(tmp_path / "report.html"))
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    run = exported(hcli)
    # one snapshot per host, each with the host's own name
    for h in HOSTS:
        assert run["environments"][h]["host.name"] == h
    pingpong, *by_ppn = run["steps"]
    assert [s["ranks_per_node"] for s in by_ppn] == [4, 2, 1]
    assert all(s["status"] == "ok" for s in run["steps"]), [(s["name"], s["message"]) for s in run["steps"]]
    # placement: --np 2 --ppn 1 is two hosts, and the record says so
    assert pingpong["build"]["hosts"] == ["h01", "h02"] and pingpong["build"]["nodes"] == 2
    (big,) = [m for m in measurements(pingpong) if m["size_bytes"] == 2**20]
    assert big["same_node"] is False and big["pairs_same_node"] == 0
    assert big["bandwidth_mb_s"] <= PINGPONG_MAX_MB_S * 1.02
    # E7: two pairs on one host talk through shared memory, far above the
    # link; two pairs sharing one host's link get at most the link; two
    # pairs on four hosts at most two links
    rate = {s["ranks_per_node"]: measurements(s)[0]["rate"] for s in by_ppn}
    unit = {measurements(s)[0]["rate_unit"] for s in by_ppn}
    assert unit == {"MiB/s"}
    mb_s = {ppn: r * 2**20 / 1e6 for ppn, r in rate.items()}
    assert [s["build"]["nodes"] for s in by_ppn] == [1, 2, 4]
    # (four ranks on two cores time-slice: on a loaded machine shared memory
    # drops to a few hundred MB/s, still twice the link and the 2x2 figure)
    assert mb_s[4] > 2 * LINK_MB_S and mb_s[4] > 2 * mb_s[2], mb_s
    assert mb_s[2] <= LINK_MB_S * 1.05, mb_s
    assert mb_s[1] <= 2 * LINK_MB_S * 1.05, mb_s

    diff = hcli("env", "--diff", "1@h01", "1@h02")
    assert diff.returncode == 0, diff.stderr
    assert "host.name" in diff.stdout and "h01" in diff.stdout and "h02" in diff.stdout
    bad = hcli("env", "--diff", "1@h01", "1@h09")
    assert bad.returncode == 2 and "no snapshot of host 'h09'" in bad.stderr


@pytest.mark.timeout(300)
def test_pario_shifted_reads_read_what_another_host_wrote(cluster, hcli, tmp_path):
    (tmp_path / "data").mkdir()
    p = hcli("run", "pario", "--np", "4", "--ppn", "2", "--hostfile", str(cluster.hostfile), "--oversubscribe",
             "--repeat", "1", f"--dir={tmp_path / 'data'}", "--block-size=1m", "--transfer-size=256k")
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    (step,) = exported(hcli)["steps"]
    hosts = step["build"]["hosts"]
    assert hosts == ["h01", "h01", "h02", "h02"]
    (read,) = [m for m in measurements(step) if m["phase"] == "read"]
    assert read["read_from"] == "shifted"
    shift = read["read_shift"]
    # rank r reads what rank (r + shift) mod 4 wrote: on the other host
    assert shift == 2
    for r in range(4):
        assert hosts[(r + shift) % 4] != hosts[r]
    # and the record itself says, per rank, where it read and whose data:
    # written on the other host, by the rank shift places there
    (sources,) = [r for r in step["build"]["detail_records"] if r["type"] == "pario_reads"]
    assert [x["rank"] for x in sources["ranks"]] == [0, 1, 2, 3]
    for x in sources["ranks"]:
        assert x["reader_host"] == hosts[x["rank"]]
        assert x["writer_rank"] == (x["rank"] + shift) % 4
        assert x["writer_host"] == hosts[x["writer_rank"]] != x["reader_host"]
    assert sources["ranks_reading_another_host"] == 4
    assert sorted(os.listdir(tmp_path / "data")) == []


# The grant as the job's environment holds it on every node: Grid Engine's
# resource map (qsub -l gpu=2), Slurm's step GPUs beside the job's (physical
# ids, no device cgroup). mpiexec carries it to the other host. What differs
# between the MPI families is the node-local rank's variable: the Grid Engine
# case runs with both, the Slurm one (the same code past the grant) with MPICH.
GRANTS = {"grid engine": ({"SGE_HGR_gpu": "0 1"}, ["0", "1", "0", "1"]),
          "slurm": ({"SLURM_JOB_ID": "7", "SLURM_JOB_GPUS": "1,2,3", "SLURM_STEP_GPUS": "2,3"}, ["2", "3", "2", "3"])}


def builds(tmp_path) -> list[dict]:
    """Each stored step's run record (hcli's store), without another clusterbench start."""
    return [json.loads(b) for (b,) in store_rows(f"sqlite:///{tmp_path / 'results.db'}",
                                                 "select build from steps order by id")]


@pytest.mark.timeout(300)
@pytest.mark.parametrize("batch_system", GRANTS)
def test_each_host_binds_its_ranks_to_its_own_granted_gpus(cluster, family_cbk, hcli, tmp_path, batch_system):
    if batch_system == "slurm" and family_cbk == str(OPENMPI_CBK):
        pytest.skip("the Slurm grant past its parsing is the Grid Engine case; Open MPI's local rank is tested there")
    grant, expected = GRANTS[batch_system]
    where = ("--hostfile", str(cluster.hostfile), "--oversubscribe", "--seconds=0.01", "--repeat", "1", "--quiet")
    p = hcli("run", "null", "--np", "4", "--ppn", "2", "--gpus-per-rank", "1", *where, env=grant)
    assert p.returncode == 0, p.stderr[-3000:] + hcli("show", "1").stdout
    (build,) = builds(tmp_path)
    # the node-local rank picks the device: rank 2 is h02's first rank, so it
    # gets the grant's first device, as rank 0 does on h01; no two ranks of a host share one
    assert build["hosts"] == ["h01", "h01", "h02", "h02"]
    assert build["gpu_devices"] == expected
    shown = " ".join(hcli("show", "1").stdout.split())  # the caption wraps at the table's width
    assert f"rank 2 on h02: {expected[2]}; rank 3 on h02: {expected[3]}" in shown, shown
    # three ranks a host and two devices: refused, one line, nothing stored; shared only when asked
    refused = hcli("run", "null", "--np", "6", "--ppn", "3", "--gpus-per-rank", "1", *where, env=grant)
    assert refused.returncode == 2 and refused.stderr.strip().count("\n") == 0, refused.stderr
    assert "needs 3 GPUs" in refused.stderr and "--share-gpus" in refused.stderr
    assert len(builds(tmp_path)) == 1
    if batch_system == "grid engine":
        shared = hcli("run", "null", "--np", "6", "--ppn", "3", "--gpus-per-rank", "1", "--share-gpus", *where,
                      env=grant)
        assert shared.returncode == 0, shared.stderr[-3000:]
        assert builds(tmp_path)[1]["gpu_devices"] == ["0", "1", "0", "0", "1", "0"]
