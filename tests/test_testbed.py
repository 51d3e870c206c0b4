"""The network-namespace test bed: it builds what it is asked, only with
benchmarking addresses, and removes everything it made, also on failure."""
from __future__ import annotations

import ipaddress
import subprocess
import sys
import time

import pytest

from clusterbench.testbed import netns
from clusterbench.testbed.netns import TestBed, available, rate_bits_per_s

NETNS_OK, NETNS_WHY = available()
needs_netns = pytest.mark.skipif(not NETNS_OK, reason=f"no network test bed: {NETNS_WHY}")

# A tiny TCP echo between two namespaces, without any tool beyond Python.
ECHO_SERVER = """
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], 7000)); s.listen(1); print("ready", flush=True)
c, _ = s.accept(); c.sendall(c.recv(100)); c.close()
"""
ECHO_CLIENT = """
import socket, sys
c = socket.create_connection((sys.argv[1], 7000), timeout=5); c.sendall(b"hello"); print(c.recv(100).decode())
"""


def all_namespaces() -> list[str]:
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return [line.split()[0] for line in out.splitlines() if line.strip()]


def test_rates_are_read_in_tc_units():
    assert rate_bits_per_s("1gbit") == 1e9
    assert rate_bits_per_s("2.5Gbit") == 2.5e9
    assert rate_bits_per_s("100mbit") == 1e8
    with pytest.raises(ValueError, match="not a tc rate"):
        rate_bits_per_s("1 GB/s")


@needs_netns
def test_addresses_outside_the_benchmarking_range_are_refused():
    for subnet in ("10.0.0.0/24", "198.20.0.0/24", "198.16.0.0/14"):
        with pytest.raises(ValueError, match="outside 198.18.0.0/15"):
            TestBed(subnet=subnet)


@needs_netns
@pytest.mark.timeout(60)
def test_hosts_on_a_switch_talk_and_everything_is_removed_afterwards():
    with TestBed() as bed:
        sw = bed.add_switch("sw")
        a = bed.add_host("a", switch=sw, rate="100mbit")
        b = bed.add_host("b", switch=sw)
        assert sorted(bed.namespaces()) == sorted(bed.prefix + n for n in ("sw", "a", "b"))
        for h in (a, b):
            assert ipaddress.ip_address(h.address) in ipaddress.ip_network("198.18.0.0/15")
            shown = h.run(["ip", "-4", "-o", "addr", "show", "dev", "eth0"], check=True).stdout
            assert f"{h.address}/16" in shown
        qdisc = a.run(["tc", "qdisc", "show", "dev", "eth0"], check=True).stdout
        assert "tbf" in qdisc and "100Mbit" in qdisc
        server = b.popen([sys.executable, "-c", ECHO_SERVER, b.address], stdout=subprocess.PIPE, text=True)
        try:
            assert server.stdout.readline().strip() == "ready"
            echo = a.run([sys.executable, "-c", ECHO_CLIENT, b.address], timeout=10)
            assert echo.stdout.strip() == "hello", echo.stderr
        finally:
            server.kill()
            server.wait()
            server.stdout.close()
        # the machine's own namespace holds none of it
        root_links = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
        assert bed.prefix not in root_links and "p1-a" not in root_links
        prefix = bed.prefix
    assert not [ns for ns in all_namespaces() if ns.startswith(prefix)]


def wait_inside(ns: str, pid: int) -> None:
    """Until `ip netns exec` has entered the namespace and exec'd the command."""
    for _ in range(200):
        pids = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True).stdout.split()
        if str(pid) in pids:
            return
        time.sleep(0.01)
    pytest.fail(f"process {pid} never entered {ns}")


@needs_netns
@pytest.mark.timeout(60)
def test_a_failing_test_still_removes_namespaces_and_their_processes():
    with pytest.raises(RuntimeError, match="the test failed"):
        with TestBed() as bed:
            h = bed.add_host("h")
            prefix = bed.prefix
            sleeper = h.popen(["sleep", "60"])
            wait_inside(h.ns, sleeper.pid)
            raise RuntimeError("the test failed")
    assert sleeper.wait(timeout=10) != 0  # killed by the clean-up
    assert not [ns for ns in all_namespaces() if ns.startswith(prefix)]


def dead_pid() -> int:
    gone = subprocess.Popen(["true"])
    gone.wait()
    return gone.pid


@needs_netns
@pytest.mark.timeout(60)
def test_beds_left_by_dead_processes_are_removed_and_live_ones_kept():
    stale = f"{netns.PREFIX_ROOT}{dead_pid()}-dead-h"
    subprocess.run(["ip", "netns", "add", stale], check=True)
    try:
        assert stale in netns.remove_stale()
        assert stale not in all_namespaces()
        with TestBed() as live:
            live.add_host("h")
            assert live.prefix + "h" not in netns.remove_stale()
            assert live.namespaces() == [live.prefix + "h"]
            # a new test bed clears what a killed run left
            subprocess.run(["ip", "netns", "add", stale], check=True)
            with TestBed():
                assert stale not in all_namespaces()
            assert live.namespaces() == [live.prefix + "h"]
    finally:
        subprocess.run(["ip", "netns", "del", stale], capture_output=True)


@needs_netns
def test_a_host_has_one_link_and_node_names_are_checked():
    with TestBed() as bed:
        a, b, c = bed.add_host("a"), bed.add_host("b"), bed.add_host("c")
        bed.connect(a, b)
        with pytest.raises(ValueError, match="already has its link"):
            bed.connect(a, c)
        with pytest.raises(ValueError, match="already used"):
            bed.add_host("a")
        with pytest.raises(ValueError, match="node name"):
            bed.add_switch("Bad-Name")
