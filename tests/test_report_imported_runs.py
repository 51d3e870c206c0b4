"""What a report says of an imported run, read back from the rendered Markdown and HTML: the
cache state of an IOR read, and what is said where the file names no host."""
from __future__ import annotations

import re
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
    out["html"] = (Tables(html), re.sub(r"<[^>]+>", "", html))
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
