"""E6 as people read it: a --role=pairs step keeps each pair's rate (the
tcp_pairs records) with the step, and show and the HTML report print each
pair beside its link under the aggregate."""
from __future__ import annotations

import re

import pytest


@pytest.mark.timeout(180)
def test_each_pair_is_stored_and_shown_under_the_aggregate(cli, store_url, tmp_path):
    from clusterbench.results.records import pair_rates
    from clusterbench.store import Store

    # --port=0: each pair's server takes a free port (the default 5301 may be another suite's, side by side)
    r = cli("run", "tcp", "--np", "4", "--role=pairs", "--port=0", "--duration=0.2", "--repeat", "2", "--label", "e6",
            "--quiet")
    assert r.status == 0, r.stderr
    store = Store(store_url)
    (step,) = store.steps_of(store.resolve("e6")[0])
    pairs = pair_rates(step.build)
    assert [(p.phase, p.pair) for p in pairs] == [("send", 0), ("send", 1)]
    assert all(len(p.gbit_per_s) == 2 and min(p.gbit_per_s) > 0 for p in pairs)  # one rate per repetition
    show = cli("show", "e6", "--width", "200")
    assert show.status == 0, show.stderr
    assert "each pair (the row above is their aggregate)" in show.stdout
    assert len(re.findall(r"│ send\s+│ [01]\s+│ \S+ -> \S+", show.stdout)) == 2
    html = tmp_path / "r.html"
    assert cli("report", "e6", "-o", str(html)).status == 0
    assert html.read_text().count("&rarr;") >= 3  # header and both pairs


def md_table(md: str, first_heading: str) -> list[list[str]]:
    """The rows of the Markdown table whose first heading is first_heading (its heading row first)."""
    lines = md.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"| {first_heading} |"))
    rows = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        if not set(line) <= set("|-: "):
            rows.append([c.strip() for c in line.strip("|").split("|")])
    return rows


@pytest.mark.timeout(180)
def test_markdown_prints_under_a_step_what_show_prints_and_names_its_mode_column_as_show(cli, tmp_path):
    """`report e6 -o r.md` (and `export --format md`): each TCP pair and the
    latency percentiles were in show and the HTML report but not in the
    Markdown, the wiki page people paste; and its mode column read "mode"
    where show reads "rate basis" (cache, algorithm, busy cpus)."""
    r = cli("run", "tcp", "--np", "4", "--role=pairs", "--port=0", "--duration=0.2", "--repeat", "2", "--label", "e6",
            "--quiet")
    assert r.status == 0, r.stderr
    r = cli("run", "tcp", "--role=loopback", "--port=0", "--test=rr", "--duration=0.2", "--repeat", "2", "--label", "rr",
            "--quiet")
    assert r.status == 0, r.stderr
    out = tmp_path / "r.md"
    assert cli("report", "e6", "rr", "-o", str(out)).status == 0
    md = out.read_text()
    assert cli("export", "e6", "rr", "--format", "md").stdout == md   # one Markdown, whichever command wrote it

    step = md_table(md, "phase")
    show = cli("show", "e6", "--width", "200").stdout
    column = re.search(r"┃ phase ┃ (.+?) +┃ n ┃", show).group(1)
    assert step[0][:3] == ["phase", column, "n"] and column != "mode", (step[0], column)

    pairs = md_table(md, "phase | pair")
    assert pairs[0] == ["phase", "pair", "server -> client", "Gbit/s (median)", "link", "of link"]
    assert [row[:2] for row in pairs[1:]] == [["send", "0"], ["send", "1"]]
    assert all(re.fullmatch(r"\S+ -> \S+", row[2]) and float(row[3].replace(",", "")) > 0 for row in pairs[1:])
    assert "Each pair (the row above is their aggregate):" in md

    latency = md_table(md, "latency (µs), median over repetitions")
    assert latency[0][1:4] == ["p50", "p90", "p99"], latency
    (row,) = latency[1:]
    assert row[0] == "request/response round-trip" and all(float(v.replace(",", "")) > 0 for v in row[1:4]), row
    # a figure with thousands separators, not the comma after it ("p50 48, p90 ..." read "48,")
    shown = re.search(r"latency request/response round-trip: p50 (\d{1,3}(?:,\d{3})*(?:\.\d+)?)",
                      cli("show", "rr").stdout).group(1)
    assert row[1] == shown   # the same figure as show's line
