"""The signals that stop clusterbench, and what a stop looks like from
outside: every command, not only a run, ends as Ctrl-C ends it (its
`finally` blocks remove temporary and lock files, a store's transaction is
rolled back), then says so in one line and exits 128 + the signal's number
(130 after Ctrl-C, 143 after SIGTERM), as a shell reports a process a signal
ended. Beside the launches (processes.py) because stopping one is its other
half; light (the standard library only), as the command line installs it
before any command is imported.
"""
from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from typing import Collection, Iterator

# What a batch system or terminal sends before it ends a job: Slurm SIGTERM,
# Grid Engine's -notify warning and s_rt SIGUSR1/SIGUSR2, a CPU limit SIGXCPU,
# a closed terminal SIGHUP. Each stops the run as Ctrl-C does: cbk removes its
# files and the run is stored as interrupted, with what was measured.
STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGUSR1, signal.SIGUSR2, signal.SIGXCPU)


def signal_name(stop: BaseException) -> str:
    """The signal a stop names (Interrupted("SIGTERM"), or the
    KeyboardInterrupt raised for it); a bare KeyboardInterrupt is Ctrl-C."""
    said = stop.args[0] if stop.args else None
    return said if isinstance(said, str) and said in signal.Signals.__members__ else "SIGINT"


def exit_status(stop: BaseException) -> int:
    """128 + the stop signal's number: 130 after Ctrl-C, 143 after Slurm's SIGTERM."""
    return 128 + signal.Signals[signal_name(stop)].value


def leaving(stop: BaseException) -> int:
    """exit_status, for a stop that is said and on its way out: every stop
    signal is dropped from here on, as after a command's last line
    (dropped_from_now). Raised between the "interrupted: ..." line and the
    command's end, an impatient second Ctrl-C said a second line."""
    dropped_from_now()
    return exit_status(stop)


def _as_ctrl_c(signum, _frame):
    raise KeyboardInterrupt(signal.Signals(signum).name)


def install(handler) -> dict:
    """handler on every stop signal that is not ignored; returns the
    handlers it replaced, for restore(). An ignored one stays ignored: a
    command started under nohup was asked to outlive the terminal's
    hangup, and a run that took SIGHUP back as a stop signal was stored
    interrupted when its user logged out."""
    _catch_stops_lost_in_finalizers()
    raising = _remembered(handler)
    return {sig: signal.signal(sig, raising) for sig in STOP_SIGNALS if signal.getsignal(sig) is not signal.SIG_IGN}


# The exception a stop handler raised last, and its signal (see _raised_again).
_last_stop: list = [None, 0]


def _remembered(handler):
    def raising(signum, frame):
        try:
            handler(signum, frame)
        except BaseException as stop:
            _last_stop[:] = [stop, signum]
            raise
    return raising


def _raised_again(unraisable) -> None:
    """sys.unraisablehook: a stop signal whose handler ran inside a
    finalizer (a weakref callback, a __del__: SQLAlchemy's, run by the
    garbage collector at any allocation) raised its exception where Python
    prints it ("Exception ignored in ...") and drops it, and the command ran
    on as if never stopped: a `run` whose SIGTERM fell there measured on
    (1 stop in 40 of a pario run in the suite). The signal is sent again
    10 ms later, from a thread: sent from here, its handler ran at once,
    still inside the finalizer, and was dropped again."""
    stop = unraisable.exc_value
    if stop is not None and stop is _last_stop[0]:
        sig = _last_stop[1]
    elif isinstance(stop, KeyboardInterrupt):   # Python's own SIGINT handler
        sig = signal.Signals[signal_name(stop)]
    else:
        _previous_unraisable_hook(unraisable)
        return
    again = threading.Timer(0.01, os.kill, (os.getpid(), sig))
    again.daemon = True
    again.start()


_previous_unraisable_hook = sys.unraisablehook


def _catch_stops_lost_in_finalizers() -> None:
    if sys.unraisablehook is not _raised_again:
        global _previous_unraisable_hook
        _previous_unraisable_hook = sys.unraisablehook
        sys.unraisablehook = _raised_again


def restore(previous: dict) -> None:
    for sig, handler in previous.items():
        signal.signal(sig, handler)


def stop_as_ctrl_c() -> None:
    """Each stop signal raises KeyboardInterrupt(its name) from here on. By
    default SIGTERM and SIGHUP killed a command outright: no `finally` ran,
    so a report's temporary file or a new store's lock file stayed behind,
    and the exit status said nothing clusterbench chose."""
    install(_as_ctrl_c)


def _noted(_signum, _frame):
    """A stop signal while a stop is under way: it asks for what is being done already."""


@contextlib.contextmanager
def _handled_by(handler) -> Iterator[dict | None]:
    """Every stop signal not ignored goes to handler during the body; the
    handlers before, yielded, are put back after it. Only the main thread
    can change handlers: elsewhere None, and the body runs as it is."""
    if threading.current_thread() is not threading.main_thread():
        yield None
        return
    previous = {}
    for sig in (signal.SIGINT, *STOP_SIGNALS):
        before = signal.getsignal(sig)
        if before not in (signal.SIG_IGN, None):
            previous[sig] = signal.signal(sig, handler)
    try:
        yield previous
    finally:
        for sig, before in previous.items():
            signal.signal(sig, before)


@contextlib.contextmanager
def deferred() -> Iterator[None]:
    """While a launch is being stopped and its step closed, a further Ctrl-C
    or stop signal is taken and dropped instead of raised. Raised, the
    second Ctrl-C of an impatient user abandoned the stop: clusterbench
    exited while cbk was still removing its files (and its step stayed
    `running`). What is deferred is bounded: the launch's grace period, then
    SIGKILL (launch/processes.py). Main thread only."""
    with _handled_by(_noted):
        yield


@contextlib.contextmanager
def held() -> Iterator[None]:
    """A stop signal during the body is kept and raised as the body ends,
    through the handler it would have met: what the body writes (a run's
    closing row) is either all written or not begun when the stop is
    raised. Short bodies only. Main thread only."""
    kept: list[int] = []
    previous = None
    try:
        with _handled_by(lambda signum, _frame: kept.append(signum)) as previous:
            yield
    finally:
        if kept:   # raised here, at once, also over an exception the body raised: the stop wins
            handler = previous[kept[0]]
            if callable(handler):
                handler(kept[0], None)
            else:
                signal.raise_signal(kept[0])


def dropped_from_now() -> None:
    """Every stop signal is taken and dropped from here on: the command has
    ended and said so, and what is left is its exit, which closes the store
    (weakref finalizers: the SQLite connection checkpoints and removes its
    -wal file). Raised there, a second Ctrl-C printed "Exception ignored"
    with a KeyboardInterrupt traceback after the command's last line and
    left the -wal and -shm files. The exit is short (no thread of a command
    outlives it but daemon threads). Ignored, not handled: Python's
    finalization gives a signal it handles its default action back, and a
    second Ctrl-C that landed there ended clusterbench by the signal (status
    -2, not 130) after it had said it was stopped (a CI run under load,
    2026-12-07); an ignored one stays ignored to the end. Main thread only."""
    if threading.current_thread() is not threading.main_thread():
        return
    for sig in (signal.SIGINT, *STOP_SIGNALS):
        if signal.getsignal(sig) is not None:
            signal.signal(sig, signal.SIG_IGN)


@contextlib.contextmanager
def suspended_together(pgids: Collection[int]) -> Iterator[None]:
    """While launches run in process groups of their own
    (step_engine.own_process_group), a terminal's Ctrl-Z (SIGTSTP) reaches
    clusterbench alone: this stops each launch (its group, and every
    process of its tree: Hydra's proxy starts each rank in a session of its
    own, out of the group), then clusterbench, and on `fg` (SIGCONT)
    continues them. Without it the benchmark ran on behind a suspended
    clusterbench, its records waiting in a full pipe. A repetition that was
    running meanwhile includes the pause in its time, as it did when the
    terminal stopped both. pgids, each a launcher's pid and group, is read
    at each Ctrl-Z (run cluster adds a node's launch as it starts). Main
    thread only, and not where SIGTSTP is ignored (no job control)."""
    if threading.current_thread() is not threading.main_thread() or \
            signal.getsignal(signal.SIGTSTP) is signal.SIG_IGN:
        yield
        return
    import psutil  # noqa: F401  (imported now, not inside the Ctrl-Z handler)

    from clusterbench.launch.processes import signal_trees

    def signal_launches(sig: int) -> None:
        launchers = list(pgids)
        for pgid in launchers:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pgid, sig)
        signal_trees(launchers, sig)

    def suspend(_signum, _frame):
        signal_launches(signal.SIGSTOP)
        signal.signal(signal.SIGTSTP, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTSTP)   # stopped here until SIGCONT
        signal.signal(signal.SIGTSTP, suspend)
        signal_launches(signal.SIGCONT)

    previous = signal.signal(signal.SIGTSTP, suspend)
    try:
        yield
    finally:
        signal.signal(signal.SIGTSTP, previous)
