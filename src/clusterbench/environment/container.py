"""Whether this process runs inside a container, and which runtime made it:
a container's cgroup limits, its own MPI and its file systems (overlay,
bind mounts) all change what a benchmark measures.

Markers, first match wins: Apptainer/Singularity export APPTAINER_CONTAINER
or SINGULARITY_CONTAINER (the image) and create /.singularity.d; Podman
writes /run/.containerenv (with engine, image and name when not rootless)
and sets container=podman; Docker creates /.dockerenv; other engines set
`container` (systemd-nspawn, lxc) or leave their name in /proc/1/cgroup.
No marker: "none", which says only that none of these was found."""
from __future__ import annotations

import os
import re
from typing import Mapping

from clusterbench.environment.sources import Context

CGROUP_ENGINES = (("kubepods", "kubernetes"), ("docker", "docker"), ("libpod", "podman"),
                  ("containerd", "containerd"), ("lxc", "lxc"))


def containerenv_fields(text: str) -> dict[str, str]:
    """key="value" lines of Podman's /run/.containerenv."""
    return {m.group(1): m.group(2) for m in re.finditer(r'^(\w+)="(.*)"$', text, re.M)}


def detect(ctx: Context, environ: Mapping[str, str]) -> dict[str, object]:
    for var, runtime in (("APPTAINER_CONTAINER", "apptainer"), ("SINGULARITY_CONTAINER", "singularity")):
        if environ.get(var):
            return {"container.runtime": runtime, "container.image": environ[var],
                    "container.evidence": f"${var}"}
    if ctx.exists("/.singularity.d"):
        return {"container.runtime": "apptainer", "container.evidence": "/.singularity.d"}
    podman = ctx.read("/run/.containerenv")
    if podman.ok:
        fields = containerenv_fields(podman.text)
        out: dict[str, object] = {"container.runtime": "podman", "container.evidence": "/run/.containerenv"}
        if fields.get("engine"):
            out["container.engine"] = fields["engine"]
        if fields.get("image"):
            out["container.image"] = fields["image"]
        return out
    if ctx.exists("/.dockerenv"):
        return {"container.runtime": "docker", "container.evidence": "/.dockerenv"}
    if environ.get("container"):
        return {"container.runtime": environ["container"], "container.evidence": "$container"}
    cgroup = ctx.read("/proc/1/cgroup")
    if cgroup.ok:
        for word, runtime in CGROUP_ENGINES:
            if word in cgroup.text:
                return {"container.runtime": runtime, "container.evidence": f"/proc/1/cgroup names {word}"}
    return {"container.runtime": "none"}


def collect(env: dict, ctx: Context) -> None:
    # the process's own variables describe this machine only when reading it
    env.update(detect(ctx, os.environ if ctx.is_real_root else {}))
