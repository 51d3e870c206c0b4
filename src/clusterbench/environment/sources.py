"""Where collectors read from: files under an injectable root, and commands.

Every collector reads /proc, /sys and /etc through `Context.read` and runs
programs through `Context.run`; neither raises. Each returns a `Reading`
that holds either the text or the reason it could not be had, so a value
that cannot be read is stored as "<key>_error": reason, never guessed.

Tests point `root` at a fixture tree (a small fake /proc and /sys); then,
and whenever run_commands is False, no command is run, because its output
would describe this machine, not the fixture.
"""
from __future__ import annotations

import errno
import os
import shutil
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Mapping

if TYPE_CHECKING:
    from clusterbench.environment.command_cache import CommandCache

COMMAND_TIMEOUT_S = 3.0
# How often a running command looks whether the capture was stopped.
STOP_POLL_S = 0.05
# Larger files are never what a collector wants (and /proc files report size 0).
MAX_READ_BYTES = 1 << 20
MAX_CPUS = 1 << 16  # bounds a CPU list range, so a corrupt file cannot exhaust memory


@dataclass(frozen=True)
class Reading:
    """The text of a file or command output, or why there is none."""

    text: str | None = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


def _os_error_reason(e: OSError, what: str) -> str:
    if e.errno == errno.ENOENT:
        return f"no such file {what}"
    if e.errno in (errno.EACCES, errno.EPERM):
        return f"permission denied: {what}"
    if e.errno == errno.ENOTDIR:
        return f"not a directory on the way to {what}"
    # sysfs answers EINVAL/ENODEV for attributes the driver cannot report
    # (the speed of a link that is down, for instance)
    if e.errno in (errno.EINVAL, errno.ENODEV, errno.EOPNOTSUPP, errno.ENXIO):
        return f"not reported by the driver ({os.strerror(e.errno).lower()}): {what}"
    return f"{os.strerror(e.errno).lower() if e.errno else e}: {what}"


# System tools (dmidecode) live in sbin, which a user's PATH often lacks.
SBIN_DIRS = ("/usr/local/sbin", "/usr/sbin", "/sbin")


def find_program(name: str) -> str | None:
    if os.sep in name:
        return name if os.access(name, os.X_OK) else None
    path = os.environ.get("PATH", os.defpath)
    return shutil.which(name, path=os.pathsep.join([path, *SBIN_DIRS]))


@dataclass(frozen=True)
class Context:
    """What collectors share: the root of the file tree, the target
    directories, whether commands may run, and whether the capture was
    stopped (set: no command is started, and the one running is ended)."""

    root: Path = Path("/")
    targets: tuple[str, ...] = ()
    run_commands: bool = True
    command_cache: CommandCache | None = field(default=None, compare=False)  # for commands marked stable
    # sample the processes busy beside the capture (busy_processes.py): half a second, so only where
    # nodes are compared (a per-node capture: python -m clusterbench.environment --busy)
    sample_processes: bool = False
    stopped: threading.Event = field(default_factory=threading.Event, compare=False)

    @property
    def is_real_root(self) -> bool:
        return self.root == Path("/")

    # Paths: a str is a path on the collected machine ("/proc/meminfo") and is
    # joined to the root; a Path is already a location in this file system
    # (found by listing or resolving under the root) and is used as is.
    def path(self, where: str | Path) -> Path:
        return where if isinstance(where, Path) else self.root / where.lstrip("/")

    def display(self, where: str | Path) -> str:
        """The path as the collected machine sees it, for error reasons."""
        if isinstance(where, str):
            return where
        try:
            rel = where.relative_to(self.root)
        except ValueError:
            return str(where)
        return "/" + ("" if str(rel) == "." else str(rel))

    # --- files ---------------------------------------------------------
    def read(self, where: str | Path) -> Reading:
        p = self.path(where)
        try:
            with open(p, "rb") as f:
                data = f.read(MAX_READ_BYTES)
        except OSError as e:
            return Reading(error=_os_error_reason(e, self.display(p)))
        return Reading(text=data.decode("utf-8", "replace"))

    def exists(self, where: str | Path) -> bool:
        return self.path(where).exists()

    def listdir(self, where: str | Path) -> list[str]:
        """Sorted entries, or [] when the directory cannot be read."""
        try:
            return sorted(os.listdir(self.path(where)))
        except OSError:
            return []

    def link_name(self, where: str | Path) -> str | None:
        """Last component of a symlink's target (a driver's name), dangling or not."""
        try:
            return os.path.basename(os.readlink(self.path(where)))
        except OSError:
            return None

    def resolve(self, where: str | Path) -> Path:
        """Follows symlinks. Fixture trees use relative links, as sysfs does,
        so resolving stays inside the root."""
        p = self.path(where)
        try:
            return p.resolve()
        except OSError:
            return p

    # --- commands ------------------------------------------------------
    def run(self, argv: list[str], timeout_s: float = COMMAND_TIMEOUT_S,
            extra_env: Mapping[str, str] | None = None, stable: bool = False) -> Reading:
        """stdout (or stderr when stdout is empty) of a command, or why not.
        Never raises; a command that hangs is abandoned after `timeout_s`.
        stable: the output depends only on installed files and the
        environment (a version), so it may come from command_cache."""
        if not self.run_commands:
            return Reading(error=f"not run: command execution disabled ({argv[0]})")
        if not self.is_real_root:
            return Reading(error=f"not run: reading a file tree at {self.root}, not this machine ({argv[0]})")
        exe = find_program(argv[0])
        if not exe:
            return Reading(error=f"{argv[0]} not installed (not on PATH)")
        env = {**os.environ, **(extra_env or {}), "LC_ALL": "C"}
        key = self.command_cache.key(exe, argv, env) if stable and self.command_cache else None
        if key and (kept := self.command_cache.get(key)) is not None:
            return Reading(text=kept)
        if self.stopped.is_set():
            return Reading(error=f"not run: the capture was stopped ({argv[0]})")
        try:
            # a process group of its own, so that ending it ends what it started too: a wrapper
            # script (a site's cc or nvidia-smi) killed alone left its child running after the stop
            p = subprocess.Popen([exe, *argv[1:]], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, env=env, process_group=0)
        except OSError as e:
            return Reading(error=f"cannot run {exe}: {e.strerror or e}")
        with p:
            deadline = time.monotonic() + timeout_s
            while True:
                try:
                    stdout, stderr = p.communicate(timeout=min(STOP_POLL_S, max(deadline - time.monotonic(), 0)))
                    break
                except subprocess.TimeoutExpired:
                    if self.stopped.is_set():
                        _kill_group(p)
                        return Reading(error=f"{' '.join(argv)} ended: the capture was stopped")
                    if time.monotonic() >= deadline:
                        _kill_group(p)
                        return Reading(error=f"{' '.join(argv)} timed out after {timeout_s:g} s")
        out = stdout.decode("utf-8", "replace")
        err = stderr.decode("utf-8", "replace")
        if p.returncode != 0:
            first = next((ln.strip() for ln in (err + "\n" + out).splitlines() if ln.strip()), "")
            why = f"{' '.join(argv)} exited with status {p.returncode}"
            return Reading(error=f"{why}: {first}" if first else why)
        text = out if out.strip() else err
        if key:
            self.command_cache.put(key, text)
        return Reading(text=text)


def _kill_group(p: subprocess.Popen) -> None:
    """SIGKILL to the command's process group, then its exit reaped. Sent
    before the wait: until then the group's id (the command's pid) cannot
    name another group."""
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    p.wait()


# --- helpers shared by the collectors ------------------------------------

def put(env: dict, key: str, reading: Reading, convert: Callable[[str], object] = str.strip,
        what: str = "") -> object | None:
    """Stores convert(reading.text) under `key`, or "<key>_error": reason.
    Returns the stored value (None when it went to the error key)."""
    if not reading.ok:
        env[key + "_error"] = reading.error
        return None
    try:
        value = convert(reading.text)
    except (ValueError, TypeError, IndexError, KeyError, StopIteration, OverflowError):
        env[key + "_error"] = f"unexpected value {reading.text.strip()[:80]!r}" + (f" in {what}" if what else "")
        return None
    env[key] = value
    return value


def put_file(env: dict, key: str, ctx: Context, where: str | Path,
             convert: Callable[[str], object] = str.strip) -> object | None:
    return put(env, key, ctx.read(where), convert, ctx.display(where))


def bracketed(text: str) -> str:
    """The active choice of a sysfs selector: "always [madvise] never" -> "madvise"."""
    text = text.strip()
    start, end = text.find("["), text.find("]")
    if start >= 0 and end > start:
        return text[start + 1:end]
    if text and " " not in text:
        return text  # a single choice is shown without brackets ("none")
    raise ValueError(text)


def parse_cpu_list(text: str) -> list[int]:
    """"0-3,8,10-11" -> [0, 1, 2, 3, 8, 10, 11]."""
    out: list[int] = []
    for part in text.strip().split(","):
        part = part.strip()
        if not part:
            continue
        if "-" in part:
            lo, hi = (int(x) for x in part.split("-", 1))
            if not 0 <= lo <= hi < MAX_CPUS:
                raise ValueError(part)
            out.extend(range(lo, hi + 1))
        else:
            out.append(int(part))
    return out


def format_cpu_list(cpus: list[int]) -> str:
    """[0, 1, 2, 3, 8] -> "0-3,8"."""
    out: list[str] = []
    cpus = sorted(set(cpus))
    i = 0
    while i < len(cpus):
        j = i
        while j + 1 < len(cpus) and cpus[j + 1] == cpus[j] + 1:
            j += 1
        out.append(str(cpus[i]) if i == j else f"{cpus[i]}-{cpus[j]}")
        i = j + 1
    return ",".join(out)


def khz_to_mhz(text: str) -> int | float:
    khz = int(text.strip())
    return khz // 1000 if khz % 1000 == 0 else khz / 1000
