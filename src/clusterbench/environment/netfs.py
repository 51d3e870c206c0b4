"""For each target directory on a network file system: what it is mounted
from and how, and the link the client reaches the server through.

Keys, under target.<dir>.netfs.: kind (nfs, lustre, glusterfs, ...),
servers, export (NFS export, Gluster volume, Lustre file system name);
NFS's client options that shape a result (vers, proto, rsize/wsize,
actimeo); Lustre's default striping (from `lfs getstripe -d` when lfs is
installed); Gluster's volume type and bricks (from the client's own copy
of the volume graph, MOUNT/.meta/graphs/active/volfile: asking glusterd
would need the gluster CLI, which writes under /var/lib/glusterd); and
the interface the route to the first server leaves by, its nominal speed
and its shaped rate (a tc token bucket on it), whose lower one is
link_rate_mbps, the rate a transfer to or from the server cannot beat.
"""
from __future__ import annotations

import ipaddress
import os
import re

from clusterbench.environment.sources import Context, put
from clusterbench.environment.storage import find_mount, parse_mountinfo

# fs_type as /proc/self/mountinfo names it -> the kind of network file system
KINDS = {"nfs": "nfs", "nfs4": "nfs", "lustre": "lustre", "fuse.glusterfs": "glusterfs", "glusterfs": "glusterfs",
         "gpfs": "gpfs", "beegfs": "beegfs", "cifs": "cifs", "smb3": "cifs", "ceph": "ceph", "fuse.ceph": "ceph",
         "fuse.sshfs": "sshfs", "9p": "9p", "virtiofs": "virtiofs"}
NFS_OPTIONS = ("vers", "proto", "rsize", "wsize", "actimeo", "acregmin", "acregmax", "acdirmin", "acdirmax",
               "nconnect", "sec", "hard", "soft", "noac", "lookupcache")
_TC_RATE = re.compile(r"\brate (\d+(?:\.\d+)?)([KMGT]?)bit\b")
_TC_UNIT = {"": 1, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}


def parse_source(kind: str, source: str, options: dict[str, str]) -> tuple[list[str], str]:
    """(servers, export) from a mount's source field."""
    if kind == "lustre":
        # mgs1@o2ib:mgs2@o2ib:/fsname (a failover MGS pair may also be "a@o2ib,b@o2ib")
        nids, _, fsname = source.rpartition(":/")
        return [n.split("@")[0] for n in re.split(r"[:,]", nids) if n], fsname
    if kind in ("nfs", "glusterfs", "cifs", "ceph", "sshfs") and ":" in source.lstrip("["):
        host, _, export = source.rpartition(":")
        servers = [h for h in host.strip("[]").split(",") if h]
        if kind == "cifs":   # //server/share
            servers = [source.lstrip("/").split("/")[0]]
        if kind == "nfs" and options.get("addr"):
            servers = [options["addr"]]   # the address the kernel resolved the server to
        return servers, export.lstrip("/") if kind == "glusterfs" else export
    if kind == "cifs" and source.startswith("//"):
        server, _, share = source[2:].partition("/")
        return [server], share
    return [], source


def options_dict(options: str) -> dict[str, str]:
    out = {}
    for o in options.split(","):
        k, _, v = o.partition("=")
        if k:
            out[k] = v
    return out


def parse_gluster_volfile(text: str) -> dict:
    """The client's volume graph -> volume type (as `gluster volume info`
    names it), brick count and bricks (server:path)."""
    volumes: list[dict] = []
    for line in text.splitlines():
        words = line.split()
        if words[:1] == ["volume"] and len(words) > 1:
            volumes.append({"name": words[1], "type": "", "options": {}, "subvolumes": []})
        elif volumes and words[:1] == ["type"] and len(words) > 1:
            volumes[-1]["type"] = words[1]
        elif volumes and words[:1] == ["option"] and len(words) > 2:
            volumes[-1]["options"][words[1]] = " ".join(words[2:])
        elif volumes and words[:1] == ["subvolumes"]:
            volumes[-1]["subvolumes"] = words[1:]
    clients = [v for v in volumes if v["type"] == "protocol/client"]
    if not clients:
        raise ValueError("no protocol/client in the volume graph")
    replicas = [v for v in volumes if v["type"] == "cluster/replicate"]
    disperse = [v for v in volumes if v["type"] == "cluster/disperse"]
    grouped = replicas or disperse
    if grouped:
        base = "Replicate" if replicas else "Disperse"
        vtype = base if len(grouped) == 1 else f"Distributed-{base}"
    else:
        vtype = "Distribute"
    return {"volume_type": vtype, "brick_count": len(clients),
            "bricks": " ".join(f"{v['options'].get('remote-host', '?')}:{v['options'].get('remote-subvolume', '?')}"
                               for v in clients)}


def parse_lfs_getstripe(text: str) -> dict:
    """`lfs getstripe -d DIR` -> stripe count and size (bytes)."""
    out = {}
    for key, name in (("stripe_count", "stripe_count"), ("stripe_size", "stripe_size_bytes"),
                      ("lmm_stripe_count", "stripe_count"), ("lmm_stripe_size", "stripe_size_bytes")):
        m = re.search(rf"\b{key}:\s*(-?\d+)", text)
        if m and name not in out:
            out[name] = int(m.group(1))
    if not out:
        raise ValueError("no stripe_count or stripe_size in lfs getstripe output")
    return out


def parse_route_dev(text: str) -> str:
    """`ip route get ADDR` -> the interface the packets leave by."""
    m = re.search(r"\bdev (\S+)", text)
    if not m:
        raise ValueError("no 'dev' in ip route get output")
    return m.group(1)


def parse_tc_rate_mbps(text: str) -> float | None:
    """The lowest token-bucket (or other) rate of `tc qdisc show dev X`, in
    Mbit/s; None when the interface is not shaped."""
    rates = [float(m.group(1)) * _TC_UNIT[m.group(2)] / 1e6 for m in _TC_RATE.finditer(text)]
    return min(rates) if rates else None


def collect(env: dict, ctx: Context) -> None:
    if not ctx.targets:
        return
    mountinfo = ctx.read("/proc/self/mountinfo")
    if not mountinfo.ok:
        return   # storage says why
    mounts = parse_mountinfo(mountinfo.text)
    for target in ctx.targets:
        mount = find_mount(mounts, str(target) if not ctx.is_real_root else _real(str(target)))
        if mount is None or mount["fs_type"] not in KINDS:
            continue
        _target(env, ctx, f"target.{target}.netfs.", mount)


def _real(path: str) -> str:
    return os.path.realpath(path)


def _target(env: dict, ctx: Context, k: str, mount: dict[str, str]) -> None:
    kind = KINDS[mount["fs_type"]]
    options = options_dict(mount["mount_options"] + "," + mount["super_options"])
    servers, export = parse_source(kind, mount["source"], options)
    env[k + "kind"] = kind
    if servers:
        env[k + "servers"] = ",".join(servers)
    else:
        env[k + "servers_error"] = f"no server in the mount source {mount['source']!r}"
    env[k + "export"] = export
    if kind == "nfs":
        for name in NFS_OPTIONS:
            if name in options:
                env[k + f"nfs.{name}"] = options[name] if options[name] else True
    elif kind == "glusterfs":
        put(env, k + "gluster", ctx.read(f"{mount['mount_point']}/.meta/graphs/active/volfile"),
            parse_gluster_volfile)
        g = env.pop(k + "gluster", None)
        if isinstance(g, dict):
            for name, value in g.items():
                env[k + f"gluster.{name}"] = value
    elif kind == "lustre":
        r = ctx.run(["lfs", "getstripe", "-d", mount["mount_point"]])
        put(env, k + "lustre", r, parse_lfs_getstripe)
        s = env.pop(k + "lustre", None)
        if isinstance(s, dict):
            for name, value in s.items():
                env[k + f"lustre.{name}"] = value
    if servers:
        _link(env, ctx, k, servers[0])


def _link(env: dict, ctx: Context, k: str, server: str) -> None:
    try:
        address = str(ipaddress.ip_address(server))
    except ValueError:
        r = ctx.run(["getent", "ahostsv4", server])
        if not r.ok or not r.text.split():
            env[k + "interface_error"] = r.error or f"cannot resolve {server}"
            return
        address = r.text.split()[0]
    dev = put(env, k + "interface", ctx.run(["ip", "route", "get", address]), parse_route_dev)
    if dev is None:
        return
    speed = ctx.read(f"/sys/class/net/{dev}/speed")
    nominal = None
    link = ctx.run(["ip", "-o", "link", "show", "dev", dev])
    sys_index = ctx.read(f"/sys/class/net/{dev}/ifindex")
    if link.ok and sys_index.ok and link.text.split(":")[0].strip() != sys_index.text.strip():
        # nsenter into a network namespace keeps the /sys of the one it came
        # from: that /sys/class/net/<dev> is another interface of the same name
        env[k + "interface_speed_mbps_error"] = (f"/sys shows another network namespace's {dev} "
                                                 f"(ifindex {sys_index.text.strip()}, not {link.text.split(':')[0]})")
    elif speed.ok and speed.text.strip().isdigit() and int(speed.text) > 0:
        nominal = env[k + "interface_speed_mbps"] = int(speed.text)
    else:
        env[k + "interface_speed_mbps_error"] = speed.error or f"not reported by the driver ({speed.text.strip()})"
    tc = ctx.run(["tc", "qdisc", "show", "dev", dev])
    shaped = parse_tc_rate_mbps(tc.text) if tc.ok else None
    if shaped is not None:
        env[k + "interface_shaped_mbps"] = shaped
    known = [r for r in (nominal, shaped) if r]
    if known:
        env[k + "link_rate_mbps"] = min(known)
