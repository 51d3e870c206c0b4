"""Environment capture (E10): one flat dict describing a host, hashed so
runs reference one stored snapshot, and diffed so a comparison shows the
line that differs.

Each topic is one small module with `collect(env, ctx)` that reads through
`sources.Context` and never raises: a value that cannot be read becomes
"<key>_error": reason. The modules are listed here by name and imported
when collecting, so a broken one costs its own keys only.
"""
from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import json
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Callable, ContextManager, Sequence

from clusterbench.extensions.registry import Registry

if TYPE_CHECKING:
    from clusterbench.environment.sources import Context

SCHEMA = 1
# one module per topic, each with collect(env, ctx)
COLLECTORS = Registry("environment collector", [
    (topic, f"clusterbench.environment.{topic}:collect")
    for topic in ("system", "cpu", "memory", "numa", "storage", "netfs", "network", "netstack", "netdev_tuning",
                  "software", "gpu", "modules", "fabric", "container", "batchjob", "limits", "busy_processes", "host_address")])
# Values that change between two captures of an unchanged machine. They are
# kept in the snapshot (the limit checks read free memory) but left out of
# its hash and of diffs, so they neither split snapshots nor hide the line
# that matters. Their *_error twins are volatile too.
VOLATILE_KEYS = frozenset({
    "capture.time", "capture.seconds", "cpu.freq_cur_mhz", "memory.available_bytes", "memory.free_bytes",
    "system.load_1min", "system.boot_time", "processes.busy",
})

# Diffs list these first: a run condition (--setting, --memory-limit) or
# the tuned profile is usually the one line that explains a comparison.
FIRST_IN_DIFFS = ("conditions.", "tuned.profile")

__all__ = ["collect", "snapshot_hash", "diff", "change_text", "summary_block", "is_volatile", "COLLECTORS", "VOLATILE_KEYS"]


def __getattr__(name: str):
    # The snapshot's machinery is imported when a snapshot is taken, not by
    # every import of a small module of this package (the store reads
    # batchjob, the run gpu_grant).
    if name == "summary_block":
        from clusterbench.environment.report_block import summary_block

        return summary_block
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def is_volatile(key: str) -> bool:
    return key in VOLATILE_KEYS or key.removesuffix("_error") in VOLATILE_KEYS


def _collect_one(name: str, ctx: Context) -> dict:
    part: dict = {}
    try:
        COLLECTORS.load(name)(part, ctx)
    except Exception as e:  # a collector bug: keep what it found, say what broke
        part[f"{name}.collector_error"] = f"{type(e).__name__}: {e}"
    return part


# How long the topics have to end once a stop signal has told them to: they
# start no command and end the one running, so what is left is file reads.
STOPPED_TOPICS_WAIT_S = 5.0


def _collect_side_by_side(ctx: Context, stop_grace: Callable[[], ContextManager]) -> list[dict]:
    """Each topic's keys, in COLLECTORS' order. Topics run side by side: a
    slow command (nvidia-smi without its persistence daemon, an mpiexec on
    a stale network mount) then costs its own timeout, not the sum of all
    of them.

    A stop signal (KeyboardInterrupt, raised in the main thread) while they
    run tells them to stop (ctx.stopped) and waits for them before going on
    up. ThreadPoolExecutor's threads went on instead: its exit waited for
    every topic, nvidia-smi up to its timeout, and each topic started its
    next command meanwhile; a second signal interrupted the executor's
    join, which marks a thread still running as ended (CPython's
    bpo-45274 handling), and clusterbench exited with the threads running,
    a command left behind and their code run under the interpreter's exit.
    So the threads are waited for on an Event, never joined; they are
    daemon threads, so one stuck in a system call (a stat of a hung mount)
    cannot hold the exit. stop_grace holds off further stop signals during
    that bounded wait (launch/stop_signals.deferred, given by the callers
    above this layer)."""
    names = COLLECTORS.names()
    parts: list[dict] = [{} for _ in names]
    ended = [threading.Event() for _ in names]

    def collect_topic(i: int) -> None:
        try:
            parts[i] = _collect_one(names[i], ctx)
        finally:
            ended[i].set()

    begun = 0
    try:
        for i, name in enumerate(names):
            begun = i + 1   # counted first: a stop inside start() may come once the thread runs
            threading.Thread(target=collect_topic, args=(i,), name=f"envcap-{name}", daemon=True).start()
        for e in ended:
            e.wait()
    except BaseException:
        ctx.stopped.set()
        with stop_grace():   # a second Ctrl-C leaves no topic running
            give_up = time.monotonic() + STOPPED_TOPICS_WAIT_S
            for e in ended[:begun]:
                e.wait(max(give_up - time.monotonic(), 0))
        raise
    return parts


def collect(targets: Sequence[str] = (), root: str | Path = "/", run_commands: bool = True,
            keep_versions: bool = True, sample_processes: bool = False,
            stop_grace: Callable[[], ContextManager] = contextlib.nullcontext) -> dict:
    """Describes this host (or the file tree at `root`) and each target
    directory's file system and devices. Never raises, except a stop
    signal's KeyboardInterrupt. keep_versions: take version commands'
    output from this boot's cache (command_cache.py); the snapshot is the
    same either way. sample_processes: name the processes busy beside
    the capture (busy_processes.py; half a second of sampling, so only in
    a node's capture, where the nodes are compared). stop_grace: what holds further stop signals off while
    a stopped capture's topics end (_collect_side_by_side)."""
    from clusterbench.environment.sources import Context

    started = time.monotonic()
    cache = None
    if keep_versions and run_commands and Path(root) == Path("/"):
        from clusterbench.environment.command_cache import CommandCache

        cache = CommandCache.for_this_boot()
    ctx = Context(Path(root), tuple(str(t) for t in targets), run_commands, cache, sample_processes=sample_processes)
    env: dict = {"capture.schema": SCHEMA,
                 "capture.time": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")}
    for part in _collect_side_by_side(ctx, stop_grace):
        env.update(part)
    if cache:
        cache.save()
    env["capture.seconds"] = round(time.monotonic() - started, 3)
    from clusterbench.output.render_text import stored

    return dict(sorted(stored(env).items()))  # a non-UTF-8 working directory or path, as \xNN


def _stable(env: dict) -> dict:
    return {k: v for k, v in env.items() if not is_volatile(k)}


def snapshot_hash(env: dict) -> str:
    """sha256 of the canonical JSON of the non-volatile keys."""
    text = json.dumps(_stable(env), sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# key endings that name a value's unit, and the unit a reader is shown (docs/environment.md)
_UNIT_OF_KEY = (("_kb", "KiB"), ("_mib", "MiB"), ("_mhz", "MHz"), ("_mbps", "Mbit/s"), ("_ns", "ns"))


def value_text(key: str, value: object) -> str:
    """An environment value as a person reads it in a diff: a byte count in
    binary units with its exact bytes ("256 GiB", "23.5 GiB (25,274,793,984
    bytes)", not 274877906944), a rate or clock with the unit its key names
    ("8,192 KiB", "2,400 MHz"), a flag as yes or no; absent as nothing.
    The JSON keeps the stored value."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int) and key.endswith("_bytes"):
        from clusterbench.results.sizes import rounded_size_text, size_text

        shown = rounded_size_text(value)   # "23.5 GiB", and the exact count unless that is it ("256 GiB")
        return shown if shown == size_text(value) else f"{shown} ({value:,} bytes)"
    if isinstance(value, (int, float)):
        for ending, unit in _UNIT_OF_KEY:
            if key.endswith(ending):
                return f"{value:,g} {unit}" if isinstance(value, float) else f"{value:,} {unit}"
    return str(value)


def change_text(key: str, a: object, b: object, arrow: str = "->") -> str:
    """One line of a diff as a change: "kernel release: 6.1.0-18 -> 6.1.0-21",
    the key in words and each value as value_text gives it, "(absent)" for
    a side without the key (as the cluster report's differences say). trend
    and the history page printed the stored key and Python's text of the
    value ("memory.total_bytes: None -> 34359738368"), where compare says
    the same difference in words."""
    from clusterbench.environment.key_words import key_words

    def side(key_value: object) -> str:
        return "(absent)" if key_value is None else value_text(key, key_value) or str(key_value)

    return f"{key_words(key)}: {side(a)} {arrow} {side(b)}"


def diff(a: dict, b: dict) -> list[tuple[str, object, object]]:
    """(key, value in a, value in b) for each non-volatile key that differs
    or exists on one side only (None on the other), sorted by key, the
    FIRST_IN_DIFFS keys first."""
    out = []
    for key in sorted(set(a) | set(b), key=lambda k: (not k.startswith(FIRST_IN_DIFFS), k)):
        if is_volatile(key):
            continue
        if key not in a or key not in b or a[key] != b[key]:
            out.append((key, a.get(key), b.get(key)))
    return out
