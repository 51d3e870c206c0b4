"""A GlusterFS volume served from test hosts (`clusterbench testbed up
--glusterfs N [--bricks B] [--layout L]`).

The last N test hosts are servers: each runs glusterd inside its own
namespaces, and glusterd's state stays private to the test cluster. glusterd
and its brick processes write under /var/log/glusterfs, /run/gluster and
/var/lib/glusterd whatever their options say, so they run in a private mount
namespace in which those three are bind mounts of the server's directory
<dir>/glusterfs/<host>/{log,run,lib}; the `gluster` CLI (which writes
/var/lib/glusterd/geo-replication/ wherever it runs) runs the same way.
Bricks are directories under <dir>/glusterfs/<host>/bricks.

Every other host is a client: its FUSE client process runs inside the
host's network namespace (so its traffic crosses the host's own link) and
mounts at <dir>/glusterfs/clients/<host>; a command run on that host sees
its own mount at the volume path <dir>/glusterfs/volume (cluster.command
and the ssh stand-in bind it there), so an MPI job sees one path on every
host, and each host has its own page cache, as on a real cluster. The
machine itself (the login node) mounts the volume at that path too.

Teardown needs no log: every mount under <dir>/glusterfs is unmounted,
every process whose command line names <dir>/glusterfs is killed (glusterd,
bricks and FUSE clients all do), then the directory is removed; so `down`
works after a crash at any point.
"""
from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import signal
import subprocess
import time
from pathlib import Path

from clusterbench.testbed.netns import TestBedError

LAYOUTS = ("distributed", "replicated", "dispersed")
MIN_BRICKS = {"distributed": 1, "replicated": 2, "dispersed": 3}
SYSTEM_DIRS = {"log": "/var/log/glusterfs", "run": "/run/gluster", "lib": "/var/lib/glusterd"}
RUN_DIR = "/run/gluster"    # made at boot by the package's tmpfiles.d entry (not in a fresh container)
SUBDIR = "glusterfs"
READY_S = 20.0


class BadVolume(ValueError):
    """A --glusterfs request that cannot be built (the CLI exits 2)."""


def check(hosts: int, servers: int, bricks: int | None, layout: str) -> int:
    """The brick count to build, or BadVolume saying why not (before anything is made)."""
    if servers < 1:
        raise BadVolume(f"--glusterfs {servers}: a GlusterFS volume needs at least 1 server host")
    if servers > hosts:
        raise BadVolume(f"--glusterfs {servers}: more servers than the {hosts} test hosts (--hosts)")
    if layout not in LAYOUTS:
        raise BadVolume(f"--layout {layout!r}: one of {', '.join(LAYOUTS)}")
    need = MIN_BRICKS[layout]
    count = bricks if bricks is not None else max(servers, need)
    if count < servers:
        raise BadVolume(f"--bricks {count}: fewer bricks than the {servers} servers (each serves at least one)")
    if count < need:
        raise BadVolume(f"--layout {layout} needs at least {need} bricks, --bricks is {count}")
    missing = [t for t in ("glusterd", "gluster", "mount.glusterfs") if not shutil.which(t)]
    missing += [d for d in SYSTEM_DIRS.values() if not os.path.isdir(d) and d != RUN_DIR]
    if missing:
        raise BadVolume(f"GlusterFS is not installed ({', '.join(missing)} missing): "
                        "apt-get install glusterfs-server glusterfs-client")
    return count


def root(state_dir: Path) -> Path:
    return state_dir / SUBDIR


def volume_path(state_dir: Path) -> Path:
    """Where every host (and the login node) sees the volume."""
    return root(state_dir) / "volume"


def client_mount(state_dir: Path, host: str) -> Path:
    return root(state_dir) / "clients" / host


def brick_dirs(state_dir: Path, info: dict) -> dict[str, list[Path]]:
    """{server host name: its brick directories}."""
    out: dict[str, list[Path]] = {}
    for b in info["bricks"]:
        out.setdefault(b["host"], []).append(Path(b["path"]))
    return out


def _private(server_dir: Path, argv: list[str]) -> list[str]:
    """argv in a private mount namespace where the three system directories
    are this server's own."""
    binds = " && ".join(f"mount --bind {shlex.quote(str(server_dir / k))} {d}" for k, d in SYSTEM_DIRS.items())
    return ["unshare", "--mount", "--propagation", "private", "--", "sh", "-c", f'{binds} && exec "$@"', "sh", *argv]


def _run(argv: list[str], what: str, timeout: float = 60) -> str:
    p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    if p.returncode:
        msg = (p.stderr.strip() or p.stdout.strip() or f"exit status {p.returncode}").splitlines()[-1]
        raise TestBedError(f"{what}: {msg}")
    return p.stdout


def gluster_cli(cluster, server: str, args: list[str], timeout: float = 60) -> str:
    """The gluster CLI against one server's glusterd, its writes kept private."""
    sdir = root(cluster.dir) / server
    argv = ["gluster", "--mode=script", "--glusterd-sock=/run/gluster/glusterd.socket",
            f"--log-file={sdir / 'log' / 'cli.log'}", *args]
    return _run(cluster.command(server, _private(sdir, argv)), f"gluster {' '.join(args)} on {server}", timeout)


def _glusterd_volfile(address: str) -> str:
    return f"""volume management
    type mgmt/glusterd
    option working-directory /var/lib/glusterd
    option run-directory /run/gluster
    option glusterd-sockfile /run/gluster/glusterd.socket
    option transport-type socket
    option transport.socket.bind-address {address}
    option transport.socket.listen-port 24007
    option transport.socket.keepalive-time 10
    option transport.socket.keepalive-interval 2
    option ping-timeout 0
    option event-threads 1
    option max-port 60999
end-volume
"""


def up(cluster, servers: int, bricks: int, layout: str) -> dict:
    """Starts glusterd on the last `servers` hosts, creates and starts one
    volume of `bricks` bricks, mounts it on every other host and on the
    login node. Returns the facts stored in the cluster's state."""
    hosts = cluster.hosts
    server_hosts, client_hosts = hosts[len(hosts) - servers:], hosts[:len(hosts) - servers]
    r = root(cluster.dir)
    volume = f"cbk{cluster.id}"
    info = {"volume": volume, "layout": layout, "servers": [h.name for h in server_hosts],
            "server_addresses": [h.address for h in server_hosts], "clients": [h.name for h in client_hosts],
            "bricks": [], "path": str(volume_path(cluster.dir)), "dir": str(r)}
    for i in range(bricks):
        h = server_hosts[i % servers]
        info["bricks"].append({"host": h.name, "address": h.address,
                               "path": str(r / h.name / "bricks" / f"b{i}")})
    if not os.path.isdir(RUN_DIR):
        # what the package's /usr/lib/tmpfiles.d/glusterfs-server.conf makes at boot, so
        # there is something to bind-mount over; the package's own directory, left in place
        if shutil.which("systemd-tmpfiles"):
            subprocess.run(["systemd-tmpfiles", "--create", "glusterfs-server.conf"], capture_output=True)
        if not os.path.isdir(RUN_DIR):
            os.mkdir(RUN_DIR, 0o775)
    for h in server_hosts:
        sdir = r / h.name
        for k in (*SYSTEM_DIRS, "bricks"):
            (sdir / k).mkdir(parents=True, exist_ok=True)
        (sdir / "lib" / "groups").mkdir(exist_ok=True)    # `volume set group` profiles; no hooks: they
        (sdir / "glusterd.vol").write_text(_glusterd_volfile(h.address))   # would touch Samba/NFS config
        _run(cluster.command(h.name, _private(sdir, ["glusterd", "-f", str(sdir / "glusterd.vol"),
                                                     "-p", str(sdir / "glusterd.pid"),
                                                     "-l", str(sdir / "log" / "glusterd.log")])),
             f"glusterd on {h.name}")
    for b in info["bricks"]:
        Path(b["path"]).mkdir(parents=True, exist_ok=True)
    first = server_hosts[0].name
    for h in server_hosts:
        _wait(lambda h=h: gluster_cli(cluster, h.name, ["pool", "list"], timeout=10), f"glusterd on {h.name}")
    for h in server_hosts[1:]:
        gluster_cli(cluster, first, ["peer", "probe", h.address])
    for h in server_hosts[1:]:
        _wait(lambda h=h: _connected(cluster, first, h.address), f"peer {h.name} to join the pool")
    shape = {"distributed": [], "replicated": ["replica", str(bricks)],
             "dispersed": ["disperse", str(bricks), "redundancy", "1"]}[layout]
    gluster_cli(cluster, first, ["volume", "create", volume, *shape, "transport", "tcp",
                                 *(f"{b['address']}:{b['path']}" for b in info["bricks"]), "force"])
    gluster_cli(cluster, first, ["volume", "start", volume])
    server = server_hosts[0].address
    for h in client_hosts:
        m = client_mount(cluster.dir, h.name)
        m.mkdir(parents=True, exist_ok=True)
        _mount(["nsenter", f"--net=/run/netns/{h.ns}", "--"], server, volume, m, r / f"client-{h.name}.log")
    vp = volume_path(cluster.dir)
    vp.mkdir(exist_ok=True)
    _mount([], server, volume, vp, r / "client-login.log")
    if client_hosts:   # MPI jobs on the volume run on the client hosts only
        info["hostfile"] = str(r / "hostfile")
        Path(info["hostfile"]).write_text("".join(f"{h.name}\n" for h in client_hosts))
    return info


def _connected(cluster, server: str, address: str) -> None:
    out = gluster_cli(cluster, server, ["pool", "list"], timeout=10)
    if not any(address in line and "Connected" in line for line in out.splitlines()):
        raise TestBedError(f"{address} not yet connected")


def _wait(probe, what: str) -> None:
    deadline = time.monotonic() + READY_S
    while True:
        try:
            probe()
            return
        except (TestBedError, subprocess.TimeoutExpired) as e:
            if time.monotonic() > deadline:
                raise TestBedError(f"waited {READY_S:.0f} s for {what}: {e}") from None
            time.sleep(0.2)


def _mount(prefix: list[str], server: str, volume: str, where: Path, log: Path) -> None:
    _run([*prefix, "mount", "-t", "glusterfs", "-o", f"log-file={log}", f"{server}:/{volume}", str(where)],
         f"mount {server}:/{volume} on {where}")
    _wait(lambda: where.stat() and _is_mount(where) or _fail(f"{where} not mounted"), f"the mount on {where}")


def _fail(msg: str):
    raise TestBedError(msg)


def _mount_points() -> list[str]:
    from clusterbench.environment.storage import parse_mountinfo

    return [m["mount_point"] for m in parse_mountinfo(Path("/proc/self/mountinfo").read_text())]


def _is_mount(path: Path) -> bool:
    return str(path) in _mount_points()


def _our_pids(r: Path) -> list[int]:
    """GlusterFS processes (glusterd, glusterfsd bricks, glusterfs clients,
    the gluster CLI) whose command line names the test cluster's glusterfs
    directory: a user's shell or editor there is left alone."""
    needle = str(r).encode()
    pids = []
    for p in Path("/proc").iterdir():
        if not p.name.isdigit() or int(p.name) == os.getpid():
            continue
        try:
            if (p / "comm").read_text().startswith("gluster") and needle in (p / "cmdline").read_bytes():
                pids.append(int(p.name))
        except OSError:
            pass
    return pids


def down(state_dir: Path) -> list[str]:
    """Unmounts, kills and removes everything under <dir>/glusterfs (see the
    module doc); idempotent. Returns what it removed."""
    r = root(state_dir)
    removed = []
    prefix = str(r) + "/"
    for mp in sorted((m for m in _mount_points() if m.startswith(prefix)), key=len, reverse=True):
        # an unreachable server makes a plain umount hang on FUSE; -l detaches at once
        if subprocess.run(["umount", mp], capture_output=True, timeout=30).returncode:
            subprocess.run(["umount", "-l", mp], capture_output=True)
        removed.append(f"mount {mp}")
    for _ in range(100):
        pids = _our_pids(r)
        if not pids:
            break
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                continue
            if f"process {pid}" not in removed:
                removed.append(f"process {pid}")
        time.sleep(0.05)
    for _ in range(50):
        if not r.is_dir():
            break
        try:
            shutil.rmtree(r)
            removed.append(f"tree {r}")
            break
        except OSError:
            # a process still starting when the loop above looked (an `up`
            # killed halfway: its glusterd exec'd a moment later) wrote into
            # the tree while it was removed: end it too, then try again
            for pid in _our_pids(r):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.1)
    if r.is_dir():
        raise TestBedError(f"{r}: could not remove it; a process still writes there (look with fuser -v {r})")
    return removed
