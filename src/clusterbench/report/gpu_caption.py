"""The line under a GPU step's table in show and in every report format:
the GPUs each rank saw, and, where bound ranks of one host shared a GPU
(a node with fewer GPUs than ranks), the one line saying so."""
from __future__ import annotations

from clusterbench.limits.gpu_limits import shared_gpu_note


def gpu_caption(build: dict | None) -> str | None:
    """The GPUs each rank saw (the run record's gpu_devices, per rank; null:
    every device visible), with the rank's host when the step spans hosts,
    then the sharing note; None when no rank was bound (no GPU binding, or
    an older record)."""
    devices = (build or {}).get("gpu_devices") or []
    if not any(d is not None for d in devices):
        return None
    hosts = (build or {}).get("hosts") or []
    on_host = len(set(hosts)) > 1 and len(hosts) == len(devices)
    parts = [f"rank {r}" + (f" on {hosts[r]}" if on_host else "") + f": {'all' if d is None else d}"
             for r, d in enumerate(devices)]
    note = shared_gpu_note(build)
    return "GPUs seen: " + "; ".join(parts) + (f"\n{note[0].upper()}{note[1:]}." if note else "")
