"""An imported run's environment, as show, the Markdown and the HTML report
print it: one line saying the file did not record it, and only what the
file did state (docs/import.md "The environment of an imported run").
Each item the file left out was its own "unavailable: imported from IOR
4.0.0 JSON: not recorded" line, a dozen of them, and the systems table's
summary read "not available; not available; DIMM layout not available"."""
from __future__ import annotations

from pathlib import Path

FIXTURE = Path(__file__).parent / "fixtures" / "import" / "ior-4.0.0-shared.json"
SAID_ONCE = "not recorded by IOR 4.0.0 JSON: only what it states is listed"


def test_an_imported_runs_environment_is_one_line_and_what_its_file_stated(cli, tmp_path):
    assert cli("import", str(FIXTURE)).status == 0
    for name in ("r.md", "r.html"):
        r = cli("report", "1", "-o", str(tmp_path / name))
        assert r.status == 0, r.stderr
    md = (tmp_path / "r.md").read_text()
    block = md.split("### Test environment: vm\n\n", 1)[1].split("\n\n", 1)[0].splitlines()
    # the file's "Machine": "Linux vm": its host and OS, then the rest said once
    assert block == ["- **Host**: vm", "- **OS**: Linux", f"- **Environment**: {SAID_ONCE}"]
    html = (tmp_path / "r.html").read_text()
    assert ('<table class="env"><tr><td>Host</td><td>vm</td></tr><tr><td>OS</td><td>Linux</td></tr>'
            f"<tr><td>Environment</td><td>{SAID_ONCE}</td></tr></table>") in html
    assert "<td>environment not recorded by IOR 4.0.0 JSON (the file states: OS Linux)</td>" in html  # systems table
    for text in (md, html):
        # its block's line and the systems table's (both formats have it)
        assert "unavailable" not in text and "not available" not in text and text.count("not recorded") == 2
    shown = cli("show", "1").stdout
    assert "vm: environment not recorded by IOR 4.0.0 JSON (the file states: OS Linux)" in shown


def test_a_captured_snapshot_keeps_its_item_by_item_block():
    from clusterbench.environment import summary_block
    from clusterbench.environment.report_block import summary_line

    env = {"host.name": "n1", "cpu.model": "Example CPU", "cpu.sockets": 1, "memory.total_bytes": 2**34,
           "os.name": "Debian 12", "kernel.release": "6.1.0", "numa.nodes_error": "no /sys/devices/system/node"}
    items = dict(summary_block(env))
    assert items["CPU"] == "1 x Example CPU" and items["NUMA"] == "unavailable: no /sys/devices/system/node"
    assert "Environment" not in items
    assert summary_line(env).startswith("1 x Example CPU; 16 GiB")
