"""The communication libraries under MPI: libfabric (OFI), UCX and the
Mellanox/NVIDIA OFED stack. Their versions change latency and bandwidth
as much as the MPI's own, and a node that lags behind its peers shows here."""
from __future__ import annotations

import re

from clusterbench.environment.sources import Context, put


def libfabric_version(text: str) -> str:
    """`fi_info --version`: "fi_info: 1.17.0 / libfabric: 1.17.0 / libfabric api: 1.17"."""
    m = re.search(r"^libfabric:\s*(\S+)", text, re.M)
    if not m:
        raise ValueError(text)
    return m.group(1)


def ucx_version(text: str) -> str:
    """`ucx_info -v`: "# Version 1.13.1" (UCX <= 1.13) or "# Library version: 1.14.1"."""
    m = re.search(r"^#\s*(?:Library version:|Version)\s*(\S+)", text, re.M)
    if not m:
        raise ValueError(text)
    return m.group(1)


def ofed_version(text: str) -> str:
    """`ofed_info -s`: "MLNX_OFED_LINUX-5.8-1.0.1.1:" (or OFED-internal-...)."""
    line = next(ln.strip() for ln in text.splitlines() if ln.strip())
    return line.rstrip(":")


def collect(env: dict, ctx: Context) -> None:
    # versions of installed files: kept per boot (command_cache.py); fi_info alone can take 0.2 s
    put(env, "fabric.libfabric_version", ctx.run(["fi_info", "--version"], stable=True), libfabric_version,
        "fi_info --version")
    put(env, "fabric.ucx_version", ctx.run(["ucx_info", "-v"], stable=True), ucx_version, "ucx_info -v")
    put(env, "fabric.ofed_version", ctx.run(["ofed_info", "-s"], stable=True), ofed_version, "ofed_info -s")
