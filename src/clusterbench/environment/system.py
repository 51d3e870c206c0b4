"""Host, OS, kernel and the kernel settings that move I/O and memory
results: tuned profile, vm.dirty_*, transparent huge pages, clock source."""
from __future__ import annotations

import datetime as dt

from clusterbench.environment.sources import Context, Reading, bracketed, put, put_file

# Page-cache writeback: decides how much a buffered write can hide (E1).
VM_SETTINGS = ("dirty_ratio", "dirty_background_ratio", "dirty_bytes", "dirty_background_bytes",
               "dirty_expire_centisecs", "dirty_writeback_centisecs", "swappiness", "zone_reclaim_mode")
# Motherboard and firmware, readable without root (serial numbers are not collected).
DMI = {"sys_vendor": "system.vendor", "product_name": "system.product", "board_vendor": "system.board_vendor",
       "board_name": "system.board", "bios_version": "system.bios_version"}


def parse_os_release(text: str) -> dict[str, str]:
    out = {}
    for line in text.splitlines():
        k, sep, v = line.strip().partition("=")
        if sep and not k.startswith("#"):
            out[k] = v.strip().strip("\"'")
    return out


def collect(env: dict, ctx: Context) -> None:
    put_file(env, "host.name", ctx, "/proc/sys/kernel/hostname")
    for name, key in DMI.items():
        r = ctx.read(f"/sys/class/dmi/id/{name}")
        # firmware fills unused fields with placeholders; those are no value
        if r.ok and r.text.strip() in ("", "To Be Filled By O.E.M.", "Default string", "Not Specified"):
            r = Reading(error=f"placeholder {r.text.strip()!r} in /sys/class/dmi/id/{name}")
        put(env, key, r)
    _os(env, ctx)
    put_file(env, "kernel.release", ctx, "/proc/sys/kernel/osrelease")
    put_file(env, "kernel.version", ctx, "/proc/sys/kernel/version")
    put_file(env, "kernel.cmdline", ctx, "/proc/cmdline")
    put_file(env, "kernel.clocksource", ctx, "/sys/devices/system/clocksource/clocksource0/current_clocksource")
    tuned = ctx.read("/etc/tuned/active_profile")
    if tuned.ok and not tuned.text.strip():
        tuned = Reading(error="/etc/tuned/active_profile is empty (tuned is off)")
    put(env, "tuned.profile", tuned)
    for name in VM_SETTINGS:
        put_file(env, f"vm.{name}", ctx, f"/proc/sys/vm/{name}", int)
    # System V IPC limits (per IPC namespace): what MPI shared-memory transports may allocate
    for name in ("shmmax", "shmall", "shmmni"):
        put_file(env, f"kernel.{name}", ctx, f"/proc/sys/kernel/{name}", int)
    for name in ("enabled", "defrag"):
        put_file(env, f"thp.{name}", ctx, f"/sys/kernel/mm/transparent_hugepage/{name}", bracketed)
    _times(env, ctx)


def _os(env: dict, ctx: Context) -> None:
    rel = ctx.read("/etc/os-release")
    if not rel.ok:
        rel = ctx.read("/usr/lib/os-release")  # the fallback os-release(5) names
    if not rel.ok:
        env["os.name_error"] = "no such file /etc/os-release or /usr/lib/os-release" if "no such file" in rel.error \
            else rel.error
        return
    fields = parse_os_release(rel.text)
    name = fields.get("PRETTY_NAME") or " ".join(x for x in (fields.get("NAME"), fields.get("VERSION")) if x)
    if name:
        env["os.name"] = name
    else:
        env["os.name_error"] = "no PRETTY_NAME or NAME in /etc/os-release"
    for field, key in (("ID", "os.id"), ("VERSION_ID", "os.version_id")):
        if field in fields:
            env[key] = fields[field]


def _times(env: dict, ctx: Context) -> None:
    stat = ctx.read("/proc/stat")
    put(env, "system.boot_time", stat, lambda t: dt.datetime.fromtimestamp(
        int(next(ln.split()[1] for ln in t.splitlines() if ln.startswith("btime "))),
        dt.timezone.utc).isoformat(timespec="seconds"), "/proc/stat")
    put_file(env, "system.load_1min", ctx, "/proc/loadavg", lambda t: float(t.split()[0]))
