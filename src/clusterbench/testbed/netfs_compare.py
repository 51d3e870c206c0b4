"""E2/E3 on the test cluster (`clusterbench testbed netfs-compare`): the
`netfs-compare` suite run against a GlusterFS volume in several
configurations, one test cluster each, then one side-by-side table with the
% change against the first configuration and the limit that binds each
figure (limits/netfs_limits.py).

Each configuration has two client hosts (the suite's IOR line reads the
other node's file) and 1 or 2 servers; its run is stored under the label
"netfs: <configuration>", so `clusterbench compare` works on them too.
"""
from __future__ import annotations

import os
import statistics
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from clusterbench.errors import BadInput
from clusterbench.limits.netfs_limits import netfs_limit
from clusterbench.testbed import cluster as tc

CLIENTS = 2
SUITE = "netfs-compare"


@dataclass(frozen=True)
class Config:
    name: str
    link: str | None
    servers: int

    @property
    def label(self) -> str:
        return f"netfs: {self.name}"


CONFIGS = (Config("1 Gbit/s, 1 server", "1gbit", 1),
           Config("unshaped, 1 server", None, 1),
           Config("unshaped, 2 servers", None, 2))


def run(state_root: Path, size: str, repeat: int | None, configs=CONFIGS, echo=print) -> list[str]:
    """Runs the suite once per configuration, each on its own test cluster
    (removed afterwards, also on failure). Returns the labels."""
    made_root = not state_root.exists()
    try:
        _run_all(state_root, size, repeat, configs, echo)
    finally:
        if made_root and state_root.is_dir() and not any(state_root.iterdir()):
            state_root.rmdir()
    return [cfg.label for cfg in configs]


def _run_all(state_root: Path, size: str, repeat: int | None, configs, echo) -> None:
    for cfg in configs:
        d = state_root / f"netfs-{cfg.servers}-{cfg.link or 'unshaped'}"
        echo(f"== {cfg.name}: testbed up --hosts {CLIENTS + cfg.servers} --glusterfs {cfg.servers}"
             + (f" --link {cfg.link}" if cfg.link else ""))
        c = tc.up(d, CLIENTS + cfg.servers, cfg.link, glusterfs=cfg.servers)
        try:
            g = c.state["glusterfs"]
            argv = [sys.executable, "-m", "clusterbench", "run", SUITE, f"--dir={g['path']}", f"--size={size}",
                    "--hostfile", g["hostfile"], "--label", cfg.label]
            if repeat:
                argv += ["--repeat", str(repeat)]
            p = subprocess.run(argv, env=dict(os.environ, **c.env()))
            if p.returncode:
                raise tc.TestBedError(f"the {SUITE} suite failed on {cfg.name} (exit status {p.returncode})")
            # the first server's own disk, where its bricks are: the rate the
            # volume cannot beat when the disk is slower than the link
            disk = Path(g["dir"]) / g["servers"][0] / "disk"
            disk.mkdir()
            argv = [sys.executable, "-m", "clusterbench", "run", "seqio", f"--dir={disk}", f"--file-size={size}",
                    "--label", disk_label(cfg.label)] + (["--repeat", str(repeat)] if repeat else ["--repeat", "3"])
            p = subprocess.run(c.command(g["servers"][0], argv), env=dict(os.environ, **c.env()))
            if p.returncode:
                raise tc.TestBedError(f"seqio on the server's disk failed on {cfg.name} (exit status {p.returncode})")
        finally:
            tc.down(d)


def disk_label(label: str) -> str:
    return f"{label} / server disk"


@dataclass
class Cell:
    mb_per_s: float
    limit: str | None


def _medians(store, label: str) -> dict[str, float]:
    """{phase: median MB/s} of the newest run labelled `label` (the server disk's seqio), {} when none."""
    try:
        run_id = max(store.resolve(label))
    except BadInput:
        return {}
    by_phase: dict[str, list[float]] = {}
    for step in store.steps_of(run_id):
        for s in store.samples_of(step.id):
            if s.decimal is not None and s.decimal_unit == "MB/s":
                by_phase.setdefault(s.phase, []).append(s.decimal)
    return {phase: statistics.median(v) for phase, v in by_phase.items()}


def figures(store, label: str) -> dict[str, Cell]:
    """{figure name: median (MB/s, decimal) and its limit} of the newest run
    labelled `label`, judged against the client's link and the server disk's
    rate for the same phase when it was measured."""
    disk = _medians(store, disk_label(label))
    run_id = max(store.resolve(label))
    envs = store.environments_of(run_id)
    out: dict[str, Cell] = {}
    for step in store.steps_of(run_id):
        groups: dict[str, list] = {}
        for s in store.samples_of(step.id):
            if s.decimal is None or s.decimal_unit != "MB/s":
                continue
            name = f"{step.kernel} {s.phase} ({s.mode})"
            groups.setdefault(name, []).append(s)
        directory = (step.params or {}).get("dir")
        for name, samples in groups.items():
            median = statistics.median(s.decimal for s in samples)
            where = samples[0].directory or directory
            server_disk = disk.get(samples[0].phase)
            out[name] = Cell(median, netfs_limit(_client_env(envs, where), where, median * 1e6,
                                                 server_disk * 1e6 if server_disk else None))
    for phase, median in disk.items():
        out[f"server disk: seqio {phase}"] = Cell(median, "local disk")
    return out


def _client_env(envs: dict[str, dict], directory: str | None) -> dict:
    """The environment of the first host that has the directory as a
    network mount (a client host; the login node is only the launcher)."""
    for host in sorted(envs):
        if f"target.{directory}.netfs.kind" in envs[host]:
            return envs[host]
    return next(iter(envs.values()), {})


def table(store, labels: list[str]) -> tuple[list[str], list[list[str]]]:
    """Header and rows of E3's side-by-side table."""
    cols = [figures(store, lab) for lab in labels]
    names = list(dict.fromkeys(n for c in cols for n in c))
    header = ["figure"]
    for i, lab in enumerate(labels):
        header += [f"{lab.removeprefix('netfs: ')} MB/s"] + (["% change"] if i else []) + ["limit"]
    rows = []
    for n in names:
        base = cols[0].get(n)
        row = [n]
        for i, c in enumerate(cols):
            cell = c.get(n)
            row.append(f"{cell.mb_per_s:,.1f}" if cell else "-")
            if i:
                row.append(f"{(cell.mb_per_s / base.mb_per_s - 1) * 100:+.0f} %" if cell and base else "-")
            row.append((cell.limit or "-") if cell else "-")
        rows.append(row)
    return header, rows
