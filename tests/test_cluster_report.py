"""The report of a cluster run as a customer is handed it: its title names
the nodes (not the host it was launched from), its summary opens with what
was found across the nodes (one node's figures as headlines hid the node
that differs), the Markdown report has the nodes side by side, the links
and the scaling as HTML and show have them, show says when it ran, and
figures follow the one rounding rule. The run is stored as `run cluster`
stores one (kind cluster, a step per node, the link matrix, a scaling
step, a snapshot per node and one of the launching host); its outputs are
kept as goldens (tests/golden/cluster.*, regenerated as test_golden_reports.py says)."""
from __future__ import annotations

import datetime as dt
import io

import pytest
import sqlalchemy as sa

from test_golden_reports import ENV_BASE, STARTED, check

NODES = ["h01", "h02", "h03", "h04"]
HIMENO_MFLOPS = {"h01": 600.0, "h02": 610.0, "h03": 100.0, "h04": 605.0}   # h03: slow
LINK_MIB_S = {(a, b): (5.652 if "h03" in (a, b) else 22.93) for a in NODES for b in NODES if a != b}   # h03's port
LATENCY_US = {pair: 83.71 if "h03" in pair else 15.03 for pair in LINK_MIB_S}
GOVERNOR = {"h03": {"cpu.governor": "powersave"}}   # h03 configured apart: the environment says it once


def fill_cluster_store(url: str, himeno_mflops: dict | None = None, link_mib_s: dict | None = None,
                       label: str = "acceptance", nodes: list[str] = NODES) -> int:
    """A cluster run as `run cluster` stores one; by default h03 slow (its
    Himeno and its port); another run's figures (after a repair) as given,
    on the nodes given (a run over fewer, its links among those)."""
    from clusterbench import environment
    from clusterbench.results.sample import Sample
    from clusterbench.store import Store

    store = Store(url)
    himeno_mflops, link_mib_s = himeno_mflops or HIMENO_MFLOPS, link_mib_s or LINK_MIB_S
    run_id = store.begin_run(label=label, command="clusterbench run cluster --hostfile hosts",
                             suite="cluster", user="golden", kind="cluster")
    for host in [*nodes, "login1"]:   # the launching host has a snapshot too, and is no node
        env = {**ENV_BASE, "host.name": host, **GOVERNOR.get(host, {})}
        store.link_host(run_id, host, store.add_environment(env, environment.snapshot_hash(env)))
    position = 0
    for host in nodes:
        step = store.begin_step(run_id, position=position, name="himeno", kernel="himeno", params={"size": "S"},
                                launcher="mpiexec", ranks=1, ranks_per_node=None, host=host)
        for rep in range(3):
            record = {"phase": "jacobi", "mode": "time", "rate": himeno_mflops[host] + rep, "rate_unit": "MFLOPS",
                      "repetition": rep, "sweep_key": None, "qualifiers": []}
            store.add_sample(step, Sample.from_record(record), [])
        store.finish_step(step, "ok")
        position += 1
    step = store.begin_step(run_id, position=position, name="link matrix (mpiGraph shift pattern)", kernel="linkmatrix",
                            params={}, launcher="mpiexec", ranks=len(nodes), ranks_per_node=1)
    for rep in range(3):
        for (a, b), mib_s in ((pair, v) for pair, v in link_mib_s.items() if set(pair) <= set(nodes)):
            for phase, value, unit in (("link_bandwidth", mib_s + rep / 10, "MiB/s"), ("link_latency", LATENCY_US[(a, b)], "us")):
                record = {"phase": phase, "mode": "n/a", "rate": value, "rate_unit": unit, "repetition": rep,
                          "src_host": a, "dst_host": b, "qualifiers": ["src_host", "dst_host"], "sweep_key": None}
                store.add_sample(step, Sample.from_record(record), [])
    store.finish_step(step, "ok")
    for nodes in (2, 4):
        position += 1
        step = store.begin_step(run_id, position=position, name=f"scaling: {nodes} nodes x 1 rank [op=allreduce]",
                                kernel="mpi", params={"op": "allreduce", "sizes": "8"}, launcher="mpiexec",
                                ranks=nodes, ranks_per_node=1)
        for rep in range(3):
            record = {"phase": "allreduce", "mode": "library", "rate": 10.0 * nodes + rep, "rate_unit": "us",
                      "repetition": rep, "sweep_key": "size_bytes", "size_bytes": 8, "qualifiers": []}
            store.add_sample(step, Sample.from_record(record), [])
        store.finish_step(step, "ok", build={"nodes": nodes})
    store.finish_run(run_id, "ok")
    pin_times(store)
    return run_id


def pin_times(store) -> None:
    """Every run of the store launched from login1 at STARTED, 7 minutes
    long, as a golden needs: the same text whenever the test runs."""
    with store.engine.begin() as c:
        c.execute(sa.text("UPDATE runs SET host='login1', pid=NULL, started=:s, finished=:f"),
                  {"s": STARTED, "f": STARTED + dt.timedelta(minutes=7)})
        c.execute(sa.text("UPDATE steps SET started=:s, finished=:f"), {"s": STARTED, "f": STARTED + dt.timedelta(seconds=20)})
        c.execute(sa.text("UPDATE environments SET captured=:s"), {"s": STARTED})


@pytest.fixture(scope="module")
def cluster_store(tmp_path_factory):
    from clusterbench.store import Store

    url = f"sqlite:///{tmp_path_factory.mktemp('cluster') / 'results.db'}"
    run_id = fill_cluster_store(url)
    return Store(url), run_id


def rendered(cluster_store, fmt: str, monkeypatch) -> str:
    from clusterbench.report import render
    from clusterbench.report.data import Report

    monkeypatch.setenv("SOURCE_DATE_EPOCH", str(int(STARTED.timestamp())))
    store, run_id = cluster_store
    return render(fmt, Report.of(store, [str(run_id)]))


def test_the_markdown_report_of_a_cluster_run_opens_with_what_was_found_and_sets_the_nodes_side_by_side(
        cluster_store, monkeypatch):
    md = rendered(cluster_store, "md", monkeypatch)
    # the nodes measured, not the login host it was launched from ("h01 and 4 other hosts")
    assert md.startswith("# Cluster report of 4 nodes, h01, h02, h03, h04 (acceptance), 2026-01-15\n\n"
                         "## System measured\n"), md[:400]
    assert "\n## Summary\n\n4 nodes, 1 per-node figure, 12 links" in md
    summary = md[:md.index("## Cluster run")]
    assert "h03: compute (Himeno), jacobi (time) 83 % below the median of 4 nodes" in summary
    assert "look at h03's port or cable" in summary
    assert "headline figure" not in summary   # h01's Himeno as "compute" would hide h03's
    # the nodes side by side, the links, the scaling: before, only the steps one node at a time
    assert "| figure | unit | median of the nodes | h01 | h02 | h03 | h04 |" in md
    assert "| h03 -> h01 | 5.852 | 25 % of the class's best link | all links |" in md
    assert "| h01 | - | 23.13 (15.03) | !5.852 (83.71) | 23.13 (15.03) |" in md   # latency to the one rule, not 84
    assert "### Scaling over nodes (µs per call)" in md and "| allreduce 8 B (1 rank/node) | 21 | 41 |" in md
    check("cluster.md", md)


def test_the_html_report_of_a_cluster_run_says_what_was_found_first(cluster_store, monkeypatch):
    from test_golden_reports import without_plots

    html = rendered(cluster_store, "html", monkeypatch)
    assert "<title>Cluster report of 4 nodes, h01, h02, h03, h04 (acceptance), 2026-01-15</title>" in html
    summary = html[html.index("<h2>Summary</h2>"):html.index("<h2>Cluster run")]
    assert "h03: compute (Himeno), jacobi (time) 83 % below the median of 4 nodes" in summary and "headline" not in summary
    assert "<th>latency µs</th>" in html and "<td class=n>83.71</td>" in html
    assert "<td>h01, h02, h03, h04, login1 (launched the run, not a node)</td>" in html   # one line: one row
    # the heat map's figures as the tables print them (4 significant digits), not 3
    heat = html[html.index('class="heatmap"'):html.index("</svg>", html.index('class="heatmap"'))]
    assert ">23.13<" in heat and ">5.852 !<" in heat   # a flagged link marked beyond its colour
    assert "Sweep of np" not in html   # the scaling steps are the cluster section's scaling, not sweeps before it
    check("cluster.html.txt", without_plots(html))


def test_the_per_node_table_gives_each_nodes_interval_and_repetitions_in_markdown_and_html(cluster_store, monkeypatch):
    # h03's 101 beside 604 is a finding only if its repetitions agree: each node's cell gives its median,
    # its ratio, and the interval of the median; the interval's words and n, the same in every cell
    # ("([min, max], n = 3, coverage 75 %)", two of a cell's four lines on A4), once in the heading
    md = rendered(cluster_store, "md", monkeypatch)
    assert ("### Per node: median (ratio to the median of the nodes); interval of the median "
            "(\\[min, max\\], n = 3, coverage 75 %); ! = flagged") in md
    assert ("| compute (Himeno), jacobi (time) | MFLOPS | 604 | 601 (1.00); 600..602 | 611 (1.01); 610..612 "
            "| 101 (0.17) !; 100..102 | 606 (1.00); 605..607 |") in md
    html = rendered(cluster_store, "html", monkeypatch)
    assert ("<h3>Per node (median, ratio to the median of the nodes; interval of the median "
            "([min, max], n = 3, coverage 75 %))</h3>") in html
    assert '<td class="n flag">101 (0.17) !<br><small>100..102</small></td>' in html
    assert '<td class="n">601 (1.00)<br><small>600..602</small></td>' in html
    assert "coverage 75 %)</small>" not in html


def test_a_node_cells_interval_words_stay_in_it_where_they_differ_from_another_nodes():
    from clusterbench.analysis.stats import summarize
    from clusterbench.report.cluster_node_cells import NodeCell, shared_spread_words, spread_shown, spread_words

    three, five = (NodeCell("1", False, spread_words(summarize(v))) for v in ([1.0, 2.0, 3.0], [1.0, 2, 3, 4, 5]))
    assert shared_spread_words([three, five]) == ""
    assert spread_shown(three, "") == "1..3 ([min, max], n = 3, coverage 75 %)"
    one = NodeCell("1", False, spread_words(summarize([1.0])))
    assert shared_spread_words([three, one]) == "" and shared_spread_words([three, None]) != ""


def test_a_node_cells_spread_names_n_once_whatever_the_interval():
    from clusterbench.analysis.stats import summarize
    from clusterbench.report.cluster_node_cells import spread_words

    assert spread_words(summarize([600.0, 601.0, 602.0])) == "600..602 ([min, max], n = 3, coverage 75 %)"
    assert spread_words(summarize([float(v) for v in range(600, 610)])) == "601..608 (95 % CI), n = 10"
    assert spread_words(summarize([600.0])) == "n = 1"


def test_the_test_environment_is_given_once_and_then_what_differs_per_host(cluster_store, monkeypatch):
    # five near-identical blocks (4 nodes and the launching host) hid the one line that differs
    md = rendered(cluster_store, "md", monkeypatch)
    assert "### Test environment: h01" not in md and "### Test environment: login1" not in md
    assert md.count("- **CPU**: 1 x Example CPU 9000, 8 cores / 16 threads") == 1
    assert "Hosts: h01, h02, h03, h04 and login1 (launched the run, not a node)." in md
    assert ("| CPU clock | range not available; governor performance; turbo on "
            "| h03: range not available; governor powersave; turbo on |") in md   # the HTML's words
    assert "- **CPU clock**" not in md   # it differs: not among the lines the same on every host
    html = rendered(cluster_store, "html", monkeypatch)
    assert "<h3>Test environment: h01</h3>" not in html and html.count("<tr><td>CPU</td>") == 1
    assert ('<tr><td>CPU clock</td><td>range not available; governor performance; turbo on</td>'
            '<td class="flag">h03: range not available; governor powersave; turbo on</td></tr>') in html


def test_the_link_matrixs_table_and_plots_name_its_figures_in_words(cluster_store, monkeypatch):
    """The link matrix's step table and its two plots read "link_bandwidth" and
    "link_latency", the record's phase, 24 rows and 24 bar labels of identifiers
    under a heat map that says "link bandwidth". The phase is shown in words."""
    html, md = rendered(cluster_store, "html", monkeypatch), rendered(cluster_store, "md", monkeypatch)
    for text in (html, md):
        assert "link_bandwidth" not in text and "link_latency" not in text
    assert "<tr><td>link bandwidth</td><td>h01, h02</td>" in html and "<tr><td>link latency</td><td>h01, h02</td>" in html
    assert ">link bandwidth h01, h02</text>" in html and ">link latency h04, h03</text>" in html   # the bars' labels
    assert "| link bandwidth | h01, h02 | 3 |" in md


def test_a_steps_plots_of_two_units_are_titled_each_with_its_unit(cluster_store, monkeypatch):
    """The link matrix's two bar charts, bandwidth and latency, one under the
    other, had one title; only the axis told them apart."""
    html = rendered(cluster_store, "html", monkeypatch)
    title = "link matrix (mpiGraph shift pattern): median, bars = interval of the median"
    assert f">{title} (MiB/s)</text>" in html and f">{title} (µs)</text>" in html
    assert ">node h01: himeno: median, bars = interval of the median</text>" in html   # one unit: as it was


def test_show_of_a_cluster_run_says_when_it_ran_in_utc_and_for_how_long(cluster_store):
    from rich.console import Console

    from clusterbench.report.cluster_terminal import print_cluster
    from clusterbench.report.data import load_run

    store, run_id = cluster_store
    buf = io.StringIO()
    print_cluster(Console(file=buf, width=160), load_run(store, run_id))
    show = "".join(line.rstrip() + "\n" for line in buf.getvalue().splitlines())   # as show pipes it (output/console.py)
    assert show.startswith(f"Cluster run {run_id} (acceptance): ok, 2026-01-15 09:30:00 UTC (took 7.0 min)\n"), show
    assert "!5.852 (83.71)" in show and "Scaling over nodes (µs per call)" in show
    check("cluster_show.txt", show)


def test_show_gives_each_nodes_interval_and_repetitions_under_its_median(cluster_store):
    """As the report's cells (cluster_node_cells.py): with "601 (1.00)" alone
    show could not tell a node 8 % low from a node whose repetitions scatter 8 %."""
    from rich.console import Console

    from clusterbench.report.cluster_terminal import print_cluster
    from clusterbench.report.data import load_run

    store, run_id = cluster_store
    buf = io.StringIO()
    print_cluster(Console(file=buf, width=160), load_run(store, run_id))
    lines = buf.getvalue().splitlines()
    (row,) = [i for i, line in enumerate(lines) if "!101 (0.17)" in line]
    # h03's median, and under it in its column its interval (the step tables' words) and n
    under = lines[row + 1]
    assert "100..102 (75%), n = 3" in under and "600..602 (75%), n = 3" in under, under
    assert under.index("100..102 (75%), n = 3") + len("100..102 (75%), n = 3") == \
        lines[row].index("!101 (0.17)") + len("!101 (0.17)")


def test_each_per_node_figure_is_named_by_its_parts_title_in_the_suite():
    """The per-node figures as a reader takes them, named as a suite's step
    names its figures in a single-node report: the part's title in run
    cluster's suite, the phase and the condition; not the kernel's internal
    "himeno jacobi (time)" or "mpi pingpong 8 B (library)"."""
    from clusterbench.analysis.cluster.analysis import node_figures
    from clusterbench.analysis.cluster.naming import part_titles, suite_document
    from clusterbench.results.sample import Sample

    parts = [e["part"] for e in suite_document()["per-node"]]
    assert sorted(part_titles()) == sorted(parts)   # a new part gets a reader's name too
    # a customer's words, not the command line's: "disk in --scratch" broke as "disk in -" over "-scratch"
    assert not [t for t in part_titles().values() if "--" in t], part_titles()
    measured = {   # part -> (kernel, a record of it as cbk writes it)
        "stream": ("stream", {"phase": "triad", "mode": "n/a", "statistic": "best", "qualifiers": ["statistic"],
                              "rate_unit": "MiB/s"}),
        "himeno": ("himeno", {"phase": "jacobi", "mode": "time", "rate_unit": "MFLOPS", "qualifiers": []}),
        "cpufreq": ("cpufreq", {"phase": "clock", "mode": "n/a", "busy_cpus": 1, "sweep_key": "busy_cpus",
                                "qualifiers": [], "rate_unit": "MHz"}),
        "seqio": ("seqio", {"phase": "write", "mode": "fsync", "rate_unit": "MiB/s", "qualifiers": []}),
        "pingpong": ("mpi", {"phase": "pingpong", "mode": "n/a", "algorithm": "library", "qualifiers": ["algorithm"],
                             "sweep_key": "size_bytes", "size_bytes": 8, "rate_unit": "us"}),
    }
    steps = [{"name": part, "host": host, "kernel": kernel, "status": "ok",
              "samples": [Sample.from_record({**record, "rate": 100.0 + i, "repetition": i}) for i in range(3)]}
             for part, (kernel, record) in measured.items() for host in ("h01", "h02")]
    assert sorted(f.name for f in node_figures(steps, 0.10)) == [
        "CPU clock (cpufreq), clock (1 busy)",
        "MPI within the node, pingpong 8 B (library)",
        "compute (Himeno), jacobi (time)",
        "disk in the scratch directory (seqio), write (fsync)",
        "memory bandwidth (STREAM), triad (best)",
    ]


# the cluster suite's scaling curves (docs/cluster.md): 2 collectives at 3 sizes, 1 rank and all cores per node
SUITE_CURVES = [f"{op} {size} ({placement})" for op in ("allreduce", "alltoall") for size in ("8 B", "64 KiB", "1 MiB")
                for placement in ("1 rank/node", "all cores/node")]


@pytest.mark.parametrize("curves", [1, len(SUITE_CURVES)])
def test_the_scaling_plots_legend_covers_no_curve(curves, monkeypatch):
    """The HTML report's scaling figure (cluster_html.scaling, as the report
    draws it): its legend lies outside the axes' data area, and the figure
    with its legend is no wider than the report's text width. Inside the
    axes (matplotlib's "best" place) it covered the curves."""
    from clusterbench.analysis.cluster.analysis import ClusterView
    from clusterbench.report import cluster_html, plots

    drawn = []
    monkeypatch.setattr(plots, "_svg", lambda fig: drawn.append(fig) or "<svg></svg>")
    scaling = {name: {n: (1 + i) * 10.0 * n for n in (2, 4, 8, 16)} for i, name in enumerate(SUITE_CURVES[:curves])}
    cluster_html.scaling(ClusterView(hosts=[f"h{i:02d}" for i in range(16)], scaling=scaling))
    (fig,) = drawn
    try:
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        (ax,) = fig.axes
        legend, data = ax.get_legend().get_window_extent(renderer), ax.get_window_extent(renderer)
        assert not legend.overlaps(data), (legend, data)
        assert len(ax.get_legend().get_texts()) == curves
        width_in = fig.get_tightbbox(renderer).width
        assert width_in <= plots.WIDTH_IN, width_in
    finally:
        import matplotlib.pyplot as plt

        plt.close(fig)


def test_the_summary_of_a_killed_run_says_what_it_never_measured(tmp_path):
    """A cluster run killed with -9 has its steps marked killed by the next
    command that opens the store (reap_dead_runs); its summary said "Nothing
    flagged: every node within 10 % of the median" of nodes it never measured,
    and show listed "step himeno: killed:" once per node without the node. A
    link matrix stored skipped (a node cbk cannot run on) went unsaid too:
    "0 links" and no reason."""
    import subprocess
    import sys

    from clusterbench.analysis.cluster.analysis import analyse
    from clusterbench.analysis.cluster.findings import paragraph
    from clusterbench.report.cluster_terminal import print_cluster
    from clusterbench.report.data import load_run
    from clusterbench.store import Store
    from rich.console import Console

    store = Store(f"sqlite:///{tmp_path / 'r.db'}")
    run_id = store.begin_run(label="k9", command="clusterbench run cluster", suite="cluster", kind="cluster")
    for position, host in enumerate(["h01", "h02"]):
        store.begin_step(run_id, position=position, name="himeno", kernel="himeno", params={}, launcher="mpiexec",
                         ranks=1, ranks_per_node=None, host=host)   # left running: the run is killed here
    links = store.begin_step(run_id, position=2, name="link matrix (mpiGraph shift pattern)", kernel="linkmatrix",
                             params={}, launcher="none", ranks=2, ranks_per_node=1)
    store.finish_step(links, "skipped", message="cbk cannot run on every node (h02: cbk not found), "
                                                 "and a job over every node would wait for it")
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    with store.engine.begin() as c:   # the run's process, killed with -9
        c.execute(sa.text("UPDATE runs SET pid=:p"), {"p": int(gone.stdout)})
    store.reap_dead_runs()
    run = load_run(store, run_id)
    assert run["status"] == "killed"
    said = paragraph(analyse(run))
    assert "Nothing flagged" not in said, said
    assert "not measured: node h01: himeno killed; not measured: node h02: himeno killed" in said, said
    assert "not measured: link matrix (mpiGraph shift pattern) skipped: cbk cannot run on every node (h02" in said, said
    out = io.StringIO()
    print_cluster(Console(file=out, width=200), run)
    assert "node h01: himeno killed\nnode h02: himeno killed\n" in out.getvalue(), out.getvalue()


def test_the_summary_of_a_run_cut_short_before_its_first_step_says_nothing_was_measured(tmp_path):
    """Ctrl-C while the nodes' snapshots were taken: the summary said
    "0 nodes ... Nothing flagged: every node within 10 % of the median"."""
    from clusterbench.analysis.cluster.analysis import analyse
    from clusterbench.analysis.cluster.findings import paragraph
    from clusterbench.report.data import load_run
    from clusterbench.store import Store

    store = Store(f"sqlite:///{tmp_path / 'r.db'}")
    run_id = store.begin_run(label="cut", command="clusterbench run cluster", suite="cluster", kind="cluster")
    store.finish_run(run_id, "interrupted", message="interrupted by SIGINT")
    said = paragraph(analyse(load_run(store, run_id)))
    assert "Nothing flagged" not in said, said
    assert "not measured: any part: the run ended before its first step (interrupted by SIGINT)" in said, said


def test_the_figures_of_the_one_node_that_measured_a_step_are_shown(tmp_path):
    """Of two nodes, h02 failed its Himeno: h01's figures, measured and
    stored, vanished from show, report and compare ("0 per-node figures"),
    since a figure needed two nodes to be listed at all. It is listed,
    judged against nothing."""
    from clusterbench.analysis.cluster.analysis import analyse
    from clusterbench.report.data import load_run
    from clusterbench.results.sample import Sample
    from clusterbench.store import Store

    store = Store(f"sqlite:///{tmp_path / 'r.db'}")
    run_id = store.begin_run(label="one", command="clusterbench run cluster", suite="cluster", kind="cluster")
    for position, host in enumerate(["h01", "h02"]):
        step = store.begin_step(run_id, position=position, name="himeno", kernel="himeno", params={},
                                launcher="mpiexec", ranks=1, ranks_per_node=None, host=host)
        if host == "h01":
            store.add_sample(step, Sample.from_record({"phase": "jacobi", "mode": "time", "rate": 600.0,
                                                       "rate_unit": "MFLOPS", "repetition": 0, "sweep_key": None,
                                                       "qualifiers": []}), [])
            store.finish_step(step, "ok")
        else:
            store.finish_step(step, "failed", message="h02: exit status 1")
    store.finish_run(run_id, "failed")
    view = analyse(load_run(store, run_id))
    assert [(f.name, [(n.host, n.value, n.flagged) for n in f.nodes]) for f in view.figures] == [
        ("compute (Himeno), jacobi (time)", [("h01", 600.0, False)])]
