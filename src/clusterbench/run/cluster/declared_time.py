"""How long a per-node part's launch lasts by its own parameters, where the
suite declares it (`lasts` in run/cluster/suite.toml): Himeno in time mode
runs --seconds a repetition, cpufreq --seconds for each count of busy CPUs.
With --one-at-a-time the straggler rule (straggler.py) bounds the step's
first node by it: there is no earlier launch of the step on another node
to go by, and a node stopped there hung the run unless --step-timeout was
given. The other parts declare nothing: STREAM's, seqio's and the
pingpong's time is the node's speed, what they measure, and a time made
from their sizes would assume the very speed in question."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Declared:
    seconds: float     # one launch, all its repetitions, at most (an overestimate is safe: the bound only widens)
    by: str            # what says so: "--himeno.seconds=0.3 a repetition"


def launch_time(entry: dict, params: dict, repetitions: int, cpus: int) -> Declared | None:
    """entry: the part in the suite; params: the step's (its overrides in);
    cpus: those the node's jobs may use (cpufreq's busy counts run 1 .. that
    many, each --seconds). None where the suite declares no time, or where
    the condition of its declaration does not hold (Himeno in iterations
    mode: its time is the node's speed again)."""
    name = entry.get("lasts")
    if not name or any(str(params.get(k)) != str(v) for k, v in entry.get("lasts-when", {}).items()):
        return None
    try:
        each_s = float(params[name])
    except (KeyError, ValueError):
        return None
    per_cpu = bool(entry.get("lasts-per-cpu"))
    seconds = each_s * (max(1, cpus) if per_cpu else 1) * repetitions
    per = f" for each of up to {max(1, cpus)} counts of busy CPUs" if per_cpu else ""
    return Declared(seconds, f"--{entry['part']}.{name}={params[name]}{per}, {repetitions} "
                             f"repetition{'s' if repetitions != 1 else ''}")
