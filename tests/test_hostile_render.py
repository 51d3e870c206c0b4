"""Hostile labels through every command and output format (#20 finding 6):
rendered as written, never as markup, escape codes, formulas, HTML or
mathtext (output/render_text.py is the one place that renders them)."""
from __future__ import annotations

import csv
import io
import json
import shutil
import subprocess

import pytest

from conftest import run_bounded
from markdown_it import MarkdownIt

from clusterbench.output import render_text

OSC_LINK = "\x1b]8;;http://198.18.0.1/\x07osc\x1b]8;;\x07"
LABELS = [
    # rich markup (an unmatched [/] made `list` fail), OSC 8 hyperlink, CSI colour, HTML,
    # a backtick in a code span, mathtext, a table pipe, a newline that would split a heading
    f"=1+2 [/] [bold red]red[/bold red] [link=http://198.18.0.1/]x[/link] {OSC_LINK} \x1b[31mESC <script>alert(1)</script>"
    " `t` $x^2$ | # _u_\nline2",
    "@SUM(A1) -2+3 \x9b31m C1 & &amp; \\ *s*",
]
VISIBLE = ["[/]", "[bold red]red[/bold red]", "[link=http://198.18.0.1/]x[/link]", "<script>alert(1)</script>",
           "$x^2$", "`t`"]


@pytest.fixture(scope="module")
def hostile_store(tmp_path_factory, cbk_bin):
    import os
    import sys

    d = tmp_path_factory.mktemp("hostile")
    url = f"sqlite:///{d / 'results.db'}"
    import machine_settings

    env = dict(os.environ, CLUSTERBENCH_CBK=cbk_bin, CLUSTERBENCH_DB=url, COLUMNS="2000")
    # the settings held: runs with one environment are what the "do not differ" test reads, and a second
    # copy of the suite may set vm.dirty_* or THP between two of them
    with machine_settings.held(exclusive=False):
        for i, label in enumerate(LABELS):
            r = run_bounded([sys.executable, "-m", "clusterbench", "run", "null", "--seconds=0.01", "--repeat", "3",
                             "--label", f"hostile{i}"], timeout=120, env=env)
            assert r.returncode == 0, r.stderr
    # `run` refuses a label holding a control character now; a store written before holds them, and a file's
    # text (an imported job or host name) still brings them
    import sqlalchemy as sa

    with sa.create_engine(url).begin() as c:
        for i, label in enumerate(LABELS):
            c.execute(sa.text("update runs set label = :label where label = :was"), {"label": label, "was": f"hostile{i}"})
    return d, env


def cli_in(store, *args):
    import sys

    d, env = store
    return run_bounded([sys.executable, "-m", "clusterbench", *args], timeout=120, env=env, cwd=d)


def assert_plain_terminal(text: str) -> None:
    assert "\x1b" not in text and "\x07" not in text and "\x9b" not in text, repr(text)


@pytest.mark.parametrize("args", [("list",), ("show", "1", "2"), ("compare", *LABELS), ("trend", "null:null")],
                         ids=["list", "show", "compare", "trend"])
def test_terminal_commands_print_labels_as_written(hostile_store, args):
    r = cli_in(hostile_store, *args)
    assert r.returncode == 0, r.stderr
    assert_plain_terminal(r.stdout + r.stderr)
    for text in VISIBLE:  # markup is shown, not interpreted (rich drops or styles it otherwise)
        assert text in r.stdout, (text, r.stdout)


def test_csv_cells_are_never_formulas(hostile_store):
    r = cli_in(hostile_store, "export", "--format", "csv", "1", "2")
    assert r.returncode == 0, r.stderr
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    stored = json.loads(cli_in(hostile_store, "export", "--format", "json", "1", "2").stdout)
    labels = {run["label"] for run in (stored["runs"] if isinstance(stored, dict) else stored)}
    # the label kept (on one line, without escape codes), guarded
    assert {row["label"] for row in rows} == {"'" + render_text.plain(label) for label in labels}
    assert_plain_terminal(r.stdout)
    for row in rows:
        for cell in row.values():
            assert not cell.startswith(("=", "+", "-", "@", "\t", "\r")), cell


def test_markdown_renders_labels_as_text(hostile_store):
    r = cli_in(hostile_store, "export", "--format", "md", "1", "2")
    assert r.returncode == 0, r.stderr
    tokens = MarkdownIt("commonmark").enable("table").parse(r.stdout)
    flat = [t for tok in tokens for t in [tok, *(tok.children or [])]]
    assert not [t for t in flat if t.type in ("html_inline", "html_block", "link_open")], "raw HTML or a link"
    headings = [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open" and t.tag == "h2"]
    # a newline (shown as \n) did not split a heading: one per run, after the systems', the summary's and the comparison's,
    # before the guide's and the notes' (the reasons the systems table's values were not available)
    assert len(headings) == 7 and headings[:2] == ["Systems compared", "Summary"], headings
    assert headings[2].startswith("Comparison, baseline run 1 (=1+2 ") and headings[2].endswith(r"\_u\_\\nline2)"), headings
    assert headings[-2:] == ["How to read the figures", "Notes"], headings
    html = MarkdownIt("commonmark").enable("table").render(r.stdout)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html and "<script" not in html
    assert "[/]" in html and "`t`" in html  # escaped, so no code span swallowed the rest


def test_markdown_of_labels_compared_renders_them_as_text(hostile_store):
    """Named by their labels, two runs with one environment are said to have
    no difference in a sentence that printed the labels as Markdown: the
    label's <script> was raw HTML there, its backtick opened a code span."""
    exported = json.loads(cli_in(hostile_store, "export", "--format", "json", "1", "2").stdout)
    labels = [run["label"] for run in exported["runs"]]
    for args in (("compare", "--format", "md", *labels), ("export", "--format", "md", *labels)):
        r = cli_in(hostile_store, *args)
        assert r.returncode == 0 and "do not differ in any key captured" in r.stdout, (args, r.stderr)
        tokens = MarkdownIt("commonmark").enable("table").parse(r.stdout)
        flat = [t for tok in tokens for t in [tok, *(tok.children or [])]]
        assert not [t for t in flat if t.type in ("html_inline", "html_block", "link_open")], args
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in MarkdownIt("commonmark").enable("table").render(r.stdout)


def test_html_report_shows_labels_as_text_in_a_browser(hostile_store, tmp_path):
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        pytest.skip("chromium is not installed (scripts/apt-packages.txt lists it)")
    out = tmp_path / "r.html"
    r = cli_in(hostile_store, "report", "-o", str(out), "1", "2")  # two runs: a comparison plot with "$"
    assert r.returncode == 0, r.stderr
    dom = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                          "--disable-background-networking", "--disable-component-update", "--disable-sync",
                          f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom", out.as_uri()],
                         capture_output=True, text=True, timeout=120)
    assert dom.returncode == 0, dom.stderr
    assert "<script" not in dom.stdout.lower()  # the label's script is no element
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in dom.stdout
    assert "$x^2$" in dom.stdout or "\\$x^2\\$" in dom.stdout


def test_warning_lines_of_show_and_compare_print_labels_and_paths_as_written(tmp_path, cbk_bin):
    """The lines under the tables (a warning, a compare note naming its configuration) went to the
    terminal as rich Text, which keeps ESC: a label or a --dir path in a warning coloured the terminal
    or opened an OSC 8 hyperlink there."""
    import os
    import sys

    from clusterbench.store import Store

    store = Store(f"sqlite:///{tmp_path / 'results.db'}")
    for label in (LABELS[0], "plain"):
        run = store.begin_run(label=label, command="test", suite=None)
        step = store.begin_step(run, position=0, name="seqio", kernel="seqio", params={}, launcher="local",
                                ranks=1, ranks_per_node=None)
        for i in range(5):
            store.add_sample(step, {"repetition": i, "phase": "read", "mode": "warm", "rate": 100.0 + i,
                                    "rate_unit": "MiB/s"}, [f"warm read of {OSC_LINK} \x1b[31m/scratch [/]"])
        store.finish_step(step, "ok")
        store.finish_run(run, "ok")
    env = dict(os.environ, CLUSTERBENCH_CBK=cbk_bin, CLUSTERBENCH_DB=f"sqlite:///{tmp_path / 'results.db'}",
               COLUMNS="2000")
    for args in (("show", "1"), ("compare", LABELS[0], "plain")):
        r = run_bounded([sys.executable, "-m", "clusterbench", *args], timeout=120, env=env)
        assert r.returncode == 0, r.stderr
        assert_plain_terminal(r.stdout)
        assert "warning: " in r.stdout and "/scratch [/]" in r.stdout, r.stdout


def test_cluster_views_print_hosts_labels_and_messages_without_escape_codes():
    """The cluster views escaped rich markup only: a label, a host name, a figure name, an
    environment value or a step's message with ESC reached the terminal as a control sequence."""
    import io

    from rich.console import Console

    from clusterbench.report.cluster_compare_terminal import print_cluster_comparison
    from clusterbench.report.cluster_terminal import print_cluster
    from clusterbench.results.sample import Sample

    hosts = ["h01[/]\x1b[2J", "h02", "h03", "h04"]

    def step(host: str, mib_s: float) -> dict:
        record = {"phase": "copy\x1b]0;title\x07", "mode": "n/a", "rate": mib_s, "rate_unit": "MiB/s",
                  "sweep_key": None, "qualifiers": []}
        return {"name": "stream", "host": host, "kernel": "stream", "status": "ok", "message": None,
                "params": {}, "build": {}, "samples": [Sample.from_record(dict(record)) for _ in range(3)]}

    def run(run_id: int, slow: str) -> dict:
        steps = [step(h, 40.0 if h == slow else 100.0) for h in hosts]
        steps[1].update(status="failed", message=f"broke {OSC_LINK}")
        envs = {h: {"host.name": h, "kernel.release": "6.2\x1b[31m" if h == "h02" else "6.1"} for h in hosts}
        return {"id": run_id, "label": LABELS[0], "suite": "cluster", "kind": "cluster", "command": "c",
                "status": "ok", "steps": steps, "environments": envs}

    buf = io.StringIO()
    console = Console(file=buf, width=400)
    print_cluster(console, run(1, "h03"))
    print_cluster_comparison(console, run(1, "h03"), run(2, hosts[0]))
    assert_plain_terminal(buf.getvalue())
    assert "h01[/]" in buf.getvalue() and "[bold red]red[/bold red]" in buf.getvalue()


def test_render_text_per_format():
    assert render_text.terminal("[/]\x1b[2J\x1b]0;title\x07ok\n") == "\\[/]\\x1b[2J\\x1b]0;title\\x07ok\\n"
    assert render_text.csv_cell("-1") == "'-1" and render_text.csv_cell("1-") == "1-"
    assert render_text.markdown("a|b`c<d>") == "a\\|b\\`c\\<d>"
    assert render_text.markdown_code("a ``b`` c") == "```a ``b`` c```"
    assert render_text.html("<a href='x'>") == "&lt;a href=&#x27;x&#x27;&gt;"
    assert render_text.mathtext("$5 _x") == "\\$5 _x" and render_text.mathtext("_hidden").startswith("\u200b")
    assert render_text.plain("caf\udce9") == "caf\ufffd"
    # bidirectional overrides and isolates reorder a line (CVE-2021-42574); right-to-left text is kept
    assert render_text.plain("run \u202eevil\u202c 1\u2067x\u2069") == "run \\u202eevil\\u202c 1\\u2067x\\u2069"
    assert render_text.csv_cell("\u202e=1+1") == "\\u202e=1+1"
    assert render_text.html("\u05e9\u05dc\u05d5\u05dd") == "\u05e9\u05dc\u05d5\u05dd"


def test_control_characters_show_as_escapes_in_every_format_none_dropped():
    """A tab, an escape sequence, a C1 control and a line break were dropped
    from what was shown ("a\\tb" showed as "ab", "\\x1b[31mred" as "red"):
    two labels that differ only there looked the same, silently."""
    text = "a\tb \x1b[31mred\x1b[0m \x9b1m \x07 \x7f x\r\ny \x00"
    shown = "a\\tb \\x1b[31mred\\x1b[0m \\x9b1m \\x07 \\x7f x\\r\\ny \\x00"
    assert render_text.plain(text) == shown
    assert render_text.terminal(text) == shown and render_text.html(text) == shown
    assert render_text.csv_cell(text) == shown
    assert MarkdownIt("commonmark").renderInline(render_text.markdown(text)) == shown
    for out in (render_text.plain(text), render_text.markdown(text), render_text.mathtext(text)):
        assert not any(ord(c) < 0x20 or 0x7f <= ord(c) <= 0x9f for c in out), repr(out)


def test_a_label_with_a_character_the_plot_font_lacks_is_in_the_plot_without_a_python_warning(cli, tmp_path):
    """The plots keep real text in their SVG, drawn by the browser with its
    own fonts; matplotlib still measured each label with DejaVu Sans, which
    has no emoji, and printed "UserWarning: Glyph 128640 (\\N{ROCKET})
    missing from font(s) DejaVu Sans." and a line of our source under
    every report of such a label or step name."""
    for label in ("launch🚀", "plain"):
        r = cli("run", "null", "--seconds=0.001", "--repeat", "3", "--label", label, "--quiet",
                "--report-dir", str(tmp_path))
        assert r.status == 0, r.stderr
        assert "Warning" not in r.stderr, r.stderr
    out = tmp_path / "r.html"
    r = cli("report", "launch🚀", "plain", "-o", str(out))
    assert r.status == 0, r.stderr
    assert (r.stdout + r.stderr).strip() == f"wrote {out}", r.stdout + r.stderr
    plots = [svg for svg in out.read_text().split("<svg")[1:] if "launch🚀" in svg.split("</svg>")[0]]
    assert plots, "no plot names the label"
