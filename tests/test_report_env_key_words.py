"""The environment keys a report shows on their own (what differs between
the nodes of a cluster run, what differs between two configurations) are
named in words from one table (environment/key_words.py): a customer read
`gpu.1.pcie_width_current` and `cbk.version` in the report handed in."""
from __future__ import annotations

import pytest

from test_golden_reports import STARTED, golden_cli  # noqa: F401 (a fixture)


def test_a_key_is_named_in_words_and_an_unknown_one_as_stored():
    from clusterbench.environment.key_words import key_words

    assert key_words("gpu.1.pcie_width_current") == "GPU 1, PCIe link width (now)"
    assert key_words("gpu.1.pcie_width") == "GPU 1, PCIe link width (maximum)"
    assert key_words("cbk.version") == "cbk version"
    assert key_words("target./scratch/a.b.fs_type") == "/scratch/a.b, file system"   # a directory with a dot in it
    assert key_words("gpu.0.pcie_gen_current_error") == "GPU 0, PCIe generation (now), why not read"
    # one target directory's keys, as a comparison of two directories names them (comparison.single_target)
    assert key_words("target.fs_type") == "target directory, file system"
    assert key_words("target.netfs.kind") == "target directory, network file system"
    assert key_words("target.path") == "target directory"
    # a topic whose collector read nothing: `env --diff` showed batchjob.collector_error as stored
    assert key_words("batchjob.collector_error") == "batchjob collector, why not read"
    assert key_words("netdev_tuning.collector_error") == "netdev_tuning collector, why not read"
    # a key no pattern names (a collector added later) is shown as stored, never hidden
    assert key_words("acme.widget.count") == "acme.widget.count"
    assert key_words("acme.widget_error") == "acme.widget_error"


@pytest.fixture
def odd_node(monkeypatch):
    """h04's GPU 1 trained down to x8 and h04 with another cbk: keys that differ between nodes."""
    import test_cluster_report

    monkeypatch.setitem(test_cluster_report.GOVERNOR, "h04", {"gpu.1.pcie_width_current": 8, "cbk.version": "0.0.9"})
    for host in ("h01", "h02", "h03", "login1"):
        monkeypatch.setitem(test_cluster_report.GOVERNOR, host, {**test_cluster_report.GOVERNOR.get(host, {}),
                                                                  "gpu.1.pcie_width_current": 16, "cbk.version": "0.1.0"})


@pytest.mark.parametrize("fmt", ["md", "html"])
def test_the_keys_that_differ_between_nodes_are_named_in_words(odd_node, tmp_path, monkeypatch, fmt):
    from test_cluster_report import fill_cluster_store

    from clusterbench.report import render
    from clusterbench.report.data import Report
    from clusterbench.store import Store

    url = f"sqlite:///{tmp_path / 'results.db'}"
    run_id = fill_cluster_store(url)
    monkeypatch.setenv("SOURCE_DATE_EPOCH", str(int(STARTED.timestamp())))
    text = render(fmt, Report.of(Store(url), [str(run_id)]))
    table = text[text.index("Environment keys that differ between nodes"):]
    table = table[:table.index("</table>" if fmt == "html" else "\n\n", 50)]
    # between nodes a cbk's build is one key, cbk (analysis/cluster/cbk_fact.py)
    for words in ("GPU 1, PCIe link width (now)", "cbk build (version, MPI, compiler)", "CPU frequency governor"):
        assert words in table, (words, table)
    for key in ("gpu.1.pcie_width_current", "cbk.version", "cpu.governor"):
        assert key not in table, (key, table)
    # the summary's sentence names the key as the table does
    assert "CPU frequency governor: h03 has powersave, the other nodes performance" in text


def test_the_environment_differences_of_two_configurations_are_named_in_words(golden_cli, tmp_path):
    """The golden store's two runs differ in tuned.profile: compare's table and both reports name it."""
    out_md, out_html = tmp_path / "r.md", tmp_path / "r.html"
    golden_cli("report", "base", "tuned", "-o", str(out_md))
    golden_cli("report", "base", "tuned", "-o", str(out_html))
    assert "| tuned profile | balanced | throughput-performance |" in out_md.read_text()
    assert "<tr><td>tuned profile</td><td>balanced</td><td>throughput-performance</td></tr>" in out_html.read_text()
    assert "tuned profile" in golden_cli("compare", "base", "tuned")


def test_an_imported_runs_own_keys_are_named_in_words(cli, store_url):
    """Two imports of OSU differ in the tool's version and file: compare listed `import.tool_version`,
    `import.source` and `import.file` as stored, beside keys named in words."""
    from clusterbench.environment.key_words import key_words
    from test_import import FIXTURES

    assert key_words("import.tool_version") == "imported tool's version"
    assert key_words("import.tool_version_error") == "imported tool's version, why not read"
    assert (key_words("import.client"), key_words("import.sender")) == ("Client", "Sender")
    for label, name in (("osu59", "osu-5.9-latency.txt"), ("osu72", "osu-7.2-latency.txt")):
        r = cli("import", "--label", label, "--host", "n01", "--date", "2026-12-07", str(FIXTURES / name))
        assert r.status == 0, r.stderr
    out = cli("compare", "osu59", "osu72").stdout
    for words in ("imported tool's version", "imported from", "imported file"):
        assert words in out, (words, out)
    for key in ("import.tool_version", "import.source", "import.file"):
        assert key not in out, (key, out)
