"""Network mounts in the environment (environment/netfs.py) from recorded
mount tables and tool outputs of NFSv3 over TCP, NFSv4.2 over RDMA, Lustre
and GlusterFS, and the network-mount limit (limits_netfs.py) named for
figures against a link, a server disk and a client cache."""
from __future__ import annotations

from pathlib import Path

import pytest

from clusterbench import environment
from clusterbench.environment import netfs
from clusterbench.limits.netfs_limits import netfs_limit

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "environment"
TARGETS = ["/home/alice", "/nfsrdma/job", "/lustre/run1", "/mnt/gluster/out", "/"]


@pytest.fixture(scope="module")
def env() -> dict:
    return environment.collect(TARGETS, root=FIXTURES / "netfs", run_commands=False)


def keys(env: dict, target: str) -> dict:
    k = f"target.{target}.netfs."
    return {key.removeprefix(k): v for key, v in env.items() if key.startswith(k)}


@pytest.mark.timeout(10)
def test_nfs_server_export_and_the_client_options_that_shape_a_result(env):
    v3 = keys(env, "/home/alice")
    assert v3["kind"] == "nfs" and v3["servers"] == "10.1.0.5" and v3["export"] == "/export/home"
    assert (v3["nfs.vers"], v3["nfs.proto"], v3["nfs.rsize"], v3["nfs.wsize"]) == ("3", "tcp", "1048576", "1048576")
    assert (v3["nfs.acregmin"], v3["nfs.acdirmax"], v3["nfs.hard"]) == ("3", "60", True)
    rdma = keys(env, "/nfsrdma/job")
    assert (rdma["servers"], rdma["export"], rdma["nfs.vers"], rdma["nfs.proto"]) == ("10.2.0.6", "/scratch", "4.2", "rdma")
    # a fixture tree is not this machine: the route is not asked, and says so
    assert rdma["interface_error"].startswith("not run: ")


@pytest.mark.timeout(10)
def test_lustre_mgs_nids_file_system_and_striping(env):
    lu = keys(env, "/lustre/run1")
    assert lu["kind"] == "lustre" and lu["servers"] == "10.3.0.1,10.3.0.2" and lu["export"] == "lfs01"
    assert lu["lustre_error"].startswith("not run: ")   # lfs getstripe runs on the real machine only
    out = (FIXTURES / "commands" / "lfs-getstripe-d.txt").read_text()
    assert netfs.parse_lfs_getstripe(out) == {"stripe_count": 4, "stripe_size_bytes": 1048576}
    assert netfs.parse_lfs_getstripe("lmm_stripe_count:  8\nlmm_stripe_size:   4194304\n") == \
        {"stripe_count": 8, "stripe_size_bytes": 4194304}


@pytest.mark.timeout(10)
def test_gluster_volume_type_and_bricks_from_the_clients_volume_graph(env):
    gl = keys(env, "/mnt/gluster/out")
    assert gl["kind"] == "glusterfs" and gl["servers"] == "gl01" and gl["export"] == "scratch"
    assert gl["gluster.volume_type"] == "Distribute" and gl["gluster.brick_count"] == 2
    assert gl["gluster.bricks"] == "gl01:/srv/h02/bricks/b0 gl02:/srv/h03/bricks/b1"
    replica = "\n".join(["volume v-client-0", " type protocol/client", " option remote-host a", "end-volume",
                         "volume v-client-1", " type protocol/client", " option remote-host b", "end-volume",
                         "volume v-replicate-0", " type cluster/replicate", " subvolumes v-client-0 v-client-1",
                         "end-volume"])
    assert netfs.parse_gluster_volfile(replica)["volume_type"] == "Replicate"
    assert not keys(env, "/")   # a local file system has no netfs keys


@pytest.mark.timeout(10)
def test_route_and_shaping_parsers():
    assert netfs.parse_route_dev("198.19.1.3 dev eth0 src 198.19.1.2 uid 0 \n    cache \n") == "eth0"
    shaped = "qdisc tbf 2: root refcnt 2 rate 1Gbit burst 125000b lat 20.0ms \n"
    assert netfs.parse_tc_rate_mbps(shaped) == 1000
    assert netfs.parse_tc_rate_mbps("qdisc noqueue 0: root refcnt 2 \n") is None
    assert netfs.parse_source("glusterfs", "gl01:/scratch", {}) == (["gl01"], "scratch")
    assert netfs.parse_source("cifs", "//fs1/share", {}) == (["fs1"], "share")


@pytest.mark.timeout(10)
def test_the_binding_limit_is_named():
    d = "/mnt/nfs"
    gbit = {f"target.{d}.netfs.kind": "nfs", f"target.{d}.netfs.link_rate_mbps": 1000}
    assert netfs_limit(gbit, d, 118.75e6) == "link: 95 % of 1 Gbit/s"
    assert netfs_limit(gbit, d, 400e6) == "client cache"          # cannot have crossed the link
    assert netfs_limit(gbit, d, 70e6, server_disk_bytes_per_s=80e6) == "server disk"
    assert netfs_limit(gbit, d, 40e6) == "not the link: 32 % of 1 Gbit/s"
    assert netfs_limit({f"target.{d}.netfs.kind": "nfs"}, d, 40e6) == "link rate unknown"
    assert netfs_limit({}, "/local", 400e6) is None
