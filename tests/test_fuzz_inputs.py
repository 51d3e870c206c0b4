"""Seeded fuzz over labels, suite files and --dir values (#20): never a
traceback, never a file left, never a store changed by a refused command.
Mostly in this process (click's runner) so that well over 1,000 cases take
seconds; the seed is fixed, so a failure is reproducible (and printed)."""
from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import random

from click.testing import CliRunner
from markdown_it import MarkdownIt
from rich.text import Text

from clusterbench import render_text, suites
from clusterbench.cli import cli
from clusterbench.errors import BadInput

SEED = 20_2026
ALPHABET = (["[", "]", "/", "=", "+", "-", "@", "$", "`", "|", "#", "<", ">", "&", "\\", "*", "_", "\n", "\r", "\t",
             "\x00", "\x07", "\x1b", "\x1b[31m", "\x1b]8;;http://198.18.0.1/\x07", "\x9b", "\x7f", "é", "文", "🚀",
             "\udce9", "\udcff", " ", "a", "Z", "0", "'", '"', ";", "$(touch x)", "{dir}", "%s", ".."]
             + [chr(c) for c in range(0x20, 0x7f)])


def fuzz_text(rng: random.Random, max_len: int = 40) -> str:
    return "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, max_len)))


def invoke(*args: str, env: dict, cwd=None):
    r = CliRunner().invoke(cli, list(args), env=env, catch_exceptions=True)
    if r.exception is not None and not isinstance(r.exception, SystemExit):
        raise AssertionError(f"traceback for {args!r}: {r.exception!r}") from r.exception
    return r


def store_content(db) -> str:
    """The store's rows (a WAL checkpoint may rewrite the file's bytes when
    an earlier in-process command's connection is collected; rows do not)."""
    import sqlite3

    c = sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True)
    try:
        return hashlib.sha256("\n".join(c.iterdump()).encode()).hexdigest()
    finally:
        c.close()


def tree(root) -> dict[str, str]:
    out = {}
    for dirpath, dirs, files in os.walk(root):
        for name in dirs + files:
            path = os.path.join(dirpath, name)
            out[path] = "dir" if os.path.isdir(path) else hashlib.sha256(open(path, "rb").read()).hexdigest()
    return out


def test_fuzz_labels_render_safely_in_every_format():
    rng = random.Random(SEED)
    md = MarkdownIt("commonmark")
    for _ in range(1500):
        label = fuzz_text(rng, 60)
        term = render_text.terminal(label)
        assert not any(c in term for c in "\x1b\x07\x9b\n\r\x00"), repr(label)
        Text.from_markup(term)  # never a MarkupError, whatever the label
        cell = render_text.csv_cell(label)
        assert not cell.startswith(("=", "+", "-", "@", "\t", "\r"))
        assert next(csv.reader(io.StringIO(_csv_line(cell)))) == [cell]
        html = md.render("# " + render_text.markdown(label) + "\n\n" + render_text.markdown_code(label) + "\n")
        assert "<script" not in html and html.count("<h1>") == 1 and "<a " not in html, repr(label)
        assert "<" not in render_text.html(label)
        assert render_text.mathtext(label).count("$") == render_text.mathtext(label).count("\\$")
        stored = render_text.stored(label)
        stored.encode("utf-8")  # storable anywhere


def _csv_line(cell: str) -> str:
    buf = io.StringIO()
    csv.writer(buf).writerow([cell])
    return buf.getvalue()


def test_fuzz_labels_through_list_show_and_exports(tmp_path, cbk_bin):
    """200 hostile labels in one store, through every command and format."""
    from clusterbench.store import Store

    url = f"sqlite:///{tmp_path / 'fuzz.db'}"
    store = Store(url)
    rng = random.Random(SEED + 1)
    labels = [render_text.stored(fuzz_text(rng, 50)) or "x" for _ in range(200)]
    for label in labels:
        run_id = store.begin_run(label=label, command=f"clusterbench run null --label {label}", suite=None)
        store.finish_run(run_id, "ok")
    env = {"CLUSTERBENCH_CBK": cbk_bin, "CLUSTERBENCH_DB": url, "COLUMNS": "400"}
    ids = [str(i) for i in range(1, len(labels) + 1)]
    r = invoke("list", "--limit", "1000", env=env)
    assert r.exit_code == 0 and "\x1b" not in r.output
    r = invoke("show", *ids[:50], env=env)
    assert r.exit_code == 0 and "\x1b" not in r.output
    r = invoke("export", "--format", "csv", *ids, env=env)
    assert r.exit_code == 0
    rows = list(csv.DictReader(io.StringIO(r.output)))
    assert all(not row["label"].startswith(("=", "+", "-", "@")) for row in rows)
    r = invoke("export", "--format", "json", *ids, env=env)
    assert r.exit_code == 0 and json.loads(r.output)
    r = invoke("export", "--format", "md", *ids, env=env)
    tokens = MarkdownIt("commonmark").parse(r.output)
    assert sum(t.type == "heading_open" and t.tag == "h2" for t in tokens) == len(labels)
    assert not [t for t in tokens for t in [t, *(t.children or [])] if t.type in ("html_inline", "html_block")]
    for run_id in ids[:10]:
        r = invoke("report", "-o", str(tmp_path / "r.html"), run_id, env=env)
        assert r.exit_code == 0 and "<script" not in (tmp_path / "r.html").read_text(), r.output


def fuzz_suite(rng: random.Random) -> str:
    """A suite file: mostly near-valid TOML with one or two wrong values."""
    good = {"kernel": '"null"', "repeat": "2", "np": "1", "name": '"s"', "params": '{ seconds = "0.01" }'}
    bad = {
        "kernel": ['3', '"NULL;rm"', '""', '["null"]', '"no-such-kernel"'],
        "repeat": ["2.7", "0", "-1", '"5"', "true", "1e9", "100001"],
        "np": ['"x"', "0", "[]", "[1, 0]", "2.5", "[1, 2, 3]"],
        "ppn": ['"x"', "0", "[]", "-1"],
        "requires": ['"mpi"', "[3]", '["m p i"]', "{}"],
        "name": ['"a\\u0000b"', '""', '"' + "n" * 300 + '"', "1"],
        "params": ['{ seconds = { a = 1 } }', '{ seconds = [] }', '{ "Bad Key" = 1 }',
                   '{ seconds = [' + ", ".join(str(i) for i in range(200)) + '], x = ['
                   + ", ".join(str(i) for i in range(200)) + '] }', '"text"'],
        "env": ['{ X = [1] }', '{ "1BAD" = "v" }', '"env"'],
        "unknown-key": ["1"],
        "gpus-per-rank": ["0", '"1"', "1.5"],
    }
    step = dict(good)
    for key in rng.sample(sorted(bad), rng.randint(0, 2)):
        step[key] = rng.choice(bad[key])
    lines = ["[[steps]]", *(f"{k} = {v}" for k, v in step.items())]
    if rng.random() < 0.1:
        lines.insert(rng.randrange(len(lines) + 1), rng.choice(["[[steps", "= 1", "x = ", '"', "[steps]", "steps = 3"]))
    return "\n".join(lines) + "\n"


def _listing(d) -> list[str]:
    """The directory's files, without SQLite's -wal/-shm side files: they come
    and go with connections of this process (a checkpoint when an engine is
    collected); the store's content is compared on its own."""
    return sorted(f for f in os.listdir(d) if not f.endswith(("-wal", "-shm")))


def test_fuzz_suite_files_are_refused_or_sound(tmp_path, cbk_bin):
    rng = random.Random(SEED + 2)
    db = tmp_path / "store.db"
    env = {"CLUSTERBENCH_CBK": cbk_bin, "CLUSTERBENCH_DB": f"sqlite:///{db}", "COLUMNS": "200"}
    # an existing store, which a refused run must leave byte for byte
    assert invoke("run", "null", "--seconds=0.01", "--repeat", "1", "--quiet", env=env).exit_code == 0
    before_store = store_content(db)
    refused = accepted = 0
    cli_checked = 0
    for i in range(500):
        text = fuzz_suite(rng)
        path = tmp_path / f"s{i}.toml"
        path.write_text(text, encoding="utf-8")
        try:
            suite = suites.load(str(path), {})
        except BadInput as e:
            refused += 1
            assert "\n" not in e.message and len(e.message) < 400, (text, e.message)
            if cli_checked < 40:  # the CLI too: exit 2, one line, nothing created, the store unchanged
                cli_checked += 1
                files = _listing(tmp_path)
                r = invoke("run", str(path), env=env)
                assert r.exit_code == 2, (text, r.output)
                assert _listing(tmp_path) == files
                assert store_content(db) == before_store
            continue
        accepted += 1
        assert len(suite.steps) <= suites.MAX_STEPS
        for st in suite.steps:
            assert isinstance(st.repeat, int) and st.repeat >= 1 and st.ranks >= 1, text
            assert st.ranks_per_node is None or st.ranks_per_node >= 1
            assert all(isinstance(r, str) and r.isidentifier() for r in st.requires), text
    assert refused > 100 and accepted > 50, (refused, accepted)  # both sides were exercised


def test_fuzz_dir_values_never_traceback_or_leave_files(tmp_path, cbk_bin):
    rng = random.Random(SEED + 3)
    work = tmp_path / "work"
    work.mkdir()
    (work / "a-file").write_text("user's\n")
    os.symlink(work / "a-file", work / "link-to-file")
    db = tmp_path / "store.db"
    env = {"CLUSTERBENCH_CBK": cbk_bin, "CLUSTERBENCH_DB": f"sqlite:///{db}", "COLUMNS": "200"}
    assert invoke("run", "null", "--seconds=0.01", "--repeat", "1", "--quiet", env=env).exit_code == 0
    before_store = store_content(db)
    before = tree(work)
    cwd = os.getcwd()
    os.chdir(work)  # relative values land here
    try:
        for i in range(150):
            value = rng.choice([
                fuzz_text(rng, 30), "a-file", "link-to-file", "a-file/sub", "/nonexistent/" + fuzz_text(rng, 10),
                "x" * rng.choice([255, 256, 4095, 5000]), "\udce9" * rng.randint(1, 300), "", "-", "--dir",
            ])
            if os.path.isdir(value or "."):
                value = "missing-" + str(i)  # an existing directory would run: other tests measure that
            r = invoke("run", "seqio", f"--dir={value}", "--file-size=64k", "--block-size=4k", env=env)
            assert r.exit_code == 2, (value, r.output)
            assert len(r.output.strip().splitlines()) == 1, (value, r.output)
            assert tree(work) == before, value
            assert store_content(db) == before_store, value
    finally:
        os.chdir(cwd)
