"""The GPU figures' limits and the cluster suite's GPU analysis, on records
in the shape gpucopy and gpumem print (checked against the record
contract) and environment snapshots in the shape `env` captures: every GPU
side by side, a planted odd GPU flagged and its likely cause named. The
figures are those measured on an H200 (PCIe Gen5 x16) in #35."""
from __future__ import annotations

import json
import os
import sys

import pytest

from conftest import run_bounded

from clusterbench import limits
from clusterbench.limits import ceilings, gpu_limits as limits_gpu
from clusterbench.analysis.cluster import analysis, findings, gpus
from clusterbench.results.records import contract_problems
from clusterbench.results.sample import Sample

H2D_GB_S, D2H_GB_S, TRIAD_GB_S = 55.3, 55.3, 4120.0


def bus(host_n: int, gpu: int) -> str:
    """Identical nodes put their GPUs on the same bus ids."""
    return f"0000:{0x18 + 0x20 * gpu:02x}:00.0"


def copy_record(phase: str, bus_id: str, gb_s: float, host_memory="pinned", copy_bytes=256 << 20, sid=None) -> Sample:
    legs = 2 if phase == "bidir" else 1
    copies = 10
    moved = copy_bytes * copies * legs
    seconds = moved / (gb_s * 1e9)
    rec = {"schema": 1, "type": "measurement", "kernel": "gpucopy", "repetition": 0, "phase": phase, "mode": "n/a",
           "sweep_key": "copy_bytes", "qualifiers": ["host_memory", "engine"], "ranks": 1, "bytes": moved,
           "ops": copies * legs, "seconds": seconds, "rate": moved / seconds / 2**20, "rate_unit": "MiB/s",
           "rate_decimal": moved / seconds / 1e6, "rate_decimal_unit": "MB/s", "ops_per_s": copies * legs / seconds,
           "rank_seconds_min": seconds, "rank_seconds_max": seconds, "slowest_rank": 0, "warnings": [],
           "copy_bytes": copy_bytes, "host_memory": host_memory, "engine": "copy", "copies": copies,
           "driver_seconds": seconds * 1.01, "driver_gb_per_s": gb_s / 1.01,
           "driver_latency_us": 1e6 * seconds / copies,
           "event_seconds": seconds, "event_gb_per_s": gb_s, "event_latency_us": 1e6 * seconds / copies,
           "gpu_name": "NVIDIA H200", "gpu_bus_id": bus_id, "gpu_runtime": "cuda", "gpu_driver_version": "13.0",
           "gpu_runtime_version": "13.0", "validated": True}
    assert contract_problems(rec) == []
    s = Sample.from_record(rec)
    return s if sid is None else Sample(**{**s.__dict__, "id": sid})


def memory_record(phase: str, bus_id: str, gb_s: float) -> Sample:
    n = 1 << 27
    moved = (3 if phase in ("add", "triad") else 2) * 8 * n
    seconds = moved / (gb_s * 1e9)
    rec = {"schema": 1, "type": "measurement", "kernel": "gpumem", "repetition": 0, "phase": phase, "mode": "n/a",
           "sweep_key": None, "qualifiers": ["statistic"], "ranks": 1, "bytes": moved, "ops": n, "seconds": seconds,
           "rate": moved / seconds / 2**20, "rate_unit": "MiB/s", "rate_decimal": moved / seconds / 1e6,
           "rate_decimal_unit": "MB/s", "ops_per_s": n / seconds, "rank_seconds_min": seconds,
           "rank_seconds_max": seconds, "slowest_rank": 0, "warnings": [], "statistic": "best",
           "best_mb_per_s": gb_s * 1e3, "median_mb_per_s": gb_s * 0.99e3, "event_best_mb_per_s": gb_s * 1.01e3,
           "memory_peak_gb_per_s": 4814.0, "fraction_of_peak": gb_s / 4814.0, "gpu_name": "NVIDIA H200",
           "gpu_bus_id": bus_id, "validated": True}
    assert contract_problems(rec) == []
    return Sample.from_record(rec)


def snapshot(host_n: int, odd: dict | None = None, gpus_per_node=2) -> dict:
    """An H200 node as `env` records it; odd = {(gpu, key): value} plants a difference."""
    env = {"host.name": f"h0{host_n}", "gpu.count": gpus_per_node, "gpu.source": "nvidia-smi"}
    for g in range(gpus_per_node):
        env |= {f"gpu.{g}.name": "NVIDIA H200", f"gpu.{g}.driver_version": "580.159.04",
                f"gpu.{g}.memory_mib": 143771, f"gpu.{g}.bus_id": bus(host_n, g),
                f"gpu.{g}.vbios_version": "96.00.AF.00.01",
                f"gpu.{g}.pcie_gen": 5, f"gpu.{g}.pcie_width": 16, f"gpu.{g}.pcie_gen_current": 5,
                f"gpu.{g}.pcie_width_current": 16}
    for (g, key), value in (odd or {}).items():
        env[f"gpu.{g}.{key}"] = value
    return env


# the run records' phase words, as gpucopy's and gpupeer's cbk writes them (cbk --describe)
BUILDS = {"gpucopy": {"family": "gpu", "phase_words": {"h2d": "host to device", "d2h": "device to host",
                                                       "bidir": "both directions", "d2d": "device to device"}},
          "gpumem": {"family": "gpu"},
          "gpupeer": {"family": "gpu", "phase_words": {"unidir": "one way", "bidir": "both ways"}}}


def cluster_run(copy_gb_s, triad_gb_s, envs) -> dict:
    """Four nodes of two GPUs, each node's gpucopy and gpumem as a cluster suite stores them."""
    steps = []
    for h in range(1, 5):
        host = f"h0{h}"
        copies, mems = [], []
        for g in range(2):
            b = bus(h, g)
            rate = copy_gb_s.get((host, g), H2D_GB_S)
            copies += [copy_record("h2d", b, rate), copy_record("d2h", b, rate), copy_record("bidir", b, 1.8 * rate),
                       copy_record("h2d", b, 7.0, host_memory="pageable")]
            triad = triad_gb_s.get((host, g), TRIAD_GB_S)
            mems += [memory_record(p, b, triad * f) for p, f in (("copy", 0.95), ("triad", 1.0))]
        steps.append({"name": "gpucopy", "host": host, "kernel": "gpucopy", "status": "ok", "samples": copies,
                      "build": BUILDS["gpucopy"]})
        steps.append({"name": "gpumem", "host": host, "kernel": "gpumem", "status": "ok", "samples": mems,
                      "build": BUILDS["gpumem"]})
    return {"steps": steps, "environments": envs, "suite": "cluster", "kind": "cluster"}


def test_pcie_link_rates_per_direction():
    assert limits_gpu.link_gb_per_s(5, 16) == pytest.approx(63.02, abs=0.01)   # #35: 55.3 is 88 % of it
    assert limits_gpu.link_gb_per_s(4, 16) == pytest.approx(31.51, abs=0.01)   # docs/gpu.md's example
    assert limits_gpu.link_gb_per_s(2, 16) == pytest.approx(8.0)


def test_a_copy_is_named_beside_its_link_and_a_narrow_link_is_warned():
    env = snapshot(1)
    s = copy_record("h2d", "0000" + bus(1, 1).upper(), H2D_GB_S)  # the bus id as nvidia-smi writes it
    assert limits_gpu.gpu_limit(s, env) == ("PCIe Gen5 x16 per direction", pytest.approx(63.02, abs=0.01))
    assert limits.sample_warnings(s, env) == []
    narrow = snapshot(1, {(1, "pcie_width_current"): 8})
    (warning,) = limits.sample_warnings(copy_record("h2d", bus(1, 1), 27.0), narrow)
    assert warning.startswith("GPU 1's PCIe link is x8 of its x16: host copies are capped at 31.5 GB/s")
    # faster than the link can carry: not a link figure
    (above,) = limits.sample_warnings(copy_record("d2h", bus(1, 0), 70.0), env)
    assert "above the PCIe Gen5 x16 per direction rate of 63.0 GB/s" in above
    # both directions at once are bound by twice the link
    assert limits.sample_warnings(copy_record("bidir", bus(1, 0), 100.4), env) == []


def test_a_link_seen_at_a_lower_generation_is_named_only_when_the_copy_is_slow_too():
    idle = snapshot(1, {(0, "pcie_gen_current"): 1})   # an idle GPU drops to Gen1 to save power
    assert limits.sample_warnings(copy_record("h2d", bus(1, 0), H2D_GB_S), idle) == []
    (warning,) = limits.sample_warnings(copy_record("h2d", bus(1, 0), 13.0), idle)
    assert "link was at Gen1 of its Gen5" in warning and "trained down" in warning


def test_gpu_memory_above_its_rate_is_warned():
    env = snapshot(1)
    assert limits.sample_warnings(memory_record("triad", bus(1, 0), TRIAD_GB_S), env) == []
    (warning,) = limits.sample_warnings(memory_record("triad", bus(1, 0), 5200.0), env)
    assert "above the GPU memory" in warning and "4,814.0 GB/s" in warning


def test_the_limit_column_names_the_link_or_memory_rate_a_gpu_figure_is_bound_by():
    """The "limit" column of show, report and export (limits/ceilings.py) for
    the GPU kernels, as for the I/O ones: the figure as a share of its
    link's or memory's rate, marked when it is above it."""
    env = snapshot(1)

    def limit(s, e=env):
        c = ceilings.binding(s, ceilings.Context(e))
        return (c.text, c.exceeded) if c else None

    assert limit(copy_record("h2d", bus(1, 0), H2D_GB_S)) == ("PCIe Gen5 x16 per direction: 88 % of 63.0 GB/s", False)
    assert limit(copy_record("bidir", bus(1, 0), 100.4)) == ("PCIe Gen5 x16 both directions: 80 % of 126.0 GB/s",
                                                             False)
    narrow = snapshot(1, {(1, "pcie_width_current"): 8})
    assert limit(copy_record("h2d", bus(1, 1), 27.0), narrow) == ("PCIe Gen5 x8 per direction: 86 % of 31.5 GB/s",
                                                                  False)
    assert limit(copy_record("d2h", bus(1, 0), 70.0)) == ("PCIe Gen5 x16 per direction: above its 63.0 GB/s", True)
    assert limit(memory_record("triad", bus(1, 0), TRIAD_GB_S)) == (
        "GPU memory peak: 86 % of 4,814.0 GB/s", False)
    # no GPU in the snapshot: the link is unknown, so no limit is claimed for a copy
    assert limit(copy_record("h2d", bus(1, 0), H2D_GB_S), {}) is None
    # the limit column never doubles the stored warning: gpu_warnings alone says "above"
    assert len(limits.sample_warnings(copy_record("d2h", bus(1, 0), 70.0), env)) == 1


def test_a_pageable_copy_faster_than_the_pinned_one_is_flagged():
    samples = [copy_record("h2d", bus(1, 0), 20.0, sid=1), copy_record("h2d", bus(1, 0), 30.0, "pageable", sid=2),
               copy_record("d2h", bus(1, 0), 55.0, sid=3), copy_record("d2h", bus(1, 0), 12.0, "pageable", sid=4)]
    from clusterbench.results.sample import in_words

    out = limits.cross_sample_warnings(in_words(samples, BUILDS["gpucopy"]["phase_words"]))
    # the case named as its row is, in gpucopy's words: the report lists it under the table, not the row
    assert list(out) == [2] and out[2] == ["pageable host to device 256 MiB copy at 30.0 GB/s is faster than the "
                                           "pinned one (20.0 GB/s): one of the two is not a link figure"]


def test_the_cluster_suite_flags_a_gpu_whose_link_trained_down_and_names_why():
    envs = {f"h0{h}": snapshot(h) for h in range(1, 5)}
    envs["h03"] = snapshot(3, {(1, "pcie_width_current"): 8})
    view = analysis.analyse(cluster_run({("h03", 1): 27.6}, {}, envs))
    h2d = next(f for f in view.gpus if f.name == "GPU link, host to device (pinned, copy engine)")
    assert len(h2d.gpus) == 8 and [v.host for v in h2d.flagged] == ["h03 GPU 1"]
    (finding,) = view.gpu_findings
    assert finding.gpu.label == "h03 GPU 1"
    assert finding.causes[0] == "its PCIe link is negotiated at x8 while the others run at x16"
    text = findings.paragraph(view)
    # the GPUs counted, not "0 per-node figures, 0 links" of a run that measured only GPUs
    assert text.startswith("4 nodes, 8 GPUs, 1 environment key that differs. Found: "), text[:100]
    assert "h03 GPU 1 (0000:38:00.0) of 8 GPUs: GPU link, both directions (pinned, copy engine) 50 % below the median" in text
    assert "likely cause: its PCIe link is negotiated at x8 while the others run at x16" in text
    # pageable copies and the GPU kernels' per-node medians are not judged as node figures
    assert not any(f.name.startswith(("gpucopy", "gpumem")) for f in view.figures)


def test_a_gpus_flagged_figures_are_said_one_by_one_though_their_names_hold_commas():
    """h03's GPU 1 at half rate is flagged in three host copies, each named
    with commas of its own ("GPU link, host to device (pinned, copy
    engine)"). Joined by ", " the finding read as one list of nine items;
    each figure is now one item of a list joined by "; "."""
    envs = {f"h0{h}": snapshot(h) for h in range(1, 5)}
    envs["h03"] = snapshot(3, {(1, "pcie_width_current"): 8})
    view = analysis.analyse(cluster_run({("h03", 1): 27.6}, {}, envs))
    (finding,) = view.gpu_findings
    sentence = finding.sentence(8)
    head = "h03 GPU 1 (0000:38:00.0) of 8 GPUs: "
    assert sentence.startswith(head), sentence
    listed, cause = sentence[len(head):].split("; likely cause: ")
    assert listed.split("; ") == [
        "GPU link, both directions (pinned, copy engine) 50 % below the median (49.7 vs 99.5 GB/s)",
        "GPU link, device to host (pinned, copy engine) 50 % below the median (27.6 vs 55.3 GB/s)",
        "GPU link, host to device (pinned, copy engine) 50 % below the median (27.6 vs 55.3 GB/s)"], sentence
    assert cause == "its PCIe link is negotiated at x8 while the others run at x16"


def test_the_cluster_suite_flags_a_slow_gpu_memory_and_names_its_other_firmware():
    envs = {f"h0{h}": snapshot(h) for h in range(1, 5)}
    envs["h02"] = snapshot(2, {(0, "vbios_version"): "96.00.74.00.0B"})
    view = analysis.analyse(cluster_run({}, {("h02", 0): 3400.0}, envs))
    (finding,) = view.gpu_findings
    assert finding.gpu.label == "h02 GPU 0"
    assert [name for name, *_ in finding.figures] == ["GPU memory, copy", "GPU memory, triad"]
    assert finding.causes == ["its firmware (VBIOS) is 96.00.74.00.0B while the others have 96.00.AF.00.01"]
    # the environment table names the firmware difference too
    diff = next(d for d in view.env if d.key == "gpu.0.vbios_version")
    assert diff.differ == {"h02": "96.00.74.00.0B"}


def test_a_slow_gpu_with_no_difference_in_its_snapshot_says_where_to_look():
    envs = {f"h0{h}": snapshot(h) for h in range(1, 5)}
    view = analysis.analyse(cluster_run({}, {("h04", 1): 3000.0}, envs))
    (finding,) = view.gpu_findings
    assert "no difference in its snapshot explains it" in finding.sentence(8)


def test_a_stored_gpu_step_is_judged_per_gpu_by_the_family_its_run_record_gives():
    """A GPU kernel this clusterbench's cbk does not know (a newer cbk's,
    say "gpulink") is judged per GPU because its run record says family
    "gpu"; without that, an unknown kernel's figures are node figures."""
    envs = {f"h0{h}": snapshot(h) for h in range(1, 5)}
    envs["h03"] = snapshot(3, {(1, "pcie_width_current"): 8})
    run = cluster_run({("h03", 1): 27.6}, {}, envs)
    for st in run["steps"]:
        st["kernel"] = st["name"] = st["kernel"].replace("gpu", "gpunew")
        st["build"] = {"family": "gpu"}
    view = analysis.analyse(run)
    (finding,) = view.gpu_findings
    assert finding.gpu.label == "h03 GPU 1" and finding.figures[0][0].startswith("gpunewcopy ")
    # a host copy flagged: the PCIe link is named as its cause
    assert finding.causes[0] == "its PCIe link is negotiated at x8 while the others run at x16"
    assert not any(f.name.startswith("gpunew") for f in view.figures)
    for st in run["steps"]:
        st["build"] = {}
    unknown = analysis.analyse(run)
    assert unknown.gpus == [] and any(f.name.startswith("gpunewcopy") for f in unknown.figures)


def test_uniform_gpus_flag_nothing():
    envs = {f"h0{h}": snapshot(h) for h in range(1, 5)}
    view = analysis.analyse(cluster_run({("h01", 0): 55.0, ("h02", 1): 55.6}, {("h03", 0): 4100.0}, envs))
    assert view.gpu_findings == []
    assert {f.name for f in view.gpus} >= {"GPU memory, triad", "GPU link, device to host (pinned, copy engine)"}
    # said of the GPUs measured, not of nodes and links this run did not measure
    assert findings.paragraph(view) == ("4 nodes, 8 GPUs, 0 environment keys that differ. Nothing flagged: every GPU "
                                        "within 10% of the median of the GPUs.")
    assert gpus.gpu_sentences(view.gpus, view.gpu_findings) == []


REPLAY_CBK = """#!{python}
# cbk as a GPU machine's would answer: its own describe and version, every
# check accepted, and a run that prints the records given in REPLAY_RECORDS
import json, os, subprocess, sys
real = os.environ["REPLAY_REAL_CBK"]
if sys.argv[1] in ("--describe", "--version", "--help"):
    os.execv(real, [real, *sys.argv[1:]])
if sys.argv[1] == "--check":
    sys.exit(0)
kernel = sys.argv[1]
for line in open(os.environ["REPLAY_RECORDS"]):
    rec = json.loads(line)
    if rec["kernel"] == kernel:
        print(json.dumps(rec))
run = json.loads(subprocess.run([real, "null"], capture_output=True, text=True).stdout.splitlines()[-1])
run.update(kernel=kernel, parameters=dict(a[2:].split("=", 1) for a in sys.argv[2:] if "=" in a))
described = json.loads(subprocess.run([real, "--describe"], capture_output=True, text=True).stdout)
run["family"] = next(k["family"] for k in described["kernels"] if k["name"] == kernel)   # as the kernel's would
if os.environ.get("REPLAY_TWO_RANKS_ON_ONE_GPU"):  # the per-rank lists of two unbound ranks on one host
    run.update(hosts=run["hosts"] * 2, gpu_devices=[None, None])
print(json.dumps(run))
"""


def replay_cli(records: list[dict], cuda_cbk: str, tmp_path):
    """(cli, its environment): `clusterbench` run against a cbk that replays
    `records`; cli(*args) asserts exit 0 and returns stdout. Changes to the
    environment apply to the next call."""
    (tmp_path / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    fake = tmp_path / "cbk"
    fake.write_text(REPLAY_CBK.format(python=sys.executable))
    fake.chmod(0o755)
    env = dict(os.environ, CLUSTERBENCH_CBK=str(fake), REPLAY_REAL_CBK=cuda_cbk,
               REPLAY_RECORDS=str(tmp_path / "records.jsonl"), CLUSTERBENCH_DB=f"sqlite:///{tmp_path / 'r.db'}",
               COLUMNS="250")

    def cli(*args):
        p = run_bounded([sys.executable, "-m", "clusterbench", *args], timeout=120, env=env)
        assert p.returncode == 0, p.stdout + p.stderr
        return p.stdout

    return cli, env


def test_recorded_gpu_figures_go_through_run_show_and_export(cuda_cbk, tmp_path):
    """`clusterbench run gpucopy|gpumem`, `show` and `export` on the records a
    GPU machine's cbk prints (replayed: there is no GPU here)."""
    records = [copy_record(p, bus(1, 0), r, m).record for p, r, m in
               (("h2d", 55.3, "pinned"), ("d2h", 55.3, "pinned"), ("bidir", 100.4, "pinned"), ("h2d", 6.6, "pageable"),
                ("d2h", 65.0, "pageable"))]
    records[3]["warnings"] = ["pageable host memory: the driver stages every copy through pinned memory of its own, "
                              "so this is not the link's rate (--host-memory=pinned measures that)"]
    records += [memory_record(p, bus(1, 0), r).record for p, r in (("copy", 3977.0), ("triad", 4120.0))]
    cli, env = replay_cli(records, cuda_cbk, tmp_path)

    cli("run", "gpucopy", "--repeat", "1", "--quiet")
    cli("run", "gpumem", "--repeat", "1", "--quiet")
    shown = " ".join(cli("show", "1").split())
    assert "host to device" in shown and "both directions" in shown and "pageable" in shown and "pinned" in shown, shown
    assert "faster than the pinned one" in shown   # the cross-sample check, stored with the run
    memory = " ".join(cli("show", "2").split())
    # the limit each figure is bound by, beside it (this machine's snapshot has no GPU: the memory's rate,
    # which the record carries, is the one known)
    assert "triad" in memory and "GPU memory peak: 86 % of 4,814.0 GB/s" in memory, memory
    rows = json.loads(cli("export", "2", "--format", "json"))["runs"][0]["steps"][0]["summary"]
    assert {r["phase"]: r["limit"] for r in rows}["triad"].endswith("86 % of 4,814.0 GB/s")
    # the report's headline table quotes the GPU's figures, as it quotes a node's stream triad
    def headlines(run: str) -> str:
        cli("report", run, "-o", str(tmp_path / f"{run}.html"))
        page = (tmp_path / f"{run}.html").read_text()
        table = page[page.index('<table class="headline'):]
        return table[:table.index("</table>")]

    copies = headlines("1")
    assert "GPU copy, host to device" in copies and "GPU copy, device to host" in copies, copies
    assert "GPU memory bandwidth (triad)" not in copies
    memory = headlines("2")
    assert "GPU memory bandwidth (triad)" in memory and "GPU memory peak: 86 % of 4,814.0 GB/s" in memory
    exported = json.loads(cli("export", "1", "--format", "json"))
    text = json.dumps(exported)
    assert '"event_gb_per_s": 100.4' in text and '"host_memory": "pageable"' in text
    assert "share one GPU" not in text
    env["REPLAY_TWO_RANKS_ON_ONE_GPU"] = "1"
    cli("run", "gpumem", "--repeat", "1", "--quiet")
    assert "ranks 0, 1 on" in " ".join(cli("show", "3").split())


def peer_record(phase: str, src: int, dst: int, peer: str, gb_s: float, possible=True) -> dict:
    """A record as gpupeer prints it (kernels/gpu/gpupeer.c)."""
    legs = 2 if phase == "bidir" else 1
    copies, copy_bytes = 20, 256 << 20
    moved = copy_bytes * copies * legs
    seconds = moved / (gb_s * 1e9)
    rec = {"schema": 1, "type": "measurement", "kernel": "gpupeer", "repetition": 0, "phase": phase, "mode": "n/a",
           "sweep_key": None, "qualifiers": ["gpus", "peer"], "ranks": 1, "bytes": moved, "ops": copies * legs,
           "seconds": seconds,
           "rate": moved / seconds / 2**20, "rate_unit": "MiB/s", "rate_decimal": moved / seconds / 1e6,
           "rate_decimal_unit": "MB/s", "ops_per_s": copies * legs / seconds, "rank_seconds_min": seconds,
           "rank_seconds_max": seconds, "slowest_rank": 0, "warnings": [],
           "gpus": f"{src}<>{dst}" if phase == "bidir" else f"{src}>{dst}", "peer": peer, "src_gpu": src,
           "dst_gpu": dst, "copy_bytes": copy_bytes, "copies": copies, "peer_possible": possible,
           "peer_direct": peer == "on" and possible, "driver_seconds": seconds * 1.01, "driver_gb_per_s": gb_s / 1.01,
           "event_seconds": seconds, "event_gb_per_s": gb_s, "event_latency_us": 1e6 * seconds / copies,
           "src_gpu_name": "NVIDIA H200", "src_gpu_bus_id": bus(1, src), "dst_gpu_name": "NVIDIA H200",
           "dst_gpu_bus_id": bus(1, dst), "gpu_runtime": "cuda", "gpu_driver_version": "13.0",
           "gpu_runtime_version": "13.0", "validated": True}
    if peer == "on" and not possible:
        rec["warnings"] = ["these two GPUs cannot reach each other's memory (cudaDeviceCanAccessPeer says no): the "
                           "driver staged the copy through host memory, as with --peer=off"]
    assert contract_problems(rec) == []
    Sample.from_record(rec)
    return rec


def test_recorded_gpupeer_figures_go_through_run_show_and_export(cuda_cbk, tmp_path):
    """Every pair and peer mode of a two-GPU node as its own row, the staged
    pair's warning carried to the page and the export."""
    records = [peer_record("unidir", 0, 1, "on", 370.0), peer_record("unidir", 1, 0, "on", 368.0),
               peer_record("unidir", 0, 1, "off", 21.0), peer_record("unidir", 1, 0, "off", 20.5),
               peer_record("bidir", 0, 1, "on", 18.0, possible=False), peer_record("bidir", 0, 1, "off", 17.5)]
    cli, _ = replay_cli(records, cuda_cbk, tmp_path)

    cli("run", "gpupeer", "--repeat", "1", "--quiet")
    shown = " ".join(cli("show", "1").split())
    # the phases in gpupeer's words (cbk --describe), the pairs as its records name them
    for text in ("one way", "both ways", "0>1", "1>0", "0<>1", "cannot reach each other's memory"):
        assert text in shown, (text, shown)
    text = json.dumps(json.loads(cli("export", "1", "--format", "json")))
    assert '"phase": "unidir"' in text and '"phase": "bidir"' in text   # the export keeps the record's phase
    assert '"event_gb_per_s": 370.0' in text and '"peer_direct": false' in text and '"gpus": "0<>1"' in text


def test_the_cluster_suite_flags_a_slow_pair_of_gpus_and_says_where_to_look():
    """A node whose GPU 0 reaches GPU 1 at a sixth of what the other nodes'
    do (an NVLink down, the copy gone over PCIe): that pair is flagged, by the
    GPU it starts from, and the sentence points at the link between them."""
    envs = {f"h0{h}": snapshot(h) for h in range(1, 5)}
    steps = []
    for h in range(1, 5):
        rate = 60.0 if h == 2 else 370.0
        samples = [Sample.from_record(peer_record("unidir", 0, 1, "on", rate)),
                   Sample.from_record(peer_record("unidir", 1, 0, "on", 368.0))]
        steps.append({"name": "gpupeer", "host": f"h0{h}", "kernel": "gpupeer", "status": "ok", "samples": samples,
                      "build": BUILDS["gpupeer"]})
    view = analysis.analyse({"steps": steps, "environments": envs, "suite": "cluster", "kind": "cluster"})
    pair = next(f for f in view.gpus if f.name == "GPU to GPU, one way 0>1, peer on")
    assert len(pair.gpus) == 4 and [v.host for v in pair.flagged] == ["h02 GPU 0"]
    (finding,) = view.gpu_findings
    assert finding.gpu.label == "h02 GPU 0" and finding.peer_copy and not finding.host_copy
    sentence = finding.sentence(8)
    assert "GPU to GPU, one way 0>1, peer on 84 % below the median (60.0 vs 370.0 GB/s)" in sentence
    assert "look at the link between the two GPUs (nvidia-smi topo -m" in sentence


def test_the_cluster_report_puts_every_gpu_side_by_side_and_marks_the_odd_one():
    """show and the HTML report of a cluster run: a row per GPU with its
    host copies and memory figures across, the trained-down GPU's cells
    marked; the copies between GPUs a row per pair with the nodes across,
    the slow pair's node marked."""
    from rich.console import Console

    from clusterbench.report import cluster_html, cluster_terminal

    envs = {f"h0{h}": snapshot(h) for h in range(1, 5)}
    envs["h03"] = snapshot(3, {(1, "pcie_width_current"): 8})
    run = cluster_run({("h03", 1): 27.6}, {}, envs)
    for h in range(1, 5):
        samples = [Sample.from_record(peer_record("unidir", 0, 1, "on", 60.0 if h == 2 else 370.0)),
                   Sample.from_record(peer_record("unidir", 1, 0, "on", 368.0))]
        run["steps"].append({"name": "gpupeer", "host": f"h0{h}", "kernel": "gpupeer", "status": "ok",
                             "samples": samples, "build": BUILDS["gpupeer"]})
    view = analysis.analyse(run)
    tb = gpus.tables(view.gpus)
    # the flagged GPU first, then every other by node and index
    assert [g.label for g in tb.gpus] == ["h03 GPU 1"] + [f"h0{h} GPU {g}" for h in range(1, 5) for g in range(2)
                                                          if (h, g) != (3, 1)]
    assert [f.name for f in tb.columns][:3] == [f"GPU link, {d} (pinned, copy engine)"
                                                for d in ("both directions", "device to host", "host to device")]
    assert [f.name for f in tb.pairs] == ["GPU to GPU, one way 0>1, peer on", "GPU to GPU, one way 1>0, peer on"]
    assert tb.hosts == ["h01", "h02", "h03", "h04"]

    console = Console(record=True, width=400)
    for t in cluster_terminal.gpu_tables(view):
        console.print(t)
    lines = console.export_text().splitlines()
    odd = next(line for line in lines if "h03 GPU 1" in line)
    assert odd.count("!") == 3 and "!27.6 (0.50)" in odd, odd   # h2d, d2h and bidir: half the others
    assert "!" not in next(line for line in lines if "h03 GPU 0" in line)
    slow_pair = next(line for line in lines if "GPU to GPU, one way 0>1" in line)
    assert slow_pair.count("!") == 1 and "!60 (0.16)" in slow_pair, slow_pair

    html = "\n".join(cluster_html.gpu_section(view))
    assert "<h3>Per GPU (GB/s" in html and "<h3>Copies between the GPUs of a node" in html
    odd_row = next(row for row in html.split("<tr>") if row.startswith("<td>h03 GPU 1</td>"))
    assert odd_row.count('class="n flag"') == 3
    # a cluster without GPU figures gets no GPU section
    assert cluster_html.gpu_section(analysis.analyse({"steps": [], "environments": envs, "kind": "cluster"})) == []


def test_compare_of_two_cluster_runs_says_which_gpu_a_repair_fixed():
    """`compare BEFORE AFTER` of two cluster runs: h03's GPU 1, on x8
    before and reseated after, is "fixed" on each of its host copies; a GPU
    whose memory went slow in the second run is a "new flag"."""
    from rich.console import Console

    from clusterbench.analysis.cluster.before_after import gpu_changes, verdict
    from clusterbench.report.cluster_compare_terminal import print_cluster_comparison

    healthy = {f"h0{h}": snapshot(h) for h in range(1, 5)}
    faulty = {**healthy, "h03": snapshot(3, {(1, "pcie_width_current"): 8})}
    before = {**cluster_run({("h03", 1): 27.6}, {}, faulty), "id": 1}
    after = {**cluster_run({}, {("h01", 0): 3000.0}, healthy), "id": 2}
    changes = {c.what: verdict(c) for c in gpu_changes(analysis.analyse(before), analysis.analyse(after))}
    assert changes["h03 GPU 1: GPU link, host to device (pinned, copy engine)"] == "fixed"
    assert changes["h01 GPU 0: GPU memory, triad"] == "new flag"
    assert changes["h02 GPU 0: GPU memory, triad"] == "" and len(changes) == 8 * 5

    console = Console(record=True, width=250)
    print_cluster_comparison(console, before, after)
    text = " ".join(console.export_text().split())
    assert text.startswith("Cluster run 2 against run 1: 3 flags gone: h03 GPU 1: GPU link, both directions"), text
    # each flag's name has commas of its own: the flags are joined by "; "
    assert "2 new: h01 GPU 0: GPU memory, copy; h01 GPU 0: GPU memory, triad." in text and "GPU by GPU" in text

    # the report of the two runs gives the same GPU table (cluster_before_after.py), flagged changes first
    from clusterbench.report.cluster_before_after import before_after
    from clusterbench.report.cluster_html import before_after_section
    from clusterbench.report.cluster_markdown import before_after_lines

    found = before_after(before, after)
    md = "\n".join(before_after_lines(found))
    gpu_rows = md[md.index("### GPU by GPU"):].splitlines()[4:]
    assert gpu_rows[0] == "| h01 GPU 0: GPU memory, copy | GB/s | 3,914 | 2,850 | 0.73 | new flag |", gpu_rows[0]
    assert "| h03 GPU 1: GPU link, host to device (pinned, copy engine) | GB/s | 27.6 | 55.3 | 2.00 | fixed |" in gpu_rows[:5]
    html = "\n".join(before_after_section(found))
    assert ('<tr class="flagged"><td>h03 GPU 1: GPU link, host to device (pinned, copy engine)</td><td>GB/s</td>'
            "<td class=n>27.6</td><td class=n>55.3</td><td class=n>2.00</td><td>fixed</td></tr>") in html


def test_two_ranks_on_one_gpu_are_named():
    assert limits_gpu.shared_gpu({"hosts": ["h01", "h01", "h02"], "gpu_devices": ["0", "1", "0"]}) is None
    assert limits_gpu.shared_gpu({"hosts": ["h01", "h01"], "gpu_devices": [None, None]}) == (
        "ranks 0, 1 on h01 share one GPU (none bound: each opens device 0): each figure is a share of it "
        "(bind one GPU per rank with --gpus-per-rank 1)")
    # bound to one GPU: the host had fewer than its ranks; said once with the step, no advice to act on
    bound = {"hosts": ["h01", "h02", "h02"], "gpu_devices": ["3", "3", "3"]}
    assert limits_gpu.shared_gpu(bound) is None
    assert limits_gpu.shared_gpu_note(bound) == ("ranks 1 and 2 on h02 share GPU 3, the only GPU they had there: "
                                                 "each figure is a share of it")
    assert limits_gpu.shared_gpu_note({"hosts": ["h01"] * 3, "gpu_devices": ["0", "1", "0"]}) == (
        "ranks 0 and 2 on h01 share GPU 0, 2 GPUs for 3 ranks there: each figure is a share of it")
    assert limits_gpu.shared_gpu_note({"hosts": ["h01", "h01"], "gpu_devices": ["0", "1"]}) is None
    assert limits_gpu.uses_gpu("mpi", {"buffer": "device"}) and not limits_gpu.uses_gpu("mpi", {"op": "bw"})
    assert limits_gpu.uses_gpu("gpu", {}) and not limits_gpu.uses_gpu("compute", {})


# ---- the cluster suite runs every GPU of every node ------------------------------------------------------

def cluster_request(hosts, **overrides):
    from clusterbench.run.cluster import execute

    return execute.ClusterRequest(hosts=hosts, hostfile=None, launcher="mpiexec", parts=execute.PARTS, repeat=3,
                                  one_at_a_time=False, links_one_pair=False, overrides=overrides, scratch="/tmp",
                                  oversubscribe=False, switches={}, label=None, command="run cluster")


def test_the_cluster_suite_gives_each_gpu_of_each_node_a_launch_of_its_own(cuda_cbk):
    from clusterbench import catalogue
    from clusterbench.run.cluster import execute

    cat = catalogue.load(cuda_cbk)
    hosts = ["h01", "h02", "h03"]
    req = cluster_request(hosts)
    _, per_gpu, _ = execute.plan(req, cat, 2)
    assert [s.kernel for s in per_gpu] == ["gpucopy", "gpumem", "gpupeer"]
    envs = {"h01": snapshot(1), "h02": snapshot(2, gpus_per_node=1), "h03": {"host.name": "h03", "gpu.count": 0}}
    steps, why = execute.gpu_steps(per_gpu[0], cat, hosts, envs)
    assert why is None
    # GPU 0 of both GPU nodes, then GPU 1 of the node that has two; the CPU-only node none
    assert [(s.name, s.env["CUDA_VISIBLE_DEVICES"], on) for s, on in steps] == [
        ("gpu-link GPU 0", "0", ["h01", "h02"]), ("gpu-link GPU 1", "1", ["h01"])]
    assert all(s.env["CUDA_DEVICE_ORDER"] == "PCI_BUS_ID" and s.ranks == 1 for s, _ in steps)
    assert steps[0][0].params == {"direction": "h2d,d2h,bidir", "host-memory": "pinned", "sizes": "1m,256m"}
    # gpupeer: once on each node with two GPUs or more, every GPU in its one process
    peer, why = execute.gpu_steps(per_gpu[2], cat, hosts, envs)
    assert why is None and [(s.name, on) for s, on in peer] == [("gpu-peer", ["h01"])]
    assert "CUDA_VISIBLE_DEVICES" not in peer[0][0].env
    assert execute.gpu_steps(per_gpu[2], cat, ["h02"], envs) == (
        [], "no node's snapshot lists 2 or more GPUs (gpu.count)")
    # no node with a GPU, or a cbk without the GPU kernels: skipped, with why
    assert execute.gpu_steps(per_gpu[0], cat, hosts, {h: {"host.name": h} for h in hosts}) == (
        [], "no node's snapshot lists a GPU (gpu.count)")


def test_a_swept_gpu_part_gives_each_gpu_a_step_whose_title_reads_the_sweep_in_words(gpu_test_cbk, monkeypatch):
    """A per-GPU part whose params hold a list is a sweep: each value a step of
    each GPU, named with the plan's bracket last, as every swept step is, so
    the reports read it in words; the part was looked up by the bracketed
    name, and the run failed with a KeyError before any GPU was measured."""
    from clusterbench import catalogue
    from clusterbench.analysis.cluster import naming
    from clusterbench.results.step_words import title
    from clusterbench.run.cluster import execute

    doc = naming.suite_document()
    next(e for e in doc["per-gpu"] if e["part"] == "gpu-memory")["params"]["passes"] = [10, 20]
    monkeypatch.setattr(execute, "suite_document", lambda: doc)
    cat = catalogue.load(gpu_test_cbk)
    _, per_gpu, _ = execute.plan(cluster_request(["h01"]), cat, 2)
    swept = [s for s in per_gpu if s.kernel == "gpumem"]
    assert [s.name for s in swept] == ["gpu-memory [passes=10]", "gpu-memory [passes=20]"]
    steps, why = execute.gpu_steps(swept[1], cat, ["h01"], {"h01": snapshot(1)})
    assert why is None
    assert [(s.name, s.env["CUDA_VISIBLE_DEVICES"], s.params["passes"]) for s, _ in steps] == [
        ("gpu-memory GPU 0 [passes=20]", "0", "20"), ("gpu-memory GPU 1 [passes=20]", "1", "20")]
    stored = {"name": steps[1][0].name, "kernel": "gpumem", "params": steps[1][0].params, "ranks": 1,
              "ranks_per_node": None, "swept": list(steps[1][0].swept)}
    assert title(stored) == "gpu-memory GPU 1, passes 20"


def test_a_cluster_suite_override_of_a_gpu_part_is_checked_before_the_run(cuda_cbk, cbk_bin):
    from clusterbench import catalogue
    from clusterbench.errors import BadInput
    from clusterbench.run.cluster import execute

    req = cluster_request(["h01", "h02"], **{"gpu-link": {"colour": "red"}})
    with pytest.raises(BadInput, match="kernel gpucopy has no parameter --colour"):
        execute.plan(req, catalogue.load(cuda_cbk), 2)
    plain = catalogue.load(cbk_bin)
    if plain.of_family(catalogue.GPU):
        pytest.skip("the default cbk was built with CUDA here")
    _, per_gpu, _ = execute.plan(req, plain, 2)    # a cbk without them skips the GPU parts, not the run
    steps, why = execute.gpu_steps(per_gpu[0], plain, ["h01"], {"h01": snapshot(1)})
    assert steps == [] and why.startswith("this cbk was built without CUDA")


def gpu_cluster_store(url: str):
    """(store, run id) of a stored GPU cluster run of 4 nodes, 2 GPUs each: h03's
    GPU 1 trained down to x8 (its host copies at half rate), h02's peer copy 0>1 slow."""
    from test_cluster_report import pin_times

    from clusterbench import environment
    from clusterbench.store import Store

    envs = {f"h0{h}": snapshot(h) for h in range(1, 5)}
    envs["h03"] = snapshot(3, {(1, "pcie_width_current"): 8})
    steps = cluster_run({("h03", 1): 27.6}, {}, envs)["steps"]
    for h in range(1, 5):
        steps.append({"name": "gpupeer", "host": f"h0{h}", "kernel": "gpupeer", "build": BUILDS["gpupeer"], "samples": [
            Sample.from_record(peer_record("unidir", 0, 1, "on", 60.0 if h == 2 else 370.0)),
            Sample.from_record(peer_record("unidir", 1, 0, "on", 368.0))]})
    store = Store(url)
    run_id = store.begin_run(label="gpus", command="clusterbench run cluster --hostfile hosts", suite="cluster",
                             user="test", kind="cluster")
    for host, env in envs.items():
        store.link_host(run_id, host, store.add_environment(env, environment.snapshot_hash(env)))
    for position, st in enumerate(steps):
        step = store.begin_step(run_id, position=position, name=st["name"], kernel=st["kernel"], params={},
                                launcher="mpiexec", ranks=1, ranks_per_node=None, host=st["host"])
        for s in st["samples"]:
            store.add_sample(step, s, [])
        store.finish_step(step, "ok", build=st["build"])
    store.finish_run(run_id, "ok")
    pin_times(store)
    return store, run_id


def test_the_markdown_report_of_a_gpu_cluster_carries_every_gpus_figures_as_the_html_does(tmp_path, monkeypatch):
    """The Markdown report (the one pasted into a procurement document) of a
    stored GPU cluster run: the per-GPU table and the table of the copies
    between GPUs, row for row and cell for cell those of the HTML report,
    the trained-down GPU's and the slow pair's cells marked. Before, the
    Markdown report left out every GPU figure."""
    import re

    from test_golden_reports import STARTED, check, without_plots

    from clusterbench.report import render
    from clusterbench.report.data import Report

    store, run_id = gpu_cluster_store(f"sqlite:///{tmp_path / 'results.db'}")
    monkeypatch.setenv("SOURCE_DATE_EPOCH", str(int(STARTED.timestamp())))
    report = Report.of(store, [str(run_id)])
    md = render("md", report)
    check("cluster_gpu.md", md)   # the whole document an integrator hands in, GPU figures and all

    per_gpu = md[md.index("### Per GPU: GB/s, ratio to the median of the GPUs; ! = flagged"):]
    per_gpu = per_gpu[:per_gpu.index("\n\n###")]
    rows = {line.split(" | ")[0][2:]: line for line in per_gpu.splitlines() if line.startswith("| h0")}
    assert sorted(rows) == [f"h0{h} GPU {g}" for h in range(1, 5) for g in range(2)]
    assert next(line for line in per_gpu.splitlines() if line.startswith("| h0")).startswith("| h03 GPU 1 |")
    odd = rows.pop("h03 GPU 1")
    assert "| 27.6 (0.50) ! | 27.6 (0.50) ! |" in odd and odd.count(" !") == 3, odd   # h2d, d2h, bidir
    for line in rows.values():
        assert "55.3 (1.00)" in line and "4,120 (1.00)" in line and "!" not in line, line
    assert "| GPU to GPU, one way 0>1, peer on | 370 | 370 (1.00) | 60 (0.16) ! | 370 (1.00) | 370 (1.00) |" in md

    # the same rows, cells and marks as the HTML report's tables
    html = render("html", report)
    html_rows = [[re.sub(r"<[^>]+>", "", c).replace("&gt;", ">") for c in re.findall(r"<t[dh][^>]*>.*?</t[dh]>", row)]
                 for table in re.findall(r"<h3>(?:Per GPU|Copies between the GPUs).*?</table>", html, re.S)
                 for row in table.split("</tr>") if "<t" in row]
    md_rows = [[c.strip() for c in line.strip("|").split(" | ")]
               for table in re.findall(r"### (?:Per GPU|Copies between the GPUs).*?\n\n(.*?)\n\n", md, re.S)
               for line in table.splitlines() if not line.startswith("|---")]
    assert len(md_rows) == 1 + 1 + 8 + 1 + 2   # heads, medians, 8 GPUs; head, 2 pairs
    assert md_rows == html_rows
    check("cluster_gpu.html.txt", without_plots(html))
