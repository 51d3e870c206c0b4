"""Per-interface network tuning in the environment (#40 item 1): duplex and
the NIC's IRQ affinity from a fixture /sys and /proc; offloads, rings and
coalescing from ethtool's output (commands/ethtool-*-virtio_net.txt: ethtool
6.1 on the test VM's virtio_net eth0), read through a real ethtool process
stand-in; without ethtool, no such key and no error."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from clusterbench import environment
from clusterbench.environment import netdev_tuning
from clusterbench.environment.sources import Context, find_program

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "environment"
COMMANDS = FIXTURES / "commands"


def test_duplex_and_the_nics_queue_interrupts_come_from_sys_and_proc():
    env = environment.collect(root=FIXTURES / "xeon2s_hdd", run_commands=False)
    assert env["net.eno1.duplex"] == "full"
    # the misc vector on every CPU, then one queue per CPU: what a person compares between nodes
    assert (env["net.eno1.irqs"], env["net.eno1.irq_affinity"]) == (5, "0-7 0 1 2 3")
    # eno2's link is down: no duplex to tell and no interrupts listed; nothing invented
    assert not [k for k in env if k.startswith("net.eno2.") and ("duplex" in k or "irq" in k)]
    # a fixture tree runs no command: no ethtool key at all
    assert not [k for k in env if ".offload" in k or ".ring" in k or ".coalesce" in k]


def test_an_infiniband_hcas_completion_vectors_all_on_cpu_0_are_said():
    env = environment.collect(root=FIXTURES / "ib_qdr", run_commands=False)
    assert (env["ib.mlx4_0.irqs"], env["ib.mlx4_0.irq_affinity"]) == (3, "0-3 0 0")
    # IPoIB's ib0 is the same PCI function: its interrupts are the HCA's
    assert env["net.ib0.irq_affinity"] == "0-3 0 0"


def test_ethtool_output_reads_as_the_settings_to_change():
    offloads = netdev_tuning.parse_offloads((COMMANDS / "ethtool-k-virtio_net.txt").read_text())
    assert offloads == {"rx-checksumming": "on", "tx-checksumming": "on", "scatter-gather": "on",
                        "tcp-segmentation-offload": "on", "generic-segmentation-offload": "on",
                        "generic-receive-offload": "on", "large-receive-offload": "off", "receive-hashing": "off",
                        "rx-gro-hw": "on"}
    assert netdev_tuning.parse_rings((COMMANDS / "ethtool-g-virtio_net.txt").read_text()) == \
        {"ring_rx_max": 256, "ring_tx_max": 256, "ring_rx": 256, "ring_tx": 256}
    # "Adaptive RX: off  TX: n/a": a parameter the driver lacks is left out
    assert netdev_tuning.parse_coalesce((COMMANDS / "ethtool-c-virtio_net.txt").read_text()) == \
        {"adaptive-rx": "off", "rx-usecs": 0, "rx-frames": 1, "tx-usecs": 0, "tx-frames": 1}


@pytest.fixture
def fake_ethtool(tmp_path, monkeypatch):
    """An `ethtool` first on PATH that prints the recorded output of its flag,
    and refuses -g as a driver without ring parameters does."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "ethtool"
    script.write_text("#!/bin/sh\n"
                      'case "$1" in\n'
                      f'  -k) cat {COMMANDS / "ethtool-k-virtio_net.txt"} ;;\n'
                      '  -g) echo "netlink error: Operation not supported" >&2; exit 76 ;;\n'
                      f'  -c) cat {COMMANDS / "ethtool-c-virtio_net.txt"} ;;\n'
                      "esac\n")
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")


def test_ethtool_queries_become_keys_and_a_refused_one_says_why(fake_ethtool):
    env: dict = {}
    netdev_tuning._ethtool(env, Context(Path("/")), "eno1")
    assert env["net.eno1.offload.generic-receive-offload"] == "on"
    assert env["net.eno1.offload.large-receive-offload"] == "off"
    assert env["net.eno1.coalesce.adaptive-rx"] == "off" and env["net.eno1.coalesce.rx-usecs"] == 0
    assert env["net.eno1.rings_error"] == "ethtool -g eno1 exited with status 76: netlink error: Operation not supported"
    assert not [k for k in env if k.startswith("net.eno1.ring_")]


def test_without_ethtool_the_keys_are_absent_not_errors(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    if find_program("ethtool"):
        pytest.skip(f"ethtool in an sbin directory ({find_program('ethtool')}): cannot hide it")
    env: dict = {}
    netdev_tuning.collect(env, Context(Path("/")))
    assert not [k for k in env if ".offload" in k or ".ring" in k or ".coalesce" in k or "ethtool" in str(env[k])]
