"""What a report says of an imported run, read back from the rendered Markdown and HTML: the
cache state of an IOR read, and what is said where the file names no host."""
from __future__ import annotations

import re
from html import unescape
from pathlib import Path

import pytest

from test_markdown_comparison import Tables, rendered

FIXTURES = Path(__file__).parent / "fixtures" / "import"


def reports(cli, tmp_path, *targets: str) -> dict[str, tuple[Tables, str]]:
    """Each format's tables and its text (tags left out)."""
    out = {}
    for name in ("r.md", "r.html"):
        r = cli("report", *targets, "-o", str(tmp_path / name))
        assert r.status == 0, r.stderr
    md = (tmp_path / "r.md").read_text()
    html = (tmp_path / "r.html").read_text()
    out["md"] = (rendered(md), md)
    out["html"] = (Tables(html), unescape(re.sub(r"<[^>]+>", "", html)))
    return out


@pytest.mark.timeout(120)
def test_an_ior_read_is_not_called_cold_when_ior_dropped_no_cache(cli, tmp_path):
    """IOR 4.0.0, -C -e, one node: its read of 13,882 MiB/s came from the page cache, and the row said
    'cold' above its own warning that IOR does not empty the page cache."""
    assert cli("import", str(FIXTURES / "ior-4.0.0-posix-fpp.txt"), "--label", "ior").status == 0
    for fmt, (page, text) in reports(cli, tmp_path, "ior").items():
        table = next(t for t in page.tables if t and t[0][:2] == ["phase", "cache"])
        cache = {row[0]: row[1] for row in table[1:]}
        assert cache == {"write": "fsync", "read": "unknown"}, (fmt, table)
        assert "IOR does not empty the page cache before reading" in text, fmt


def headline_rows(page: Tables) -> dict[str, list[str]]:
    table = next(t for t in page.tables if t and t[0][:1] == ["headline figure (median)"])
    return {row[0]: row[1:] for row in table[1:]}


@pytest.mark.timeout(120)
def test_a_report_of_ior_results_alone_has_their_write_and_read_as_headlines(cli, tmp_path):
    """A store of IOR imports only: the summary said "None of the headline figures (disk, ...) was
    measured" above a table of IOR's write and read bandwidth."""
    assert cli("import", str(FIXTURES / "ior-4.0.0-posix-fpp.txt"), "--label", "ior").status == 0
    assert cli("import", str(FIXTURES / "ior-3.0.1-script-two-tests.txt"), "--label", "script").status == 0
    for fmt, (page, text) in reports(cli, tmp_path, "ior").items():
        rows = headline_rows(page)
        assert list(rows) == ["parallel write (fsync)", "parallel read (cache: unknown)"], (fmt, rows)
        assert rows["parallel write (fsync)"][0].startswith("819 MiB/s"), (fmt, rows)
        assert rows["parallel read (cache: unknown)"][-1].startswith("flagged: IOR does not empty"), (fmt, rows)
        assert "None of the headline figures" not in text, fmt
    # a line pario cannot run (-f script) is an `ior` step, and heads its report the same way
    for fmt, (page, _) in reports(cli, tmp_path, "script").items():
        assert [name.split(" (")[0] for name in headline_rows(page)] == ["parallel write", "parallel read"], fmt


@pytest.mark.timeout(120)
def test_a_report_without_a_headline_says_why(cli, tmp_path):
    """OSU's gather is no kernel's figure: the sentence names what was measured instead of leaving the
    reader to wonder whether the report lost its figures."""
    assert cli("import", str(FIXTURES / "osu-7.4-gather.txt"), "--label", "g", "--np", "4").status == 0
    for fmt, (_, text) in reports(cli, tmp_path, "g").items():
        assert ("was measured: no headline is chosen from osu: every figure is in its step's table below."
                in " ".join(text.split())), fmt


@pytest.mark.timeout(120)
def test_an_imports_host_not_given_is_said_so_not_named_unknown(cli, tmp_path):
    """OSU prints no host: imported without --host, the reports named the machine "unknown" (title,
    systems table, the run's line, its test environment), as if a host were called so."""
    assert cli("import", str(FIXTURES / "osu-7.4-latency.txt"), "--label", "osu").status == 0
    assert cli("import", str(FIXTURES / "osu-7.4-bw.txt"), "--label", "named", "--host", "n01").status == 0
    for fmt, (page, text) in reports(cli, tmp_path, "osu", "named").items():
        systems = next(t for t in page.tables if t and t[0][:2] == ["run", "host"])
        assert [row[1] for row in systems[1:]] == ["a host not given (imported; use --host)", "n01"], (fmt, systems)
        assert "on a host not given (imported; use --host)" in text, fmt
        assert "Benchmark report: n01 and a host not given (osu, named)" in text, fmt
        assert not re.search(r"\bunknown\b", text.replace("its spread is unknown", "")), fmt


@pytest.mark.timeout(120)
def test_a_comparison_of_an_import_without_a_host_says_so_in_its_environment_table(cli, tmp_path):
    """The comparison's environment difference named the host "unknown" (compare's table, the
    report's "Environment: a vs b" heading and its host name row) where the rest of the report
    says where the host came from."""
    assert cli("import", str(FIXTURES / "osu-7.4-latency.txt"), "--label", "nohost").status == 0
    assert cli("import", str(FIXTURES / "osu-7.0-latency.txt"), "--label", "n01", "--host", "n01").status == 0
    shown = cli("compare", "nohost", "n01", "--format", "md")
    assert shown.status == 0, shown.stderr
    # and a key neither file stated is no difference: "imported from OSU 7.4 text: not recorded" against
    # "... OSU 7.0 text ..." made 34 differences of what differs in 4 (host, file, format, version)
    terminal = cli("compare", "nohost", "n01")
    assert "environment: nohost vs n01: 4 differences" in terminal.stdout, terminal.stdout
    assert "not recorded" not in terminal.stdout.split("comparison, baseline")[0], terminal.stdout
    for fmt, (_, text) in {"compare": (None, shown.stdout), **reports(cli, tmp_path, "nohost", "n01")}.items():
        assert "a host not given (imported; use --host)" in text, (fmt, text)
        assert not re.search(r"\bunknown\b", text.replace("its spread is unknown", "")), (fmt, text)
