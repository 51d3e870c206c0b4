"""Applying run conditions around a run, and the runner's hooks.

`applied()` checks everything first (names, values, root, cgroups), then
for each setting writes the journal entry, changes the value and reads it
back; on the way out (normal end, exception, Ctrl-C, SIGTERM) it restores
every value newest first and removes the run's memory cgroup. Stop signals
are held while values change, so a restore is never cut in half; a kill -9
leaves the journal, which the next clusterbench command replays.
"""
from __future__ import annotations

import contextlib
import os
import signal
import sys
from dataclasses import replace
from typing import Iterator

from clusterbench.launch import stop_signals
from clusterbench.conditions import cgroup, journal, settings
from clusterbench.conditions.spec import Applied, Conditions
from clusterbench.results.sizes import size_arg
from clusterbench.errors import BadInput

ENV_PREFIX = "conditions."
# The runner's stop signals plus Ctrl-C: held while settings change hands.
HELD = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGUSR1, signal.SIGUSR2, signal.SIGXCPU)


def _interrupt(signum, _frame):
    raise KeyboardInterrupt(signal.Signals(signum).name)


@contextlib.contextmanager
def _held_signals() -> Iterator[None]:
    old = signal.pthread_sigmask(signal.SIG_BLOCK, HELD)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def _remote_steps(req) -> list:
    """The steps whose ranks run on other hosts."""
    return [s for s in req.steps if s.launcher in ("srun", "qrsh")] or \
        ([s for s in req.steps if s.ranks > 1] if req.hostfile else [])


def _refuse_remote(c: Conditions, req) -> None:
    remote = _remote_steps(req)
    if c.settings and remote:
        raise BadInput(f"--setting changes this host only, and step '{remote[0].title()}' runs on other hosts "
                       f"({'--hostfile' if req.hostfile else remote[0].launcher}): set them there, or drop --setting")


def check(c: Conditions | None, req) -> list[settings.Change]:
    """Everything that can be known before a change: raises BadInput, changes nothing."""
    if not c:
        return []
    _refuse_remote(c, req)
    if c.settings and os.geteuid() != 0:
        names = ", ".join(f"{k}={v}" for k, v in c.settings)
        raise BadInput(f"--setting {names}: changing system settings needs root (run as root or with sudo)")
    try:
        changes = [settings.resolve(k, v, list(req.targets)) for k, v in c.settings]
    except settings.SettingError as e:
        raise BadInput(str(e)) from None
    # Only where every step runs here does this host's RAM say anything: compute
    # nodes may have more than the login node, and each rank's wrapper (cgexec)
    # refuses on its own host.
    why = c.memory_limit_bytes and not _remote_steps(req) and cgroup.caps_nothing(c.memory_limit_bytes)
    if why:
        raise BadInput(f"--memory-limit {size_arg(c.memory_limit_bytes)}: {why}")
    if c.memory_limit_bytes:
        try:
            h = cgroup.find()
        except cgroup.CgroupUnavailable as e:
            raise BadInput(f"--memory-limit: {e}") from None
        if not os.access(h.parent, os.W_OK):
            raise BadInput(f"--memory-limit needs root or a delegated cgroup: {h.parent} ({h.describe()}) "
                           f"is not writable by this user")
        why = not _remote_steps(req) and cgroup.caps_nothing(c.memory_limit_bytes, h=h)
        if why:
            raise BadInput(f"--memory-limit {size_arg(c.memory_limit_bytes)}: {why}")
    return changes


@contextlib.contextmanager
def applied(c: Conditions | None, req) -> Iterator[Conditions | None]:
    """Holds the run's conditions; yields them with the before/during values filled in."""
    if not c:
        yield c
        return
    changes = check(c, req)
    journal.replay_stale()
    lock = None
    try:
        if changes:
            lock = journal.settings_lock()
            if lock is None:
                raise BadInput("another clusterbench run on this host is changing system settings: "
                               "run this one after it")
        j = journal.Journal(req.command)
    except OSError as e:
        if lock is not None:
            os.close(lock)
        raise BadInput(f"cannot write the restoration journal in {journal.state_dir()}: "
                       f"{e.strerror or e}") from None
    previous = stop_signals.install(_interrupt)
    try:
        with _held_signals():
            if c.memory_limit_bytes:
                _probe_cgroup(c, j)
            done = _apply(changes, j)
        yield replace(c, applied=tuple(done))
    finally:
        with _held_signals():  # a second Ctrl-C waits until every value is back
            failures = journal.undo_all(j.entries, j.drop)
            j.close()
            if lock is not None:
                os.close(lock)
            stop_signals.restore(previous)
            for f in failures:
                print(f"clusterbench: could not restore: {f} (kept in {j.path}; retry with clusterbench clean)",
                      file=sys.stderr)


def _probe_cgroup(c: Conditions, j: journal.Journal) -> None:
    """Creates this host's cgroup once before the run, so a refusal comes
    before anything is stored; the wrapper re-creates it per launch. The
    journal names it first, so a killed run's cgroup is removed later."""
    h = cgroup.find()
    path = h.parent / c.cgroup_name
    j.add({"kind": "cgroup", "path": str(path)})
    try:
        cgroup.create(h, c.cgroup_name, c.memory_limit_bytes)
    except cgroup.CgroupUnavailable as e:
        raise BadInput(f"--memory-limit {size_arg(c.memory_limit_bytes)}: {e}") from None
    cgroup.remove(path)


def _apply(changes: list[settings.Change], j: journal.Journal) -> list[Applied]:
    done = []
    for ch in changes:
        try:
            before = settings.current(ch)
            j.add(*settings.entries(ch, before))
            settings.write(ch)
            during = settings.current(ch)
        except settings.SettingError as e:
            raise BadInput(f"--setting {ch.text}: {e}") from None  # the caller's finally restores the rest
        except OSError as e:  # the journal could not be written: nothing was changed for this one
            raise BadInput(f"cannot write the restoration journal {j.path}: {e.strerror or e}") from None
        done.append(Applied(ch.setting, ch.value, _one(before), _one(during)))
    return done


def _one(values: list[str]) -> str:
    """One value for the record: the value, or "a, b" when the files differ."""
    distinct = list(dict.fromkeys(values))
    return distinct[0] if len(distinct) == 1 else ", ".join(distinct)


# --- the runner's hooks ----------------------------------------------------

def environment_keys(c: Conditions | None, this_host: bool = True) -> dict:
    """Keys added to a host's environment snapshot: the memory limit on every
    host, the settings (this host's only) as found before and during the run."""
    if not c:
        return {}
    out: dict = {}
    if c.memory_limit_bytes:
        out[ENV_PREFIX + "memory_limit_bytes"] = c.memory_limit_bytes
        if this_host:
            try:
                out[ENV_PREFIX + "memory_cgroup"] = cgroup.find().describe()
            except cgroup.CgroupUnavailable as e:
                out[ENV_PREFIX + "memory_cgroup_error"] = str(e)
    if this_host:
        for a in c.applied:
            out[f"{ENV_PREFIX}setting.{a.setting}"] = a.during
            out[f"{ENV_PREFIX}setting.{a.setting}.before"] = a.before
    return out


def wrap(c: Conditions | None, argv: tuple[str, ...]) -> tuple[str, ...]:
    """The per-rank command: cbk itself, or cbk inside the memory cgroup."""
    if not c or not c.memory_limit_bytes:
        return argv
    return (sys.executable, "-m", "clusterbench.conditions.cgexec", f"--memory-limit={c.memory_limit_bytes}",
            f"--cgroup={c.cgroup_name}", "--", *argv)


def record_fields(env: dict) -> dict:
    """Fields each measurement record carries: the memory limit and settings it ran under."""
    out: dict = {}
    if ENV_PREFIX + "memory_limit_bytes" in env:
        out["memory_limit_bytes"] = env[ENV_PREFIX + "memory_limit_bytes"]
    prefix = ENV_PREFIX + "setting."
    named = {k[len(prefix):]: v for k, v in env.items() if k.startswith(prefix) and not k.endswith(".before")}
    if named:
        out["settings"] = named
    return out


def cgroup_caption(build: dict | None) -> str | None:
    """"memory limit 128 MiB (cgroup v1 ...): peak 127.9 MiB on h01" for a step's table."""
    reports = (build or {}).get("memory_cgroups") or []
    if not reports:
        return None
    parts = []
    for r in reports:
        peak = r.get("memory_peak_bytes")
        parts.append(f"peak {peak / 2**20:.1f} MiB on {r.get('host')}" if peak is not None
                     else f"no peak kept on {r.get('host')}")
        if r.get("oom_kills"):
            parts[-1] += f", {r['oom_kills']} out-of-memory kill(s)"
    first = reports[0]
    return f"memory limit {first['memory_limit_bytes'] / 2**20:g} MiB ({first.get('cgroup')}): " + "; ".join(parts)
