"""Two switches joined by a trunk (clusterbench testbed up --switches 2
--trunk K): the topology is readable, flows spread over the trunk's links,
and E6 comes out as on real hardware: four TCP pairs across a trunk of two
1 Gbit/s links each fill one link alone (~0.94 Gbit/s) and share the two
links together (~1.9 Gbit/s in total, not 4). Bad input for the new options
is one line, exit 2, nothing made; `down` after an `up` killed while
building the trunk leaves nothing.

The trunk is an ECMP route hashed on addresses and ports: four flows on two
links all land on one link with probability 2/16, as in a real LAG. The E6
test reads the trunk links' byte counters, so it checks each attempt against
the links the flows actually took, and repeats the concurrent run (new
connections, new ports, a new hash) until both links carried traffic."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import find_cbk
from clusterbench.testbed import cluster as tc
from test_testbed_cluster import CLI, foreign_leftovers, objects_of, one_error_line, system_objects, tb

pytestmark = pytest.mark.long_module   # scheduled first (conftest)

needs_root = pytest.mark.skipif(tc.why_not() is not None, reason=f"no test cluster: {tc.why_not()}")

TRUNK_GBIT = 1.0
TRUNK_LINKS = 2
HOSTS = 8


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    c = tc.up(tmp_path_factory.mktemp("testbed") / "tb", HOSTS, switches=2, trunk=TRUNK_LINKS, trunk_rate="1gbit")
    yield c
    tc.down(c.dir)


@pytest.fixture
def hcli(cluster, tmp_path):
    store = f"sqlite:///{tmp_path / 'results.db'}"

    def run(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
        env = {**os.environ, **cluster.env(), "CLUSTERBENCH_CBK": find_cbk(), "CLUSTERBENCH_DB": store,
               "COLUMNS": "200"}
        return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=timeout, env=env, cwd=tmp_path)

    return run


def trunk_rx_bytes(cluster) -> list[int]:
    """Bytes each trunk link delivered to router A (switch 1's side)."""
    ns = cluster.state["trunk"]["routers"][0]["ns"]
    return [int(subprocess.run(["ip", "netns", "exec", ns, "cat", f"/sys/class/net/t{k}/statistics/rx_bytes"],
                               capture_output=True, text=True, check=True).stdout)
            for k in range(1, TRUNK_LINKS + 1)]


@needs_root
def test_topology_is_in_status_and_env_and_the_trunk_is_multipath_hashed_on_ports(cluster):
    st = json.loads(tb("status", "--json", state_dir=cluster.dir).stdout)
    assert [(h["name"], h["switch"]) for h in st["hosts"]] == \
        [(f"h0{i}", "sw1" if i <= 4 else "sw2") for i in range(1, 9)]
    assert all(h["up"] for h in st["hosts"]) and st["trunk"]["up"]
    assert [s["name"] for s in st["switches"]] == ["sw1", "sw2"]
    assert st["trunk"]["links"] == 2 and st["trunk"]["rate"] == "1gbit" and st["trunk"]["hash_policy"] == "l4"
    assert cluster.env()["CLUSTERBENCH_TESTBED_TOPOLOGY"] == \
        "h01:sw1,h02:sw1,h03:sw1,h04:sw1,h05:sw2,h06:sw2,h07:sw2,h08:sw2"
    assert Path(st["hostfile_across"]).read_text().split() == ["h01", "h05", "h02", "h06", "h03", "h07", "h04", "h08"]
    text = tb("status", state_dir=cluster.dir).stdout
    assert "trunk of 2 links, 1gbit each" in text and "h05  " in text and " sw2 " in text
    for r in st["trunk"]["routers"]:
        route = subprocess.run(["ip", "-n", r["ns"], "route"], capture_output=True, text=True).stdout
        assert route.count("nexthop via") == 2
        policy = subprocess.run(["ip", "netns", "exec", r["ns"], "cat", "/proc/sys/net/ipv4/fib_multipath_hash_policy"],
                                capture_output=True, text=True).stdout
        assert policy.strip() == "1"
        for k in (1, 2):
            q = subprocess.run(["tc", "-n", r["ns"], "qdisc", "show", "dev", f"t{k}"], capture_output=True, text=True)
            assert "tbf" in q.stdout and "1Gbit" in q.stdout
    # a host on switch 2 reaches one on switch 1 and the login node through the routers
    reach = ("import socket\nfor h in ('h01', 'login-%s'):\n"
             "    s = socket.socket(); s.settimeout(2)\n"
             "    print(h, s.connect_ex((socket.gethostbyname(h), 9)))\n") % cluster.id
    got = tb("exec", "h08", "--", sys.executable, "-c", reach, state_dir=cluster.dir)
    # 111 = connection refused: the host answered (nothing listens on port 9)
    assert got.stdout.split() == ["h01", "111", f"login-{cluster.id}", "111"], got.stdout + got.stderr


def pairs_of(hcli, run_id: int) -> tuple[dict, dict]:
    """The stored aggregate measurement (send direction) and tcp_pairs record of a run."""
    p = hcli("export", str(run_id), "--format", "json")
    assert p.returncode == 0, p.stderr
    (step,) = json.loads(p.stdout)["runs"][0]["steps"]
    assert step["status"] == "ok", step["message"]
    (m,) = [s["record"] for s in step["samples"]
            if s["record"].get("type") == "measurement" and s["record"]["phase"] == "send"]
    (pairs,) = [r for r in step["build"]["detail_records"] if r["type"] == "tcp_pairs" and r["phase"] == "send"]
    return m, pairs


@needs_root
@pytest.mark.timeout(300)
def test_e6_four_pairs_across_a_trunk_of_two_1_gbit_links(cluster, hcli, tmp_path):
    sw1 = [h.name for h in cluster.hosts if h.switch == "sw1"]
    sw2 = [h.name for h in cluster.hosts if h.switch == "sw2"]
    tcp = ["tcp", "--repeat", "1", "--ppn", "1", "--role=pairs", "--pairing=adjacent", "--port=0",
           "--link-speed=1", f"--shared-link-speed={TRUNK_LINKS * TRUNK_GBIT}"]
    run_id = 0
    # each pair alone: one trunk link is the bottleneck. The link is the ceiling and other work
    # on the machine only pulls a transfer below it (0.846 Gbit/s beside a second copy of the
    # suite), so a pair under 0.85 is measured again, up to three times, and the best judged
    for server, client in zip(sw1, sw2):
        hostfile = tmp_path / f"pair-{server}"
        hostfile.write_text(f"{server}\n{client}\n")
        rates = []
        for attempt in range(3):
            p = hcli("run", *tcp, "--duration=1", "--np", "2", "--hostfile", str(hostfile))
            assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
            run_id += 1
            m, pairs = pairs_of(hcli, run_id)
            (pair,) = pairs["pairs"]
            assert (pair["server_host"], pair["client_host"]) == (server, client)
            assert pair["gbit_per_s"] <= TRUNK_GBIT * 1.02, pair
            assert m["rate"] == pytest.approx(pair["gbit_per_s"], rel=0.02)
            rates.append(pair["gbit_per_s"])
            if rates[-1] >= 0.85:
                break
        assert max(rates) >= 0.85, rates

    # all four at once, until the hash has put flows on both links
    observed = []
    for attempt in range(4):
        before = trunk_rx_bytes(cluster)
        p = hcli("run", *tcp, "--duration=1.5", "--np", "8", "--hostfile", str(cluster.dir / "hostfile-across"))
        assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
        carried = [b - a for a, b in zip(before, trunk_rx_bytes(cluster))]
        run_id += 1
        m, pairs = pairs_of(hcli, run_id)
        links_used = sum(c > 0.1 * sum(carried) for c in carried)
        aggregate = pairs["aggregate_gbit_per_s"]
        observed.append((round(aggregate, 3), [round(c / 1e6) for c in carried]))
        # per pair: each crossed the trunk (server on switch 1, client on switch 2)
        assert [(x["server_host"], x["client_host"]) for x in pairs["pairs"]] == list(zip(sw1, sw2))
        assert all(x["gbit_per_s"] > 0.05 for x in pairs["pairs"]), pairs["pairs"]
        assert sum(x["gbit_per_s"] for x in pairs["pairs"]) == pytest.approx(aggregate, rel=0.1)
        # the aggregate is what the links the flows took can carry, never more than the trunk
        assert 0.85 * links_used * TRUNK_GBIT <= aggregate <= links_used * TRUNK_GBIT * 1.03, observed
        assert m["rate"] == pytest.approx(aggregate, rel=0.01)
        # against the pairs' own links (4 x 1 Gbit/s) and against the trunk (2 x 1 Gbit/s)
        assert pairs["nominal_gbit_per_s"] == 4 and pairs["ratio"] == pytest.approx(aggregate / 4)
        assert pairs["shared_link_gbit_per_s"] == 2 and pairs["shared_link_ratio"] == pytest.approx(aggregate / 2)
        if links_used == TRUNK_LINKS:
            break
    print(f"E6 attempts (aggregate Gbit/s, MB per trunk link): {observed}")
    # four flows all on one link happen with probability 1/8 per attempt
    assert links_used == TRUNK_LINKS, f"the hash put every flow on one link in {len(observed)} attempts: {observed}"
    assert aggregate >= 0.85 * TRUNK_LINKS * TRUNK_GBIT


@needs_root
@pytest.mark.timeout(120)
def test_bad_trunk_options_are_one_line_exit_2_and_nothing_made(tmp_path):
    d = tmp_path / "tb"
    before = system_objects()
    one_error_line(tb("up", "--switches", "3", state_dir=d), "1 or 2 switches")
    one_error_line(tb("up", "--trunk", "2", state_dir=d), "give --switches 2")
    one_error_line(tb("up", "--trunk-rate", "1gbit", state_dir=d), "give --switches 2")
    one_error_line(tb("up", "--switches", "2", "--trunk", "0", state_dir=d), "1 to 16 links")
    one_error_line(tb("up", "--switches", "2", "--trunk", "17", state_dir=d), "1 to 16 links")
    one_error_line(tb("up", "--switches", "2", "--trunk-rate", "fast", state_dir=d), "--trunk-rate", "not a tc rate")
    one_error_line(tb("up", "--switches", "2", "--hosts", "1", state_dir=d), "at least 2 hosts")
    one_error_line(tb("up", "--switches", "2", "--subnet", "198.19.250.0/27", state_dir=d), "a /26 or larger")
    one_error_line(tb("up", "--switches", "2", "--hosts", "30", "--subnet", "198.19.250.0/26", state_dir=d),
                   "room for 27 hosts on two switches")
    one_error_line(tb("up", "--switches", "2", "--trunk", "5", "--subnet", "198.19.250.0/26", state_dir=d),
                   "room for a trunk of 4 links")
    # another test's cluster may come or go meanwhile: only what no whole cluster owns counts
    assert foreign_leftovers(system_objects() - before) == set() and not d.exists()


def test_the_address_plan_splits_the_subnet_without_overlap():
    import ipaddress

    net = ipaddress.ip_network("198.19.9.0/24")
    plan = tc.layout(net, 8, switches=2, trunk=3)
    sw1, sw2 = (ipaddress.ip_network(n) for n in plan.switch_subnets)
    assert (str(sw1), str(sw2)) == ("198.19.9.0/25", "198.19.9.128/26")
    assert [h[1] for h in plan.hosts] == ["sw1"] * 4 + ["sw2"] * 4
    taken = [plan.bridge_address, *(h[2] for h in plan.hosts), *(r["address"] for r in plan.routers),
             *(a for link in plan.trunk_links for a in link)]
    assert len(taken) == len(set(taken)) == 1 + 8 + 2 + 6
    for name, switch, address, prefixlen in plan.hosts:
        assert ipaddress.ip_address(address) in (sw1 if switch == "sw1" else sw2)
        assert prefixlen == (sw1 if switch == "sw1" else sw2).prefixlen
    for a, b in plan.trunk_links:
        assert ipaddress.ip_network(f"{a}/30", strict=False) == ipaddress.ip_network(f"{b}/30", strict=False)
        assert ipaddress.ip_address(a) in net and ipaddress.ip_address(a) not in sw1 and ipaddress.ip_address(a) not in sw2
    # the largest cluster fits a /24; one switch keeps the old plan
    assert len(tc.layout(net, tc.MAX_HOSTS, switches=2, trunk=tc.MAX_TRUNK_LINKS).hosts) == tc.MAX_HOSTS
    one = tc.layout(net, 3)
    assert one.bridge_address == "198.19.9.1" and [h[2] for h in one.hosts] == ["198.19.9.2", "198.19.9.3", "198.19.9.4"]
    assert tc.parse_topology(2, None, "1GBit") == (1, "1gbit")
    with pytest.raises(tc.BadCluster, match="give --switches 2"):
        tc.parse_topology(1, 2, None)


def routes_of(subnet: str, cluster_id: str) -> list[str]:
    """This machine's routes into a cluster's subnet through that cluster's
    interfaces: once it is down, another suite's cluster may take the same
    free subnet, with routes of its own."""
    prefix = subnet.rsplit(".", 1)[0] + "."
    out = subprocess.run(["ip", "-4", "route", "show"], capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if line.startswith(prefix) and f" dev cbk{cluster_id}" in line]


@needs_root
@pytest.mark.timeout(180)
def test_down_after_up_killed_while_building_the_trunk_and_hosts_leaves_nothing(tmp_path):
    d = tmp_path / "tb"
    before = system_objects()
    up = subprocess.Popen([*CLI, "testbed", "up", "--hosts", "40", "--switches", "2", "--trunk", "4",
                           "--trunk-rate", "1gbit", "--link", "2gbit", "--dir", str(d)],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    state = d / tc.STATE_FILE
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if len(json.loads(state.read_text())["hosts"]) >= 2:
                break
        except (OSError, ValueError):
            pass
        time.sleep(0.005)
    up.send_signal(signal.SIGKILL)
    up.wait()
    st = json.loads(state.read_text())
    assert not st["complete"] and 2 <= len(st["hosts"]) < 40, "up was not stopped halfway"
    routers = [r["ns"] for r in st["trunk"]["routers"]]
    made = objects_of(st["id"], d)
    assert {f"netns {r}" for r in routers} <= made and f"link cbk{st['id']}b2" in made
    assert routes_of(st["subnet"], st["id"]), "the login node's route to switch 2 was not made"
    shaped = subprocess.run(["tc", "qdisc", "show", "dev", st["hosts"][0]["veth"]], capture_output=True, text=True)
    assert "tbf" in shaped.stdout
    assert "INCOMPLETE" in tb("status", state_dir=d).stdout
    down = tb("down", state_dir=d)
    assert down.returncode == 0, down.stderr
    # namespaces (with the routers, the trunk's links and their qdiscs),
    # bridges, veths (with their qdiscs), mounts, routes and files: all gone
    assert objects_of(st["id"], d) == set()
    assert foreign_leftovers(system_objects() - before) == set()
    assert routes_of(st["subnet"], st["id"]) == []
    assert not d.exists()
