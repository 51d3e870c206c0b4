"""System settings a run may change for its duration (--setting NAME=VALUE).

Each kind resolves a name to where the setting lives (files under /proc/sys
or /sys, or the tuned daemon) and checks the value where the kernel lists
the choices, so a misspelt setting or an impossible value is refused
before anything changes:

    vm.dirty_ratio=5            a sysctl (any name with a dot or a slash: /proc/sys/...)
    tuned=latency-performance   a tuned profile, through tuned-adm
    governor=performance        every CPU's cpufreq scaling governor
    thp=never                   transparent huge pages (.../transparent_hugepage/enabled)
    thp-defrag=never            their defragmentation (.../transparent_hugepage/defrag)
    io-scheduler=none           the I/O scheduler of the disks under the run's target directories
    read-ahead=128k             the read-ahead of the device under the target directories (KiB if no unit)
    cpu-latency=0               a PM QoS request on /dev/cpu_dma_latency (us), held open for the run

Restoration is data (journal entries), so a later process can undo what a
killed one changed: {"kind": "file", "path": ..., "before": ...},
{"kind": "tuned", "before": profile or None} or {"kind": "pm-qos"} (the
kernel drops a PM QoS request when the process holding it ends, so only
the process that made it has anything to undo).
"""
from __future__ import annotations

import errno
import glob
import os
import re
import shutil
import struct
import subprocess
from dataclasses import dataclass
from pathlib import Path

THP = Path("/sys/kernel/mm/transparent_hugepage")
CPUS = "/sys/devices/system/cpu/cpu[0-9]*/cpufreq/scaling_governor"
PM_QOS = Path("/dev/cpu_dma_latency")
PM_QOS_NO_REQUEST = 2_000_000_000  # what the kernel reports when no process asks for a latency
NAMED = ("tuned", "governor", "thp", "thp-defrag", "io-scheduler", "read-ahead", "cpu-latency")
SYSCTL_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-/]*")
TUNED_TIMEOUT_S = 120  # a profile switch restarts tuned's plugins
# sysctls that are one limit given two ways: writing one zeroes the other (mm/page-writeback.c)
_PAIRS = (("vm/dirty_bytes", "vm/dirty_ratio"), ("vm/dirty_background_bytes", "vm/dirty_background_ratio"))
ONE_LIMIT_TWO_WAYS = {Path("/proc/sys") / a: Path("/proc/sys") / b for pair in _PAIRS for a, b in (pair, pair[::-1])}


_held_requests: dict[Path, int] = {}  # PM QoS requests this process holds: path -> open fd


class SettingError(Exception):
    """One line for the user; nothing was changed by the failing step."""


@dataclass(frozen=True)
class Change:
    setting: str                 # as the user named it
    value: str                   # as the user gave it
    files: tuple[Path, ...]      # where it is written (none for tuned)
    written: str                 # the text written (read-ahead in KiB)
    selector: bool = False       # files list the choices, the active one in brackets

    @property
    def text(self) -> str:
        return f"{self.setting}={self.value}"


def _selector_choices(text: str) -> list[str]:
    """"always [madvise] never" -> ["always", "madvise", "never"]."""
    return [w.strip("[]") for w in text.split()]


def _selected(text: str) -> str:
    """The active choice of a selector file, or the text of a plain one."""
    m = re.search(r"\[([^\]]+)\]", text)
    return m.group(1) if m else text.strip()


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError as e:
        raise SettingError(f"cannot read {path}: {os.strerror(e.errno).lower() if e.errno else e}") from None


def _check_choice(change_text: str, value: str, path: Path, listing: str) -> None:
    choices = _selector_choices(listing)
    if value not in choices:
        raise SettingError(f"--setting {change_text}: not one of {', '.join(choices)} ({path})")


def _sysctl(name: str, value: str) -> Change:
    text = f"{name}={value}"
    if not SYSCTL_NAME.fullmatch(name) or ".." in name.split("/") or "/../" in f"/{name}/":
        raise SettingError(f"--setting {text}: not a sysctl name")
    # sysctl(8): dots separate levels, unless the name uses slashes (then dots are literal, as in VLAN names)
    rel = name if "/" in name else name.replace(".", "/")
    path = Path("/proc/sys") / rel
    if not path.is_file():
        raise SettingError(f"--setting {text}: no such setting (no {path}); settings: {', '.join(NAMED)}, "
                           f"or a sysctl such as vm.dirty_ratio")
    if not path.stat().st_mode & 0o222:  # even root's write fails (EACCES), and so would its restore
        raise SettingError(f"--setting {text}: read-only ({path} is a value the kernel reports, not a setting)")
    return Change(name, value, (path,), value)


def _selector(name: str, value: str, path: Path, what: str) -> Change:
    text = f"{name}={value}"
    if not path.exists():
        raise SettingError(f"--setting {text}: this kernel has no {what} ({path} does not exist)")
    _check_choice(text, value, path, _read(path))
    return Change(name, value, (path,), value, selector=True)


def _governor(value: str) -> Change:
    text = f"governor={value}"
    files = tuple(Path(p) for p in sorted(glob.glob(CPUS)))
    if not files:
        raise SettingError(f"--setting {text}: no CPU frequency scaling here (no "
                           f"/sys/devices/system/cpu/cpu*/cpufreq/scaling_governor)")
    available = files[0].parent / "scaling_available_governors"
    if available.exists():
        _check_choice(text, value, available, _read(available))
    return Change("governor", value, files, value)


def _block(name: str, value: str, targets: list[str]) -> Change:
    from clusterbench.environment.storage import block_queues

    text = f"{name}={value}"
    if not targets:
        raise SettingError(f"--setting {text}: applies to the disk under the run's directory, "
                           f"and this run names none (give --dir)")
    files: list[Path] = []
    for t in targets:
        found = block_queues(t)
        if isinstance(found, str):
            raise SettingError(f"--setting {text}: {found}")
        queue_dev, disks = found
        files += [queue_dev / "queue" / "read_ahead_kb"] if name == "read-ahead" else \
            [d / "queue" / "scheduler" for d in disks]
    files = list(dict.fromkeys(files))
    if name == "io-scheduler":
        for f in files:
            _check_choice(text, value, f, _read(f))
        return Change(name, value, tuple(files), value, selector=True)
    from clusterbench.results.sizes import parse_size

    size = parse_size(value + ("k" if value.isdigit() else ""))
    if size is None:
        raise SettingError(f"--setting {text}: give a size, e.g. 128k or 4m (a plain number is KiB)")
    return Change(name, value, tuple(files), str(size // 1024))


def _cpu_latency(value: str) -> Change:
    """Why a setting: on a machine whose CPUs idle in deep states (or a
    virtual machine whose idle is a halt), waking an idle CPU costs tens of
    microseconds, which a queue-depth-1 I/O or a ping-pong pays on every
    operation. 0 keeps every CPU out of idle, as tuned's latency-performance."""
    text = f"cpu-latency={value}"
    digits = value[:-2] if value.endswith("us") else value
    if not digits.isdigit():
        raise SettingError(f"--setting {text}: give the latency in microseconds, e.g. 0 or 10us")
    if int(digits) > PM_QOS_NO_REQUEST:  # the request is a 32-bit int; this value already means "no limit"
        raise SettingError(f"--setting {text}: at most {PM_QOS_NO_REQUEST} us")
    if not PM_QOS.exists():
        raise SettingError(f"--setting {text}: this kernel has no {PM_QOS} (CONFIG_CPU_IDLE)")
    return Change("cpu-latency", value, (PM_QOS,), str(int(digits)))


def _tuned(value: str) -> Change:
    text = f"tuned={value}"
    if not tuned_adm():
        raise SettingError(f"--setting {text}: tuned-adm is not installed (apt-get install tuned, "
                           f"dnf install tuned)")
    out = _tuned_run("list")
    profiles = [ln[2:].split(" ", 1)[0].strip() for ln in out.splitlines() if ln.startswith("- ")]
    if value not in profiles:
        raise SettingError(f"--setting {text}: no such tuned profile (tuned-adm list: {', '.join(profiles)})")
    return Change("tuned", value, (), value)


def resolve(name: str, value: str, targets: list[str]) -> Change:
    """Where NAME lives and what to write; raises SettingError, changes nothing."""
    name, value = name.strip(), value.strip()
    if not value:
        raise SettingError(f"--setting {name}=: give a value")
    if name == "tuned":
        return _tuned(value)
    if name == "governor":
        return _governor(value)
    if name == "thp":
        return _selector(name, value, THP / "enabled", "transparent huge pages")
    if name == "thp-defrag":
        return _selector(name, value, THP / "defrag", "transparent huge page defragmentation")
    if name in ("io-scheduler", "read-ahead"):
        return _block(name, value, targets)
    if name == "cpu-latency":
        return _cpu_latency(value)
    if "." in name or "/" in name:
        return _sysctl(name, value)
    raise SettingError(f"--setting {name}={value}: no such setting (settings: {', '.join(NAMED)}, "
                       f"or a sysctl such as vm.dirty_ratio)")


# --- reading and writing ------------------------------------------------------

def tuned_adm() -> str | None:
    return shutil.which("tuned-adm", path=os.pathsep.join([os.environ.get("PATH", os.defpath),
                                                              "/usr/sbin", "/sbin"]))


def _tuned_run(*args: str) -> str:
    exe = tuned_adm()
    if not exe:
        raise SettingError("tuned-adm is not installed")
    try:
        p = subprocess.run([exe, *args], capture_output=True, text=True, timeout=TUNED_TIMEOUT_S,
                           stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise SettingError(f"tuned-adm {' '.join(args)}: {e}") from None
    if p.returncode:
        why = next((ln.strip() for ln in (p.stderr + p.stdout).splitlines() if ln.strip()), "")
        raise SettingError(f"tuned-adm {' '.join(args)} failed (status {p.returncode}): {why}")
    return p.stdout


def tuned_active() -> str | None:
    """The active profile, or None when tuned applies none."""
    for line in _tuned_run("active").splitlines():
        if line.startswith("Current active profile:"):
            return line.split(":", 1)[1].strip() or None
    return None


def current(change: Change) -> list[str]:
    """The value now, per file (the active choice of a selector), or the tuned profile."""
    if change.setting == "tuned":
        return [tuned_active() or ""]
    if change.setting == "cpu-latency":
        return [_pm_qos_target()]
    return [_selected(_read(f)) if change.selector else _read(f).strip() for f in change.files]


def write_file(path: Path, text: str) -> None:
    try:
        with open(path, "w") as f:
            f.write(text)
    except OSError as e:
        if e.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
            raise SettingError(f"cannot write {path}: {os.strerror(e.errno).lower()} "
                               f"(settings need root, and a writable /proc/sys and /sys)") from None
        raise SettingError(f"the kernel refused it ({os.strerror(e.errno).lower()}: {path})") from None


def _pm_qos_target() -> str:
    """The latency every CPU is held to now (us): the smallest request of any
    process, or "none"."""
    try:
        with open(PM_QOS, "rb") as f:
            micros = struct.unpack("i", f.read(4))[0]
            return "none" if micros == PM_QOS_NO_REQUEST else str(micros)
    except (OSError, struct.error) as e:
        raise SettingError(f"cannot read {PM_QOS}: {e}") from None


def _hold_pm_qos(path: Path, micros: int) -> None:
    """The request lasts while the file stays open, so this process keeps it
    open until restore(), or until it ends (then the kernel drops it)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
    except OSError as e:
        raise SettingError(f"cannot open {path}: {os.strerror(e.errno).lower()} (needs root)") from None
    try:
        os.write(fd, struct.pack("i", micros))
    except OSError as e:
        os.close(fd)
        raise SettingError(f"the kernel refused it ({os.strerror(e.errno).lower()}: {path})") from None
    old = _held_requests.pop(path, None)
    if old is not None:
        os.close(old)
    _held_requests[path] = fd


def write(change: Change) -> None:
    if change.setting == "tuned":
        _tuned_run("profile", change.written)
        return
    if change.setting == "cpu-latency":
        _hold_pm_qos(change.files[0], int(change.written))
        return
    for f in change.files:
        write_file(f, change.written)


def entries(change: Change, before: list[str]) -> list[dict]:
    """Journal entries that undo the change (written before it is made)."""
    if change.setting == "tuned":
        return [{"kind": "tuned", "setting": "tuned", "before": before[0] or None}]
    if change.setting == "cpu-latency":
        return [{"kind": "pm-qos", "setting": "cpu-latency", "path": str(change.files[0]), "before": before[0]}]
    return [_file_entry(change.setting, f, b) for f, b in zip(change.files, before)]


def _file_entry(setting: str, path: Path, before: str) -> dict:
    """A limit given two ways (vm.dirty_bytes or vm.dirty_ratio) is one value:
    writing either zeroes the other, and the kernel refuses 0 for the bytes.
    So the entry puts back whichever of the pair was in force, which zeroes
    the other as it was."""
    partner = ONE_LIMIT_TWO_WAYS.get(path)
    if partner is not None and before == "0":
        in_force = _read(partner).strip()
        if in_force != "0":
            return {"kind": "file", "setting": _sysctl_name(partner), "path": str(partner), "before": in_force}
    return {"kind": "file", "setting": setting, "path": str(path), "before": before}


def _sysctl_name(path: Path) -> str:
    return ".".join(path.relative_to("/proc/sys").parts)


def _holds(path: Path, value: str) -> bool:
    """Whether the file reads as value (whitespace between numbers aside)."""
    try:
        return path.read_text().split() == str(value).split()
    except OSError:
        return False


def restore(entry: dict) -> None:
    """Undoes one journal entry; raises SettingError."""
    if entry["kind"] == "tuned":
        if entry.get("before"):
            _tuned_run("profile", entry["before"])
        else:
            _tuned_run("off")
    elif entry["kind"] == "file":
        path = Path(entry["path"])
        # already as it was (the change itself was refused, as on a container's read-only /proc/sys): nothing
        # to write, and a write that fails again would keep the journal, replayed by every later command
        if _holds(path, entry["before"]):
            return
        write_file(path, entry["before"])
    elif entry["kind"] == "pm-qos":
        fd = _held_requests.pop(Path(entry["path"]), None)
        if fd is not None:  # another process's request ended with that process
            os.close(fd)
    else:
        raise SettingError(f"unknown journal entry {entry!r}")
