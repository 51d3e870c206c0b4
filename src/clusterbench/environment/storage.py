"""For each target directory: the mount it lives on (file system type,
mount options, source) and the block devices under it (model,
rotational, I/O scheduler, write cache, read-ahead, size).

The mount is the longest mount point that prefixes the directory in
/proc/self/mountinfo (the last one wins when mounts are stacked). The
block device is found by the mount's major:minor in /sys/dev/block, and
followed down through partitions (to their disk) and device-mapper / md
devices (through slaves/) to the physical disks, whose queue settings are
the ones that shape an I/O result.
"""
from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Callable

from clusterbench.environment.sources import Context, bracketed, put

MAX_DEPTH = 8  # dm on md on partitions is 3 levels; a loop in sysfs is a bug


def _unescape(field: str) -> str:
    """mountinfo escapes space, tab, newline and backslash as \\ooo."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field)


def parse_mountinfo(text: str) -> list[dict[str, str]]:
    mounts = []
    for line in text.splitlines():
        left, sep, right = line.partition(" - ")
        a, b = left.split(), right.split()
        if not sep or len(a) < 6 or len(b) < 2:
            continue
        mounts.append({"majmin": a[2], "mount_point": _unescape(a[4]), "mount_options": a[5],
                       "fs_type": b[0], "source": _unescape(b[1]), "super_options": b[2] if len(b) > 2 else ""})
    return mounts


def find_mount(mounts: list[dict[str, str]], path: str) -> dict[str, str] | None:
    best, best_len = None, -1
    for m in mounts:
        mp = m["mount_point"]
        if path == mp or mp == "/" or path.startswith(mp.rstrip("/") + "/"):
            if len(mp) >= best_len:
                best, best_len = m, len(mp)
    return best


def _merge_options(*lists: str) -> str:
    """Per-mount and per-superblock options in one list, each once
    (NFS's vers=, proto=rdma, rsize= are superblock options)."""
    return ",".join(dict.fromkeys(o for opts in lists for o in opts.split(",") if o))


def collect(env: dict, ctx: Context) -> None:
    if not ctx.targets:
        return
    mountinfo = ctx.read("/proc/self/mountinfo")
    mounts = parse_mountinfo(mountinfo.text) if mountinfo.ok else []
    for target in ctx.targets:
        _target(env, ctx, str(target), mounts, mountinfo.error)


def _target(env: dict, ctx: Context, target: str, mounts: list[dict[str, str]], error: str | None) -> None:
    k = f"target.{target}."
    if ctx.is_real_root:
        path = os.path.realpath(target)
        if not os.path.isdir(path):
            env[k + "path_error"] = f"no such directory {target}"
    else:
        path = os.path.normpath(target)
    mount = find_mount(mounts, path)
    if mount is None:
        env[k + "fs_type_error"] = error or f"no mount in /proc/self/mountinfo contains {path}"
        return
    env[k + "mount_point"] = mount["mount_point"]
    env[k + "fs_type"] = mount["fs_type"]
    env[k + "mount_options"] = _merge_options(mount["mount_options"], mount["super_options"])
    env[k + "source"] = mount["source"]
    dev = _block_device(ctx, mount)
    if dev is None:
        env[k + "device_error"] = (f"{mount['fs_type']} on {mount['source']} is not a local block device "
                                   f"(device {mount['majmin']} not in /sys/dev/block)")
        return
    _device(env, ctx, k, dev)


def _block_device(ctx: Context, mount: dict[str, str]) -> Path | None:
    by_number = ctx.path(f"/sys/dev/block/{mount['majmin']}")
    if not mount["majmin"].startswith("0:") and by_number.exists():
        return ctx.resolve(by_number)
    # btrfs and others report an anonymous 0:N device; their source names the disk
    src = mount["source"]
    if src.startswith("/dev/"):
        name = os.path.basename(src)
        if src.startswith("/dev/mapper/"):
            name = _dm_by_name(ctx, name) or name
        if ctx.exists(f"/sys/class/block/{name}"):
            return ctx.resolve(f"/sys/class/block/{name}")
    return None


def _dm_by_name(ctx: Context, dm_name: str) -> str | None:
    for d in ctx.listdir("/sys/class/block"):
        r = ctx.read(f"/sys/class/block/{d}/dm/name")
        if r.ok and r.text.strip() == dm_name:
            return d
    return None


def leaves(ctx: Context, dev: Path, depth: int = 0) -> list[Path]:
    """The physical disks under a block device."""
    if depth > MAX_DEPTH:
        return [dev]
    slaves = ctx.listdir(dev / "slaves")
    if slaves:
        found = [leaf for s in slaves for leaf in leaves(ctx, ctx.resolve(dev / "slaves" / s), depth + 1)]
        return list(dict.fromkeys(found))
    if (dev / "partition").exists():
        return leaves(ctx, dev.parent, depth + 1)
    return [dev]


def _queue_device(dev: Path) -> Path:
    # read-ahead belongs to the device the file system sits on (a partition uses its disk's)
    return dev if (dev / "queue").exists() else dev.parent


def block_queues(target: str, ctx: Context | None = None) -> tuple[Path, list[Path]] | str:
    """(the device whose queue/read_ahead_kb the directory's file system
    uses, the physical disks whose queue/scheduler serve it), or why there
    are none (run conditions change these for one run)."""
    ctx = ctx or Context()
    mountinfo = ctx.read("/proc/self/mountinfo")
    if not mountinfo.ok:
        return mountinfo.error
    mount = find_mount(parse_mountinfo(mountinfo.text), os.path.realpath(target))
    if mount is None:
        return f"no mount in /proc/self/mountinfo contains {target}"
    dev = _block_device(ctx, mount)
    if dev is None:
        return f"{target} is on {mount['fs_type']} {mount['source']}, not a local block device"
    return _queue_device(dev), leaves(ctx, dev)


def _sectors_to_bytes(text: str) -> int:
    return int(text) * 512  # /sys/block/*/size counts 512-byte sectors whatever the device's sector size


def _device(env: dict, ctx: Context, k: str, dev: Path) -> None:
    env[k + "device"] = dev.name
    put(env, k + "size_bytes", ctx.read(dev / "size"), _sectors_to_bytes, ctx.display(dev / "size"))
    if (dev / "dm").exists():
        put(env, k + "dm_name", ctx.read(dev / "dm" / "name"))
    md = dev if (dev / "md").exists() else dev.parent if (dev.parent / "md").exists() else None
    if md is not None:
        put(env, k + "raid_level", ctx.read(md / "md" / "level"))
    queue_dev = _queue_device(dev)
    put(env, k + "read_ahead_kb", ctx.read(queue_dev / "queue" / "read_ahead_kb"), int,
        ctx.display(queue_dev / "queue" / "read_ahead_kb"))
    disks = leaves(ctx, dev)
    env[k + "disks"] = " ".join(d.name for d in disks)
    _per_disk(env, ctx, k + "model", disks, "device/model", lambda t: " ".join(t.split()))
    _per_disk(env, ctx, k + "rotational", disks, "queue/rotational", lambda t: {"1": True, "0": False}[t.strip()])
    _per_disk(env, ctx, k + "scheduler", disks, "queue/scheduler", bracketed)
    _per_disk(env, ctx, k + "write_cache", disks, "queue/write_cache", str.strip)


def _per_disk(env: dict, ctx: Context, key: str, disks: list[Path], rel: str,
              convert: Callable[[str], object]) -> None:
    """One value when the disks agree, else "sdc: x, sdd: y"."""
    if len(disks) == 1:
        put(env, key, ctx.read(disks[0] / rel), convert, ctx.display(disks[0] / rel))
        return
    values: list[tuple[str, object]] = []
    first_error = None
    for d in disks:
        one: dict = {}
        put(one, "v", ctx.read(d / rel), convert, ctx.display(d / rel))
        values.append((d.name, one.get("v")))
        first_error = first_error or one.get("v_error")
    distinct = {repr(v) for _, v in values}
    if all(v is None for _, v in values):
        env[key + "_error"] = first_error
    elif len(distinct) == 1:
        env[key] = values[0][1]
    else:
        env[key] = ", ".join(f"{name}: {'unavailable' if v is None else v}" for name, v in values)

