"""Network interfaces (/sys/class/net) and InfiniBand ports
(/sys/class/infiniband): link rate, MTU, state, driver.

Only hardware interfaces and bonds are listed: loopback, bridges, veth
pairs and tunnels come and go with containers and would make every
snapshot differ. The rate is what the link negotiated, the figure a
network or NFS result is checked against.
"""
from __future__ import annotations

import re

from clusterbench.environment.sources import Context, Reading, put, put_file

NET = "/sys/class/net"
IB = "/sys/class/infiniband"


def _speed_mbps(text: str) -> int:
    v = int(text.strip())
    if v <= 0:  # -1 (SPEED_UNKNOWN) from drivers that cannot tell, e.g. virtio
        raise ValueError(text)
    return v


def hardware_interfaces(ctx: Context) -> list[str]:
    """The interfaces a snapshot describes: those with a device, and bonds."""
    return [n for n in ctx.listdir(NET) if ctx.exists(f"{NET}/{n}/device") or ctx.exists(f"{NET}/{n}/bonding")]


def collect(env: dict, ctx: Context) -> None:
    if not ctx.exists(NET):
        env["net.interfaces_error"] = f"no such file {NET}"
        _infiniband(env, ctx)
        return
    names = hardware_interfaces(ctx)
    env["net.interfaces"] = " ".join(names)
    for n in names:
        base = f"{NET}/{n}"
        speed = ctx.read(f"{base}/speed")
        if speed.ok and speed.text.strip().lstrip("-").isdigit() and int(speed.text) <= 0:
            speed = Reading(error=f"link speed not reported by the driver ({speed.text.strip()} in {base}/speed)")
        put(env, f"net.{n}.speed_mbps", speed, _speed_mbps, f"{base}/speed")
        put_file(env, f"net.{n}.mtu", ctx, f"{base}/mtu", int)
        put_file(env, f"net.{n}.operstate", ctx, f"{base}/operstate")
        if ctx.exists(f"{base}/bonding"):
            put_file(env, f"net.{n}.bond_mode", ctx, f"{base}/bonding/mode", lambda t: t.split()[0])
            put_file(env, f"net.{n}.bond_slaves", ctx, f"{base}/bonding/slaves")
            continue
        driver = ctx.link_name(f"{base}/device/driver")
        if driver:
            env[f"net.{n}.driver"] = driver
        else:
            env[f"net.{n}.driver_error"] = f"no driver link at {base}/device/driver"
        if ctx.link_name(f"{base}/device/subsystem") == "pci":
            ids = [ctx.read(f"{base}/device/{f}") for f in ("vendor", "device")]
            if all(r.ok for r in ids):
                env[f"net.{n}.pci_id"] = ":".join(r.text.strip().removeprefix("0x") for r in ids)
            numa = ctx.read(f"{base}/device/numa_node")
            if numa.ok and numa.text.strip().lstrip("-").isdigit() and int(numa.text) >= 0:
                env[f"net.{n}.numa_node"] = int(numa.text)
    _infiniband(env, ctx)


def parse_ib_rate(text: str) -> float:
    """"40 Gb/sec (4X QDR)" -> 40.0 (Gbit/s, decimal, as the kernel prints it)."""
    m = re.match(r"\s*([\d.]+)\s*Gb/sec", text)
    if not m:
        raise ValueError(text)
    return float(m.group(1))


def _state(text: str) -> str:
    """"4: ACTIVE" -> "ACTIVE"."""
    return text.split(":", 1)[-1].strip()


def _infiniband(env: dict, ctx: Context) -> None:
    hcas = ctx.listdir(IB)
    if not hcas:
        env["ib.hcas"] = ""  # no RDMA device registered with the kernel: none to describe
        return
    env["ib.hcas"] = " ".join(hcas)
    for hca in hcas:
        base = f"{IB}/{hca}"
        for attr in ("hca_type", "fw_ver", "board_id"):
            put_file(env, f"ib.{hca}.{attr}", ctx, f"{base}/{attr}")
        for port in ctx.listdir(f"{base}/ports"):
            p = f"{base}/ports/{port}"
            rate = ctx.read(f"{p}/rate")
            put(env, f"ib.{hca}.{port}.rate", rate, lambda t: " ".join(t.split()))
            put(env, f"ib.{hca}.{port}.rate_gbps", rate, parse_ib_rate, f"{p}/rate")
            put_file(env, f"ib.{hca}.{port}.state", ctx, f"{p}/state", _state)
            put_file(env, f"ib.{hca}.{port}.phys_state", ctx, f"{p}/phys_state", _state)
            put_file(env, f"ib.{hca}.{port}.link_layer", ctx, f"{p}/link_layer")
    # the active MTU of a port is not in sysfs; ibv_devinfo (rdma-core) reports it
    devinfo = ctx.run(["ibv_devinfo"])
    mtus = parse_ibv_devinfo_mtu(devinfo.text) if devinfo.ok else {}
    for hca in hcas:
        for port in ctx.listdir(f"{IB}/{hca}/ports"):
            key = f"ib.{hca}.{port}.active_mtu"
            if (hca, port) in mtus:
                env[key] = mtus[(hca, port)]
            else:
                env[key + "_error"] = devinfo.error or f"ibv_devinfo did not list {hca} port {port}"


def parse_ibv_devinfo_mtu(text: str) -> dict[tuple[str, str], int]:
    """{(hca, port): active MTU in bytes} from `ibv_devinfo` output."""
    out: dict[tuple[str, str], int] = {}
    hca = port = None
    for line in text.splitlines():
        k, sep, v = line.strip().partition(":")
        if not sep:
            continue
        v = v.strip()
        if k == "hca_id":
            hca, port = v, None
        elif k == "port":
            port = v
        elif k == "active_mtu" and hca and port and v.split()[0].isdigit():
            out[(hca, port)] = int(v.split()[0])
    return out
