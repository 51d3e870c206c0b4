"""A report is handed to a customer who has no clusterbench checkout: the rendered Markdown and HTML
(the PDF is printed from the HTML) explain in words or name the project, and never cite a path of the
repository ("see docs/statistics.md")."""
from __future__ import annotations

import re
from html import unescape

import pytest

from test_golden_reports import fill_store

# a repository path: docs/..., or a page of it by name (statistics.md); the report's own -o name is r.md
REPOSITORY_PATH = re.compile(r"docs/|\b(?!r\.md\b)[\w-]+\.md\b")


def texts(cli, tmp_path, *targets: str) -> dict[str, str]:
    out = {}
    for name in ("r.md", "r.html"):
        r = cli("report", *targets, "-o", str(tmp_path / name))
        assert r.status == 0, r.stderr
        text = (tmp_path / name).read_text()
        out[name] = unescape(re.sub(r"<[^>]+>", " ", text)) if name.endswith("html") else text
    return out


@pytest.mark.timeout(180)
def test_no_report_cites_a_file_of_the_repository(cli, store_url, tmp_path):
    fill_store(store_url)
    outlier_excluded = ("base", "tuned", "--exclude-outliers")
    for targets in (("2",), ("base", "tuned"), outlier_excluded):
        for name, text in texts(cli, tmp_path, *targets).items():
            assert not REPOSITORY_PATH.search(text), (targets, name, REPOSITORY_PATH.search(text).group(0),
                                                      text[max(0, REPOSITORY_PATH.search(text).start() - 200):][:300])
            # the experiments are said in the report itself, not left to a page the reader lacks
            if "E1 .. E11" in text:
                assert "E1 a local disk against the page cache" in " ".join(text.split()), (targets, name)


def test_the_outlier_rule_over_many_sizes_says_its_bound_in_words():
    from clusterbench.analysis import stats

    rule = stats.outlier_rules(range(3, 12))
    assert not REPOSITORY_PATH.search(rule) and "pure noise pass in 1 % of steps" in rule, rule
