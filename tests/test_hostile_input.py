"""Hostile input and planted files (issue #20): output files are never
written through a name someone else planted."""
from __future__ import annotations

import hashlib
import json
import os
import stat
import subprocess
import sys

import pytest

from clusterbench.files.safe_write import write_atomically

# runs clusterbench in a process that first plants a symlink at the name the
# old report code wrote through (.NAME.tmpPID, PID being this very process)
PLANT_THEN_RUN = """
import os, runpy, sys
out, victim = sys.argv[1], sys.argv[2]
d, name = os.path.split(out)
os.symlink(victim, os.path.join(d, f".{name}.tmp{os.getpid()}"))
sys.argv = ["clusterbench", *sys.argv[3:]]
runpy.run_module("clusterbench", run_name="__main__")
"""


def digest(path) -> str:
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


@pytest.fixture
def victim(tmp_path):
    """A file the user owns, which a planted symlink points at."""
    path = tmp_path / "mine" / "thesis.tex"
    path.parent.mkdir()
    path.write_text("\\chapter{years of work}\n")
    return path


@pytest.mark.parametrize("fmt", ["html", "md"])
def test_report_never_writes_through_a_planted_temporary_name(cli, cbk_bin, store_url, tmp_path, victim, fmt):
    assert cli("run", "null", "--seconds=0.01", "--repeat", "1", "--quiet").status == 0
    out = tmp_path / "shared" / f"report.{fmt}"
    out.parent.mkdir()
    before = digest(victim)
    env = dict(os.environ, CLUSTERBENCH_CBK=cbk_bin, CLUSTERBENCH_DB=store_url)
    r = subprocess.run([sys.executable, "-c", PLANT_THEN_RUN, str(out), str(victim), "report", "1", "--format", fmt,
                        "-o", str(out)], capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0, r.stderr
    assert digest(victim) == before
    assert out.is_file() and not out.is_symlink() and out.stat().st_size > 0
    # the planted link is the only other name there: no temporary file left
    assert sorted(p.name for p in out.parent.iterdir()) == sorted([out.name, next(
        p.name for p in out.parent.iterdir() if p.is_symlink())])


def test_export_replaces_a_planted_symlink_at_the_output_name(cli, tmp_path, victim):
    assert cli("run", "null", "--seconds=0.01", "--repeat", "1", "--quiet").status == 0
    out = tmp_path / "export.json"
    out.symlink_to(victim)
    before = digest(victim)
    r = cli("export", "1", "--format", "json", "-o", str(out))
    assert r.status == 0, r.stderr
    assert digest(victim) == before
    assert not out.is_symlink() and json.loads(out.read_text())


def test_safe_write_keeps_permissions_and_leaves_nothing_on_failure(tmp_path, monkeypatch):
    target = tmp_path / "summary.txt"
    target.write_text("old")
    target.chmod(0o640)
    write_atomically(target, "new")
    assert target.read_text() == "new" and stat.S_IMODE(target.stat().st_mode) == 0o640

    def full_disk(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full_disk)
    with pytest.raises(OSError, match="No space"):
        write_atomically(target, "newer")
    monkeypatch.undo()
    assert [p.name for p in tmp_path.iterdir()] == ["summary.txt"] and target.read_text() == "new"
    # a directory the user cannot write to: the error surfaces, nothing is made
    ro = tmp_path / "ro"
    ro.mkdir(mode=0o500)
    if os.geteuid() != 0:
        with pytest.raises(PermissionError):
            write_atomically(ro / "x", "y")
        assert list(ro.iterdir()) == []


SECRET = "s3cr3tPW"
PG_URL = f"postgresql+psycopg://bench:{SECRET}@127.0.0.1:1/results"   # port 1: nothing listens, it fails


def test_a_store_password_is_never_printed_when_the_connection_fails(cli):
    r = cli("list", "--db", PG_URL)
    assert r.status == 2 and r.stderr.count("\n") == 1, r.stderr
    assert SECRET not in r.stdout + r.stderr
    assert "bench:***@127.0.0.1:1" in r.stderr


def test_a_store_password_in_the_command_line_is_published_nowhere(cli, tmp_path, store_url):
    # click takes the last --db: the run goes to the SQLite store, but its
    # command line, stored with it, held the PostgreSQL password
    r = cli("run", "null", "--seconds=0.01", "--repeat", "1", "--db", PG_URL, "--db", store_url)
    assert r.status == 0, r.stderr
    outputs = [r.stdout + r.stderr]
    for args in (["list"], ["show", "1"], *(["export", "1", "--format", f] for f in ("json", "csv", "md"))):
        r = cli(*args)
        assert r.status == 0, r.stderr
        outputs.append(r.stdout + r.stderr)
    html = tmp_path / "report.html"
    assert cli("report", "1", "-o", str(html)).status == 0
    outputs.append(html.read_text())
    assert all(SECRET not in out for out in outputs)
    exported = json.loads(outputs[3])
    assert "bench:***@127.0.0.1:1/results" in json.dumps(exported)   # masked, not dropped


# every secret a store URL can carry: (where it goes in the URL, the secret); the secrets are
# distinct so a leak says which one leaked
SECRETS = {"userinfo": "pw0Secret", "password": "pw1Secret", "sslpassword": "pw2Secret",
           "passfile": "pw3Secret", "options": "pw4Secret"}


def secret_query() -> str:
    return (f"password={SECRETS['password']}&sslpassword={SECRETS['sslpassword']}"
            f"&passfile=/nonexistent/{SECRETS['passfile']}&options=-c%20cb.password%3D{SECRETS['options']}")


def leaked(text: str) -> list[str]:
    return [name for name, secret in SECRETS.items() if secret in text]


def test_mask_secrets_masks_every_secret_a_url_can_carry():
    from clusterbench.store.redact import mask_secrets, public_url

    assert public_url(PG_URL) == "postgresql+psycopg://bench:***@127.0.0.1:1/results"
    assert public_url("sqlite:////data/results.db") == "sqlite:////data/results.db"
    url = f"postgresql+psycopg://bench:{SECRETS['userinfo']}@db.example:5432/cb?sslmode=require&{secret_query()}"
    assert public_url(url) == ("postgresql+psycopg://bench:***@db.example:5432/cb?sslmode=require&password=***"
                               "&sslpassword=***&passfile=***&options=***")
    # options without a password is kept: it is a setting worth seeing
    assert public_url("postgresql://u@h/db?options=-c%20search_path%3Dbench") == \
        "postgresql://u@h/db?options=-c%20search_path%3Dbench"
    # a raw @ inside the password: masked up to the last @, not cut at the first
    assert public_url("postgresql://u:p@ss@host/db") == "postgresql://u:***@host/db"
    line = f"clusterbench run null --db={PG_URL} --label 'a:b@c' --dir=/x"
    assert mask_secrets(line) == ("clusterbench run null --db=postgresql+psycopg://bench:***@127.0.0.1:1/results "
                                  "--label 'a:b@c' --dir=/x")
    import shlex

    line = shlex.join(["clusterbench", "list", "--db", url, "--label", "x y"])
    assert leaked(mask_secrets(line)) == [] and "--label 'x y'" in mask_secrets(line)
    # libpq's keyword form, and a driver's message quoting a secret of the URL given
    assert mask_secrets(f"host=h password={SECRETS['password']} dbname=x") == "host=h password=*** dbname=x"
    assert mask_secrets(f'connection failed: password="{SECRET}"', PG_URL) == 'connection failed: password="***"'
    assert mask_secrets(f"bad value {SECRETS['options']} in cb.password", url) == "bad value *** in cb.password"


def test_a_store_url_with_a_raw_at_in_its_password_is_refused_without_the_rest_of_it(cli):
    r = cli("list", "--db", "postgresql+psycopg://bench:pw@tailOfSecret@127.0.0.1:1/results")
    assert r.status == 2 and r.stderr.count("\n") == 1, r.stderr
    assert "tailOfSecret" not in r.stdout + r.stderr and "%40" in r.stderr


@pytest.mark.parametrize("password", ["pw/tailOfSecret", "pw#x/tailOfSecret", "pw@x/tailOfSecret"])
def test_a_password_with_a_raw_slash_is_masked_whole(cli, password):
    """SQLAlchemy reads the password to the first @, so a raw / in it is
    part of it (and connects); the mask stopped at the / and printed the
    whole password, or its tail after a raw @."""
    from clusterbench.store.redact import public_url

    url = f"postgresql+psycopg://bench:{password}@127.0.0.1:1/results"
    assert public_url(url) == "postgresql+psycopg://bench:***@127.0.0.1:1/results"
    r = cli("list", "--db", url)
    assert r.status == 2 and r.stderr.count("\n") == 1, r.stderr
    assert "tailOfSecret" not in r.stdout + r.stderr
    # a query value holding an @ is not taken for the end of the password
    assert public_url("postgresql://u:pw@h/db?sslcert=/certs/u@h.crt") == "postgresql://u:***@h/db?sslcert=/certs/u@h.crt"


def test_store_secrets_in_a_failed_connection_are_shown_nowhere(cli):
    url = f"postgresql+psycopg://bench:{SECRETS['userinfo']}@127.0.0.1:1/results?{secret_query()}"
    for args in (["list"], ["show", "1"], ["export", "1"], ["run", "null", "--seconds=0.01", "--repeat", "1"]):
        r = cli(*args, "--db", url)
        assert r.status == 2 and r.stderr.count("\n") == 1, r.stderr
        assert leaked(r.stdout + r.stderr) == [], (args, r.stderr)


def test_store_secrets_are_shown_and_stored_nowhere_on_a_real_postgresql_store(cli, tmp_path, postgres_server):
    """A real run on a PostgreSQL store whose URL carries every kind of secret
    (the test server trusts its socket, so they connect and are ignored):
    none is in any command's output, any file written, or any stored row."""
    base = postgres_server.new_database()   # postgresql+psycopg://postgres@/NAME?host=SOCKET
    url = base.replace("postgres@", f"postgres:{SECRETS['userinfo']}@", 1) + "&" + secret_query()
    db = ["--db", url]
    outputs = []
    r = cli("run", "null", "--seconds=0.01", "--repeat", "1", "--label", "secretive", *db)
    assert r.status == 0, r.stderr
    assert "stored as run 1 in postgresql+psycopg://postgres:***@/" in r.stdout
    outputs.append(r.stdout + r.stderr)
    html, page = tmp_path / "report.html", tmp_path / "history.html"
    for args in (["list"], ["show", "1"], ["show", "99"], ["compare", "1", "1"], ["trend", "null"],
                 *(["export", "1", "--format", f] for f in ("json", "csv", "md")),
                 ["report", "1", "-o", str(html)], ["history", "-o", str(page)], ["env", "diff", "1", "1"]):
        r = cli(*args, *db)
        assert "Traceback" not in r.stderr, (args, r.stderr)
        outputs.append(r.stdout + r.stderr)
    outputs += [html.read_text(), page.read_text()]
    assert [(i, leaked(out)) for i, out in enumerate(outputs) if leaked(out)] == []
    assert "password=***" in outputs[6]   # the command line exported, masked, not dropped
    from conftest import store_rows

    stored = " ".join(str(row) for table in ("runs", "steps", "samples", "environments")
                      for row in store_rows(base, f"select * from {table}"))
    assert "secretive" in stored and leaked(stored) == []



@pytest.mark.parametrize("url", ["postgresql+psycopg://u@127.0.0.1:notaport/db",
                                 f"postgresql+psycopg://u:{SECRET}@127.0.0.1:99999/db", "nosuchdriver://x/y"])
def test_a_store_url_that_cannot_be_used_is_one_line(cli, url):
    for args in (["list"], ["run", "null", "--seconds=0.01", "--repeat", "1"]):
        r = cli(*args, "--db", url)
        assert r.status == 2 and r.stderr.count("\n") == 1 and "Traceback" not in r.stderr, r.stderr
        assert SECRET not in r.stderr and "store" in r.stderr


@pytest.mark.parametrize("url", ["sqlite://", "sqlite:///:memory:", "sqlite+pysqlite://"])
def test_an_sqlite_store_in_memory_is_refused_not_said_to_have_stored(cli, url):
    """`run` printed 'stored as run 1 in sqlite:///:memory:' of a run that was
    gone when it exited, and `import` the same of a file's runs."""
    fixture = os.path.join(os.path.dirname(__file__), "fixtures", "import", "osu-7.4-bw.txt")
    for args in (["run", "null", "--seconds=0", "--repeat", "1"], ["import", fixture], ["list"]):
        r = cli(*args, "--db", url)
        assert r.status == 2 and r.stderr.count("\n") == 1 and "keeps nothing past this command" in r.stderr, \
            (args, r.stderr)
        assert "stored as run" not in r.stdout


def test_a_sqlite_url_argument_the_driver_would_ignore_is_refused_not_warned_about(cli, tmp_path):
    """sqlite:///F?mode=ro without uri=true: SQLAlchemy printed a two-line
    Python warning naming its own source line, ignored mode=ro, and `run` then
    wrote into the store the user asked to open read-only. With uri=true SQLite
    opened a new file named 'F?mode=ro' beside F. Each is one line, exit 2,
    nothing stored or made; an argument the driver takes (timeout) is used."""
    r = cli("run", "null", "--seconds=0.01", "--repeat", "1", "--db", str(tmp_path / "s.db"))
    assert r.status == 0, r.stderr
    before = (tmp_path / "s.db").read_bytes()
    url = f"sqlite:///{tmp_path / 's.db'}?mode=ro"
    for args in (["list"], ["run", "null", "--seconds=0.01", "--repeat", "1"]):
        r = cli(*args, "--db", url)
        assert r.status == 2 and r.stderr.count("\n") == 1, r.stderr
        assert "Warning" not in r.stderr and "'mode'" in r.stderr and "uri=true" in r.stderr, r.stderr
    for args in (["list"], ["run", "null", "--seconds=0.01", "--repeat", "1"]):
        r = cli(*args, "--db", url + "&uri=true")
        assert r.status == 2 and r.stderr.count("\n") == 1 and "uri=true" in r.stderr, r.stderr
    assert (tmp_path / "s.db").read_bytes() == before and sorted(os.listdir(tmp_path)) == ["s.db"]
    r = cli("list", "--db", f"sqlite:///{tmp_path / 's.db'}?timeout=5")
    assert r.status == 0 and "null" in r.stdout and r.stderr == "", r.stderr


def test_every_numeric_option_of_every_command_refuses_a_word_in_one_line_naming_its_range_and_unit():
    """--start-timeout abc said "'abc' is not a valid float range" (click's words: no number, no unit), and
    --ci-target's range "0.1<=x<=100" was of no unit (% of the median); testbed up --hosts abc "is not a
    valid integer". In-process: each option's own type, as the command line reaches it."""
    import click

    from clusterbench.cli import cli
    from clusterbench.commands.options import ByteSize

    def commands(group, ctx, path):
        for name in group.list_commands(ctx):
            command = group.get_command(ctx, name)
            yield f"{path} {name}", command
            if isinstance(command, click.Group):
                yield from commands(command, click.Context(command, parent=ctx), f"{path} {name}")

    root = click.Context(cli)
    numeric = [(where, p) for where, command in commands(cli, root, "clusterbench") for p in command.params
               if isinstance(p.type, (click.types._NumberRangeBase, click.types.IntParamType, click.types.FloatParamType,
                                      ByteSize))]
    assert len(numeric) >= 15, numeric
    unitless = [f"{where} {p.name}" for where, p in numeric if not getattr(p.type, "unit", None)]
    assert unitless == [], unitless
    for where, p in numeric:
        with pytest.raises(click.BadParameter) as e:
            p.type.convert("abc", p, None)
        said = e.value.message
        assert said.startswith("'abc' is not a ") and said.endswith(f"{p.type.unit})" if p.type.min is not None
                                                                     or p.type.max is not None
                                                                     else f"a number of {p.type.unit}"), (where, said)
    (start,) = [p for _, p in numeric if p.name == "start_timeout"]
    with pytest.raises(click.BadParameter) as e:
        start.type.convert("abc", start, None)
    assert e.value.message == "'abc' is not a decimal number written in the digits 0-9; give 1<=x<=31536000 (seconds)"


@pytest.mark.parametrize("args,says", [
    # other scripts' digits: Python's int() and float() read them, cbk does not; '٣' ran as 3, stored as typed
    (["--seconds=\u0663"], "null: --seconds=\u0663 is not a number"),
    (["--seconds=1_0"], "null: --seconds=1_0 is not a number"),
    (["--repeat", "\u0661"], "--repeat \u0661: give a number from 1 to 100000, or auto"),
    (["--repeat", "\u00b2"], "--repeat \u00b2: give a number from 1 to 100000, or auto"),   # isdigit(), then int() raised
    (["--np", "\u0662"], "'\u0662' is not a whole number written in the digits 0-9"),
    (["--repeat", "auto", "--ci-target", "\u0665"], "'\u0665' is not a decimal number written in the digits 0-9"),
])
def test_numbers_in_other_digits_than_0_9_are_refused_in_one_line_and_nothing_is_stored(cli, store_url, args, says):
    r = cli("run", "null", "--seconds=0.01", *args) if not args[0].startswith("--seconds") else cli("run", "null", *args)
    assert r.status == 2 and says in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert cli("list").status == 2   # no store was made: nothing was stored
