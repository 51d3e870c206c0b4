"""NUMA layout from /sys/devices/system/node: nodes, their CPUs, memory
and distances. A memory bandwidth or MPI result depends on which node the
ranks and their memory land on, so the layout belongs to the snapshot."""
from __future__ import annotations

from clusterbench.environment.memory import parse_meminfo
from clusterbench.environment.sources import Context, Reading, put

NODE = "/sys/devices/system/node"


def collect(env: dict, ctx: Context) -> None:
    nodes = sorted((int(d[4:]) for d in ctx.listdir(NODE) if d.startswith("node") and d[4:].isdigit()))
    if not nodes:
        # kernels built without CONFIG_NUMA have no such directory: one node
        env["numa.nodes_error"] = f"no node directories in {NODE} (kernel without NUMA support)"
        return
    env["numa.nodes"] = len(nodes)
    for n in nodes:
        base = f"{NODE}/node{n}"
        put(env, f"numa.node{n}.cpus", ctx.read(f"{base}/cpulist"))
        mem = ctx.read(f"{base}/meminfo")
        # per-node meminfo lines read "Node 0 MemTotal:  123 kB"
        put(env, f"numa.node{n}.memory_bytes",
            mem if not mem.ok else Reading(mem.text.replace(f"Node {n} ", "")),
            lambda t: parse_meminfo(t)["MemTotal"], f"{base}/meminfo")
        put(env, f"numa.node{n}.distances", ctx.read(f"{base}/distance"), lambda t: " ".join(t.split()))
