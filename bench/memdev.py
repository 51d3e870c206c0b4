"""A memory-backed device for the I/O benches: ext4 on a loop device with
direct I/O (`losetup --direct-io=on`) over a file on a private tmpfs.

On a virtual machine the real disk is often served from the host's cache:
the same tool run twice differs by up to 5x and ratios against fio swing
from 0.85 to 1.8. This device has no host cache behind it, so the same
comparison is repeatable; it measures the tools, not the storage. It is
created for one bench run and removed after it, also on Ctrl-C and SIGTERM
(needs root: mount, losetup, mkfs.ext4).

    with memory_device(2 << 30) as mnt:   # a Path: ext4, mounted
        ...

While a bench runs on that device, every CPU is held out of its idle states
(see cpus_kept_awake), the same for both tools.
"""
from __future__ import annotations

import contextlib
import os
import signal
import struct
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

EXT4_SLACK_BYTES = 256 << 20  # journal, inode tables, reserved blocks


def available() -> str | None:
    """None when the device can be made here, else why not."""
    if os.geteuid() != 0:
        return "needs root (mount, losetup)"
    for tool in ("losetup", "mkfs.ext4", "mount", "umount"):
        if not any(os.access(Path(d) / tool, os.X_OK) for d in os.environ.get("PATH", "").split(os.pathsep)
                   + ["/sbin", "/usr/sbin"]):
            return f"no {tool}"
    return None


def _run(cmd: list[str]) -> str:
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode:
        raise RuntimeError(f"{' '.join(cmd)}: {p.stderr.strip()}")
    return p.stdout.strip()


@contextlib.contextmanager
def memory_device(data_bytes: int, prefix: str = "cbk-bench"):
    """Yields the mount point of a fresh ext4 holding data_bytes plus slack."""
    why = available()
    if why:
        sys.exit(f"memory device: {why}")
    device_bytes = data_bytes + data_bytes // 4 + EXT4_SLACK_BYTES
    base = Path(tempfile.mkdtemp(prefix=f"{prefix}-memdev-"))
    tmpfs, mnt = base / "tmpfs", base / "ext4"
    tmpfs.mkdir()
    mnt.mkdir()
    mounted: list[Path] = []
    loop = None
    previous = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}

    def stop(signum, _frame):  # unwinds through the finally below
        if signum == signal.SIGINT:
            raise KeyboardInterrupt
        raise SystemExit(128 + signum)

    for s in previous:
        signal.signal(s, stop)
    try:
        _run(["mount", "-t", "tmpfs", "-o", f"size={device_bytes + (16 << 20)},mode=0700", "cbk-bench-memdev",
              str(tmpfs)])
        mounted.append(tmpfs)
        image = tmpfs / "device.img"
        with open(image, "wb") as f:
            os.posix_fallocate(f.fileno(), 0, device_bytes)  # tmpfs pages now, not on first write
        loop = _run(["losetup", "--find", "--show", "--direct-io=on", str(image)])
        _run(["mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0", loop])
        _run(["mount", loop, str(mnt)])
        mounted.append(mnt)
        _prime(mnt, data_bytes)
        yield mnt
    finally:
        if mnt in mounted:
            subprocess.run(["umount", str(mnt)], capture_output=True)
        if loop:
            subprocess.run(["losetup", "-d", loop], capture_output=True)
        if tmpfs in mounted:  # the loop lets go of its file asynchronously (seconds, under load)
            for _ in range(300):
                if subprocess.run(["umount", str(tmpfs)], capture_output=True).returncode == 0:
                    break
                time.sleep(0.1)
            else:  # detached now, freed when the loop lets go
                subprocess.run(["umount", "--lazy", str(tmpfs)], capture_output=True)
        for d in (mnt, tmpfs, base):  # empty once unmounted; never a recursive delete
            with contextlib.suppress(OSError):
                d.rmdir()
        for s, h in previous.items():
            signal.signal(s, h)


def _prime(mnt: Path, data_bytes: int) -> None:
    """Writes data_bytes once through the new file system and removes it, so
    the first pair does not pay for first allocations (ext4's uninitialised
    block groups) that every later pair is spared."""
    chunk = b"\0" * (8 << 20)
    path = mnt / ".prime"
    with open(path, "wb") as f:
        for _ in range(max(1, data_bytes // len(chunk))):
            f.write(chunk)
        f.flush()
        os.fsync(f.fileno())
    path.unlink()
    os.sync()


def describe(mnt: Path) -> str:
    src = _run(["findmnt", "-n", "-o", "SOURCE", str(mnt)])
    dio = Path(f"/sys/block/{Path(src).name}/loop/dio")
    return f"memory device {src} (ext4, loop direct-io={dio.read_text().strip() if dio.exists() else '?'}, on tmpfs)"


@contextlib.contextmanager
def cpus_kept_awake():
    """Holds every CPU out of its idle states while open: a PM QoS request of
    0 us on /dev/cpu_dma_latency, as tuned's latency-performance profile makes.
    Why: a virtual machine whose idle is a halt (cpuidle haltpoll with
    guest_halt_poll_ns 0, as on this bench's VMs) pays a VM exit on every
    wake-up of an idle vCPU. At queue depth 1 on the memory device each I/O
    wakes the loop's worker and then the submitter, and whether those land on
    a halted vCPU depends on where the scheduler places them, which varied
    from run to run: fio got 20-30 % more IOPS than cbk; with the CPUs held
    awake both ran at about three times that, level (2026-11-26, randread
    4 KiB QD 1; docs/kernels/randio.md). The bench scripts do not import the
    clusterbench package, so this does here what `--setting cpu-latency=0`
    does for a run (clusterbench/conditions/settings.py).
    Yields a description, or None when the request cannot be made."""
    try:
        fd = os.open("/dev/cpu_dma_latency", os.O_WRONLY)
    except OSError as e:
        print(f"CPU idle states left as they are: /dev/cpu_dma_latency: {e.strerror}", file=sys.stderr)
        yield None
        return
    try:
        os.write(fd, struct.pack("i", 0))  # the request lasts as long as the file is open
        yield "CPUs held out of idle (PM QoS cpu_dma_latency 0 us)"
    finally:
        os.close(fd)


@dataclass
class Place:
    """Where a bench runs: its label, its directory, and whether the CPUs are kept awake there."""
    label: str
    path: Path
    keep_cpus_awake: bool

    @contextlib.contextmanager
    def conditions(self):
        """Yields the label with the run conditions held for this place."""
        if not self.keep_cpus_awake:
            yield self.label
            return
        with cpus_kept_awake() as held:
            yield f"{self.label}; {held}" if held else self.label


@contextlib.contextmanager
def places(device: str, disk_dir: str, data_bytes: int, prefix: str = "cbk-bench", cpu_idle: str = "os"):
    """The places a bench runs in for --device disk, memory or both, the
    memory device made for the run and removed after it. With both, a machine
    that cannot make one runs the disk only. cpu_idle (--cpu-idle): awake
    holds the CPUs out of idle everywhere, os nowhere, auto on the memory
    device only. The default is os: a user's CPUs are left to the OS, so the
    ratio that counts is the one measured so (#39); awake is the option."""
    with contextlib.ExitStack() as stack:
        out: list[Place] = []
        if device in ("disk", "both"):
            out.append(Place(f"disk: {os.path.abspath(disk_dir)}", Path(disk_dir), cpu_idle == "awake"))
        if device in ("memory", "both"):
            why = available()
            if why and device == "both":
                print(f"memory device skipped: {why}", file=sys.stderr)
            else:
                mnt = stack.enter_context(memory_device(data_bytes, prefix))
                out.append(Place(describe(mnt), mnt, cpu_idle != "os"))
        yield out


def add_argument(ap) -> None:
    ap.add_argument("--device", choices=("disk", "memory", "both"), default="both",
                    help="disk = in --dir; memory = on a memory-backed ext4 (loop device with direct I/O over "
                         "tmpfs, made and removed by the bench; root); both (default) = one after the other")
    ap.add_argument("--cpu-idle", choices=("auto", "awake", "os"), default="os",
                    help="awake = hold the CPUs out of idle states (PM QoS cpu_dma_latency 0) for both tools; "
                         "os (default) = leave them to the OS, as a user's are; auto = awake on the memory "
                         "device, os on the disk")
