"""Processes that keep a CPU busy beside the job: a noisy neighbour (a
runaway process, a user's job left on the node, a daemon spinning).

Such a node runs every kernel slower by the share its neighbour takes,
and nothing in its configuration says why: on the test cluster, a busy
loop on h03 for as long as h03's commands ran slowed nothing the run
could single out (its Himeno at 0.94 of the median: the four hosts share
two cores that other work loads anyway) and the run said "Nothing
flagged" (probed 2026-12-07).

A process is busy when it is runnable (state R) at nearly every sample
of a short window: a busy loop always is, however loaded the machine
(its CPU share falls with the load, to 13 % of a CPU at load 15 on two
cores; its state does not), and a process that works and waits is not.
Left out: the capturing process, everything it started (the other
collectors' commands) and what started it (the launcher, the job's
shell), and processes of another network namespace: on the test cluster
each host is a network namespace of one machine, the other hosts'
processes are not this host's. (A container with a network of its own on
a real node is left out alike.)

The key is volatile (a load changes between two captures of one machine)
and so left out of hashes and of `env --diff`; a cluster run compares
its nodes' snapshots, taken at the same moment, and says a node whose
neighbours are busy (analysis/cluster/analysis.py)."""
from __future__ import annotations

import os
import time

from clusterbench.environment.sources import Context

KEY = "processes.busy"
SAMPLES = 10
SAMPLE_INTERVAL_S = 0.05
# runnable in at least this share of the samples: a process that works and waits is below it
RUNNABLE_SHARE = 0.8
FULL_SAMPLES = SAMPLES - int(RUNNABLE_SHARE * SAMPLES) + 1   # 3: a busy process is runnable in one of them


def _stat(ctx: Context, pid: str) -> tuple[str, str, int, int] | None:
    """(command name, state, parent pid, CPU ticks) of /proc/PID/stat, or None once it is gone."""
    r = ctx.read(f"/proc/{pid}/stat")
    if not r.ok or ")" not in r.text:
        return None
    name = r.text[r.text.index("(") + 1:r.text.rindex(")")]
    fields = r.text[r.text.rindex(")") + 2:].split()
    try:
        return name, fields[0], int(fields[1]), int(fields[11]) + int(fields[12])
    except (IndexError, ValueError):
        return None


def _sample(ctx: Context, pids: list[str]) -> dict[str, tuple[str, str, int, int]]:
    return {pid: s for pid in pids if (s := _stat(ctx, pid))}


def _kin(samples: list[dict], self_pid: str) -> set[str]:
    """The capturing process, what it started and what started it."""
    parent = {pid: str(s[2]) for sample in samples for pid, s in sample.items()}

    def chain(pid: str) -> list[str]:   # pid and its ancestors
        out = []
        while pid in parent and pid not in out:
            out.append(pid)
            pid = parent[pid]
        return out

    return set(chain(self_pid)) | {pid for pid in parent if self_pid in chain(pid)}


def busy_text(samples: list[dict], self_pid: str, own_net: str | None, net_of, window_s: float,
              ticks_per_s: float) -> str:
    """'sh (pid 4242, 31 % of a CPU)', several joined by ', ', or 'none'."""
    kin = _kin(samples, self_pid)
    runnable: dict[str, int] = {}
    for sample in samples:
        for pid, s in sample.items():
            if s[1] == "R":
                runnable[pid] = runnable.get(pid, 0) + 1
    busy = []
    for pid, count in runnable.items():
        if count < RUNNABLE_SHARE * len(samples) or pid in kin or net_of(pid) != own_net:
            continue
        # over the samples that hold it: one started after the first sample read 0 % of a CPU
        held = [i for i, sample in enumerate(samples) if pid in sample]
        first, last = samples[held[0]][pid], samples[held[-1]][pid]
        span_s = window_s * (held[-1] - held[0]) / max(1, len(samples) - 1)
        share = (last[3] - first[3]) / ticks_per_s / span_s if span_s > 0 else 0.0
        busy.append((-share, _shown(last[0]), int(pid)))
    return ", ".join(f"{name} (pid {pid}, {-share * 100:.0f} % of a CPU)"
                     for share, name, pid in sorted(busy)) or "none"


def _shown(name: str) -> str:
    """A command name as a process set it (prctl, /proc/PID/comm: any bytes but NUL), its control
    characters written as escapes: a name holding a newline cannot add a line of its own to the key."""
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode() for c in name)


def collect(env: dict, ctx: Context) -> None:
    # half a second of sampling: a single host's capture went from 0.06 to 0.56 s (every `run`
    # waited on it), so only a node's capture, whose snapshot is compared with the others', samples
    if not ctx.sample_processes or not ctx.is_real_root:
        return   # (a fixture tree holds no live processes to sample)
    net = lambda pid: ctx.link_name(f"/proc/{pid}/ns/net")  # noqa: E731  ("net:[4026531840]")
    own = net(str(os.getpid()))
    if own is None:
        env[KEY + "_error"] = "cannot read /proc/self/ns/net"
        return
    # every process in the first samples; after them only those runnable in one of them: a process
    # runnable at 8 of 10 samples is runnable at one of any 3 (each listing of a node's /proc costs
    # tens of milliseconds, and the capture waits on this topic)
    samples, start = [], time.monotonic()
    pids = [pid for pid in ctx.listdir("/proc") if pid.isdigit()]
    for i in range(SAMPLES):
        if i:
            time.sleep(SAMPLE_INTERVAL_S)
        if i == FULL_SAMPLES:
            pids = sorted({pid for sample in samples for pid, st in sample.items() if st[1] == "R"})
        samples.append(_sample(ctx, pids))
    window_s = time.monotonic() - start
    env[KEY] = busy_text(samples, str(os.getpid()), own, net, window_s, os.sysconf("SC_CLK_TCK"))
