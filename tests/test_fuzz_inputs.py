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

import pytest
from click.testing import CliRunner
from markdown_it import MarkdownIt
from rich.text import Text

from clusterbench.output import render_text
from clusterbench import suites
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
    h2 = [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open" and t.tag == "h2"]
    # the systems measured, the report's summary, its comparison, a run each, then how to read the figures
    assert len(h2) == len(labels) + 4 and h2[:2] == ["System measured", "Summary"], h2[:3]
    assert h2[2].startswith(("Comparison", "No comparison")), h2[:3]
    assert h2[-1] == "How to read the figures", h2[-2:]
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


# -- every command that takes a path, a store URL, a suite or a file to import (#36 item 8) --------------

def identity(root) -> dict[str, tuple]:
    """Every entry under root as it is: its kind, inode and device numbers,
    a symlink's target and a regular file's checksum (never following a
    link, never opening a FIFO, socket or device)."""
    import stat

    out = {}
    for dirpath, dirs, files in os.walk(root):
        for name in dirs + files:
            path = os.path.join(dirpath, name)
            st = os.lstat(path)
            kind = stat.S_IFMT(st.st_mode)
            if stat.S_ISREG(st.st_mode):
                detail = hashlib.sha256(open(path, "rb").read()).hexdigest()
            elif stat.S_ISLNK(st.st_mode):
                detail = os.readlink(path)
            else:
                detail = st.st_rdev
            out[os.path.relpath(path, root)] = (kind, st.st_ino, detail)
    return out


class FifoDrain:
    """A FIFO's reader for the whole test (held read-write, so a writer
    never waits and never meets a closed pipe)."""

    def __init__(self, path):
        import threading

        self.fd, self.stop = os.open(path, os.O_RDWR | os.O_NONBLOCK), False
        self.thread = threading.Thread(target=self._drain, daemon=True)
        self.thread.start()

    def _drain(self):
        import select

        while not self.stop:
            if select.select([self.fd], [], [], 0.05)[0]:
                try:
                    os.read(self.fd, 1 << 16)
                except BlockingIOError:
                    pass

    def close(self):
        self.stop = True
        self.thread.join(5)
        os.close(self.fd)


def plant_hostile(root) -> dict[str, str]:
    """The things a careful user tries as a path, each under root: name -> path."""
    import socket
    import stat

    root.mkdir()
    p = {}

    def at(name):
        p[name] = str(root / name)
        return root / name

    at("a-dir").mkdir()
    (root / "a-dir" / "kept").write_text("mine\n")
    os.mkfifo(at("a-fifo"))
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(at("a-socket")))
    p["_socket"] = sock   # kept open (and bound) for the test
    at("a-file").write_text("the user's notes\n")
    at("binary").write_bytes(bytes(range(256)) * 8)
    at("empty").write_bytes(b"")
    at("nonutf8-content").write_bytes(b"[[steps]]\nname = \"\xff\xfe\"\nkernel = \"null\"\n")
    os.symlink("nowhere", at("dangling"))
    os.symlink("a-file", at("link-to-file"))
    os.symlink("a-dir", at("link-to-dir"))
    at("deep.toml").write_text("x = " + "[" * 5000 + "]" * 5000 + "\n")
    at("binary.toml").write_bytes(bytes(range(256)))
    if os.geteuid() == 0:
        os.mknod(at("a-char-device"), 0o666 | stat.S_IFCHR, os.makedev(1, 3))   # /dev/null's numbers
        os.mknod(at("a-block-device"), 0o600 | stat.S_IFBLK, os.makedev(7, 222))
    p["missing-dir"] = str(root / "no-such-dir" / "out.html")
    p["nonutf8-name"] = os.fsdecode(os.fsencode(str(root)) + b"/caf\xe9-\xff.html")
    p["long-name"] = str(root / ("x" * 300))
    p["control-chars"] = str(root / "a\nb\x1b[31m[bold]c")
    p["under-a-file"] = str(root / "a-file" / "sub.html")
    p["nul-byte"] = str(root / "a\x00b")
    p["empty-name"] = ""
    p["dev-full"] = "/dev/full"
    p["proc-file"] = "/proc/self/status"
    return p


def store_urls(tmp_path) -> list[str]:
    hostile = tmp_path / "hostile"
    return [
        "postgresql+psycopg://u@127.0.0.1:notaport/db", "postgresql+psycopg://u:p@ss@127.0.0.1:1/db",
        "postgresql+psycopg://u@127.0.0.1:1/db?password=pw1Secret&sslpassword=pw2Secret&passfile=/x/pw3Secret",
        "postgresql+psycopg://u@127.0.0.1:99999/db", "postgresql+psycopg://u@[::1/db", "nosuchdriver://x/y",
        "mysql://u@127.0.0.1:1/db", "sqlite:///", f"sqlite:///{hostile}/a-dir", f"sqlite:///{hostile}/a-fifo",
        f"sqlite:///{hostile}/binary", f"sqlite:///{hostile}/no-such-dir/x.db", "sqlite:///?mode=ro",
        f"sqlite:///{hostile}/a-file?mode=rw&uri=true", f"{hostile}/a-socket", f"{hostile}/empty",
        f"{hostile}/dangling", f"{hostile}/a-dir", "/dev/full", "\x1b[31m[bold]://x", "://", "sqlite:///\x00",
        # the real store with what SQLAlchemy would ignore (warning), or SQLite take as another file's name
        f"sqlite:///{tmp_path / 'store.db'}?mode=ro", f"sqlite:///{tmp_path / 'store.db'}?mode=ro&uri=true",
    ]


SECRETS_IN_URLS = ("pw1Secret", "pw2Secret", "pw3Secret", "ss@127")


@pytest.mark.timeout(400)
def test_fuzz_every_path_url_suite_and_import_argument(tmp_path, cbk_bin):
    """Each command that takes a path (-o, --report, --report-dir, --hostfile,
    clean DIR, env --target), a store URL (--db), a suite file or a file to
    import, given what a careful user tries to break it with: never a
    traceback nor a Python warning, exit 0, 1 or 2, a refusal (2) in one line, and a refusal leaves
    the store's rows and everything planted exactly as they were (a FIFO a
    FIFO, a device a device, a directory's files kept)."""
    import time
    import warnings

    rng = random.Random(SEED + 4)
    db = tmp_path / "store.db"
    env = {"CLUSTERBENCH_CBK": cbk_bin, "CLUSTERBENCH_DB": f"sqlite:///{db}", "COLUMNS": "200"}
    assert invoke("run", "null", "--seconds=0.01", "--repeat", "1", "--quiet", env=env).exit_code == 0
    hostile = tmp_path / "hostile"
    paths = plant_hostile(hostile)
    drain = FifoDrain(paths["a-fifo"])
    names = [n for n in paths if not n.startswith("_")]
    planted = identity(hostile)
    # what a success may replace: a regular file, or a symlink's own name (never what it points at)
    replaceable = {"a-file", "link-to-file", "dangling", "link-to-dir", "binary", "empty", "nonutf8-content",
                   "deep.toml", "binary.toml"}
    started, checked, outcomes = time.monotonic(), 0, {0: 0, 1: 0, 2: 0}

    def check(*args: str, may_change: str | None = None):
        """may_change: a planted name a success may replace (a regular file or a symlink's own name)."""
        nonlocal checked
        before_store, before = store_content(db), identity(hostile)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            r = invoke(*args, env=env)
        checked += 1
        # what Python would print to a user (its default filters hide these four kinds): never shown
        hidden = (DeprecationWarning, PendingDeprecationWarning, ImportWarning, ResourceWarning)
        shown = [f"{w.category.__name__}: {w.message}" for w in caught if not issubclass(w.category, hidden)]
        assert shown == [], (args, shown)
        assert r.exit_code in (0, 1, 2), (args, r.exit_code, r.output)
        outcomes[r.exit_code] += 1
        assert not any(s in r.output for s in SECRETS_IN_URLS), (args, r.output)
        if r.exit_code == 1:   # a failed measurement (a host file naming no host): stored as such, said last
            assert r.output.splitlines()[-1].startswith("Error: "), (args, r.output)
        elif r.exit_code == 2:
            lines = [ln for ln in r.output.splitlines() if ln.strip()]
            assert len(lines) == 1, (args, r.output)
            assert store_content(db) == before_store, args
            assert identity(hostile) == before, args
        else:
            after = identity(hostile)
            changed = {k for k in set(before) | set(after) if before.get(k) != after.get(k)}
            ours = {k for k in changed if k not in planted}   # written by this test's own successes
            allowed = {os.path.relpath(may_change, hostile)} if may_change and may_change.startswith(str(hostile)) \
                else set()
            assert changed - ours <= allowed, (args, changed)

    try:
        for name in names:
            target = paths[name]
            may = target if name in replaceable else None
            for args in (["export", "1", "-o", target], ["report", "1", "--format", "md", "-o", target],
                         ["history", "-o", target]):
                check(*args, may_change=may)
            check("run", target, "--repeat", "1")                    # as a suite file
            check("clean", target)
            check("env", "--target", target)
            check("run", "null", "--seconds=0.01", "--hostfile", target, "--np", "2")
            check("import", target, "--dry-run")   # a FIFO or a device too: only a regular file is read
            check("list", "--db", target)
        for name in rng.sample(names, 6):   # a run is slower: a sample of the targets
            check("run", "null", "--seconds=0.01", "--repeat", "1", "--quiet", "--report", paths[name],
                  may_change=paths[name] if name in replaceable else None)
            check("run", "quick", "--repeat", "1", "--report-dir", paths[name])
        for url in store_urls(tmp_path) + [fuzz_text(rng, 30) + "://" + fuzz_text(rng, 20) for _ in range(10)]:
            for args in (["list"], ["show", "1"], ["export", "1"], ["compare", "1", "1"], ["trend", "null"],
                         ["prune", "--before", "2000-01-01", "--dry-run"], ["history", "-o", str(tmp_path / "h.html")],
                         ["run", "null", "--seconds=0.01", "--repeat", "1", "--quiet"]):
                check(*args, "--db", url)
    finally:
        drain.close()
        paths["_socket"].close()
    assert outcomes[2] > 100 and outcomes[0] > 10, outcomes   # both refusals and successes were exercised
    assert time.monotonic() - started < 240, f"{checked} commands took {time.monotonic() - started:.0f} s"
