"""The report of two cluster runs (before and after a repair), the
document an integrator hands the customer: its Markdown and HTML open with
"Cluster run B against run A", the verdict `compare A B` prints and its
node by node and link by link tables, cell for cell the same in both.
Before, the two formats pooled every node's figure in one comparison row
(h03's slow Himeno hidden in the median of 12) and gave no verdict."""
from __future__ import annotations

import html as html_lib
import io
import re

import pytest

from test_cluster_report import NODES, fill_cluster_store
from test_golden_reports import STARTED

NEW_CABLE_MIB_S = {(a, b): 22.93 for a in NODES for b in NODES if a != b}   # h03's cable replaced
VERDICT = "6 flags gone: h01->h03; h02->h03; h03->h01; h03->h02; h03->h04; h04->h03. 0 new."


@pytest.fixture(scope="module")
def before_and_after(tmp_path_factory):
    from clusterbench.store import Store

    url = f"sqlite:///{tmp_path_factory.mktemp('before_after') / 'results.db'}"
    before = fill_cluster_store(url)   # h03's links at a quarter of the others, its Himeno slow
    after = fill_cluster_store(url, link_mib_s=NEW_CABLE_MIB_S, label="new cable")   # the links, not the Himeno
    return Store(url), before, after


def rendered(before_and_after, fmt: str, monkeypatch) -> str:
    from clusterbench.report import render
    from clusterbench.report.data import Report

    monkeypatch.setenv("SOURCE_DATE_EPOCH", str(int(STARTED.timestamp())))
    store, before, after = before_and_after
    return render(fmt, Report.of(store, [str(before), str(after)]))


def markdown_tables(md: str) -> dict[str, list[list[str]]]:
    """The section's tables by title, heads and rows, each cell unescaped."""
    section = md[md.index("## Cluster run 2 (new cable) against run 1 (acceptance)\n"):md.index("## Comparison")]
    return {title: [[c.strip() for c in line.strip("|").split(" | ")] for line in body.splitlines()
                    if not line.startswith("|---")]
            for title, body in re.findall(r"### (.*?)\n\n(.*?)\n\n", section, re.S)}


def html_tables(html: str) -> dict[str, list[list[str]]]:
    section = html[html.index("<h2>Cluster run 2 (new cable) against run 1 (acceptance)</h2>"):html.index("<h2>Comparison")]
    return {title: [[re.sub(r"<[^>]+>", "", c).replace("&gt;", ">")
                     for c in re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", row)] for row in body.split("</tr>") if "<t" in row]
            for title, body in re.findall(r"<h3>(.*?)</h3>\s*(<table>.*?</table>)", section, re.S)}


def test_the_reports_of_two_cluster_runs_say_what_the_repair_fixed_node_by_node_and_link_by_link(
        before_and_after, monkeypatch):
    md = rendered(before_and_after, "md", monkeypatch)
    html = rendered(before_and_after, "html", monkeypatch)
    # after the summary, before the pooled comparison of the configurations
    assert md.index("## Summary") < md.index("## Cluster run 2 (new cable) against run 1 (acceptance)\n\n"
                                             f"{VERDICT}\n") < md.index("## Comparison")
    assert (f'<h2>Cluster run 2 (new cable) against run 1 (acceptance)</h2>\n<p class="summary">'
            f'{VERDICT.replace(">", "&gt;")}</p>') in html

    # titled by their nodes, as one cluster run's report is: the launch host named first, as "h01 and 4 other
    # hosts" (login1 a node among them), was the title before; each run by its id and label, not "1 vs 2"
    title = "Cluster comparison: run 1 (acceptance) vs run 2 (new cable) of 4 nodes, h01, h02, h03, h04, 2026-01-15"
    assert md.startswith(f"# {title}\n"), md[:200]
    assert re.sub(r"<[^>]+>", "", html[html.index("<h1>"):html.index("</h1>")]) == title

    tables = markdown_tables(md)
    assert list(tables) == ["Node by node", "Link by link (bandwidth)"]   # no GPU figures: no GPU table
    nodes, links = tables["Node by node"], tables["Link by link (bandwidth)"]
    assert nodes == [["node: figure", "unit", "run 1", "run 2", "ratio", "flags"],
                     ["h03: compute (Himeno), jacobi (time)", "MFLOPS", "101", "101", "1.00", "still flagged"],   # not a cable's
                     ["h01: compute (Himeno), jacobi (time)", "MFLOPS", "601", "601", "1.00", ""],
                     ["h02: compute (Himeno), jacobi (time)", "MFLOPS", "611", "611", "1.00", ""],
                     ["h04: compute (Himeno), jacobi (time)", "MFLOPS", "606", "606", "1.00", ""]]
    # the six links of h03 first, fixed; the best of three repetitions, to the one rounding rule
    assert links[0] == ["link", "unit", "run 1", "run 2", "ratio", "flags"]
    assert links[1:7] == [[f"{a}->{b}", "MiB/s", "5.852", "23.13", "3.95", "fixed"]
                          for a, b in (("h01", "h03"), ("h02", "h03"), ("h03", "h01"), ("h03", "h02"), ("h03", "h04"),
                                       ("h04", "h03"))]
    assert links[7:] == [[f"{a}->{b}", "MiB/s", "23.13", "23.13", "1.00", ""] for a in NODES for b in NODES
                         if a != b and "h03" not in (a, b)]
    assert "|---|---|---:|---:|---:|---|" in md   # the figures right-aligned

    assert html_tables(html) == tables   # the same headings, rows and cells in both documents
    assert html.count('<tr class="flagged">') == 1 + 6

    # and what `compare A B` prints in a terminal
    from rich.console import Console

    from clusterbench.report.cluster_compare_terminal import print_cluster_comparison
    from clusterbench.report.data import load_run

    store, before, after = before_and_after
    buf = io.StringIO()
    print_cluster_comparison(Console(file=buf, width=200), load_run(store, before), load_run(store, after))
    terminal = buf.getvalue()
    assert terminal.startswith(f"Cluster run 2 (new cable) against run 1 (acceptance): {VERDICT}\n"), terminal
    assert re.search(r"h03->h01 +│ MiB/s │ +5\.852 │ +23\.13 │ +3\.95 │ fixed", terminal), terminal


def test_a_report_of_one_cluster_run_has_no_before_and_after(before_and_after, monkeypatch):
    from clusterbench.report import render
    from clusterbench.report.data import Report

    store, before, _ = before_and_after
    assert " against run " not in render("md", Report.of(store, [str(before)]))


@pytest.mark.parametrize("fmt", ["md", "html"])
def test_two_cluster_runs_pool_no_nodes_anywhere_and_say_alike_environments_once(before_and_after, fmt, monkeypatch):
    """Under the before/after, the report pooled what it compares node by
    node: its summary quoted "compute (Himeno) 604 vs 604 MFLOPS" (h03's
    101 hidden in the 4 nodes' median), its comparison had a Himeno row of
    n = 12 and 24 rows of links named "h01, h03", and its environment part
    said "do not differ" five times, once per host."""
    text = rendered(before_and_after, fmt, monkeypatch)
    plain = html_lib.unescape(re.sub(r"<[^>]+>", "", text)) if fmt == "html" else text
    summary = plain[plain.index("Summary"):plain.index("Node by node")]
    assert summary.split("Summary", 1)[1].lstrip().startswith(
        f"Cluster run 2 (new cable) against run 1 (acceptance): {VERDICT}"), summary[:300]
    assert "headline figure" not in summary   # no table quoting one pooled "compute (Himeno)"
    assert "h03: compute (Himeno), jacobi (time) 83 % below the median of 4 nodes" in summary   # each run's findings
    comparison = plain[plain.index("Comparison, baseline run 1 (acceptance)"):plain.index("Cluster run 1: 4 nodes")]
    assert "n = 12" not in comparison and "link_bandwidth" not in comparison and "himeno: jacobi" not in comparison
    assert "scaling: 4 nodes x 1 rank" in comparison   # what no node-by-node table holds is still compared
    assert plain.count("do not differ in any key captured") == 1
    assert ("The environments recorded for run 1 (acceptance) and run 2 (new cable) do not differ in any key captured "
            "on any of 5 hosts, each against itself: h01, h02, h03, h04, login1.") in plain


@pytest.mark.parametrize("fmt", ["md", "html"])
def test_the_reports_of_two_cluster_runs_are_unchanged(before_and_after, fmt, monkeypatch):
    """The whole document, kept as a golden (tests/golden/cluster_compare.*):
    the tests above check its before/after section cell by cell; a change
    anywhere else in what an integrator hands in shows here too."""
    from test_golden_reports import check, without_plots

    text = rendered(before_and_after, fmt, monkeypatch)
    check(f"cluster_compare.{'md' if fmt == 'md' else 'html.txt'}", text if fmt == "md" else without_plots(text))


def test_a_node_measured_in_one_run_only_is_named_in_the_verdict(tmp_path):
    """After the repair h03 was left out of the host file (or failed): its
    figures and links, flagged before, were passed over in silence, and
    the verdict read "0 flags gone; 0 new." as if every node had been
    compared. It names the nodes measured in one run only."""
    from clusterbench.report.cluster_before_after import before_after
    from clusterbench.report.data import load_run
    from clusterbench.store import Store

    url = f"sqlite:///{tmp_path / 'results.db'}"
    before = fill_cluster_store(url)   # h03 slow, flagged
    after = fill_cluster_store(url, link_mib_s=NEW_CABLE_MIB_S, label="without h03",
                               nodes=[n for n in NODES if n != "h03"])
    store = Store(url)
    said = before_after(load_run(store, before), load_run(store, after)).opening
    assert said == ("Cluster run 2 (without h03) against run 1 (acceptance): 0 flags gone. 0 new. "
                    "Measured in run 1 (acceptance) only: h03."), said
