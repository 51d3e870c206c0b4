"""A run named on the command line (show, compare, report, export, prune,
env --diff) is an id or a label (store/run_ref.py): a label of digits only
cannot be told from an id, so none is stored, and one stored before is never
taken for the run of that id."""
from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy as sa

from conftest import store_rows


def _one_line(r, status: int = 2) -> None:
    assert r.status == status and "Traceback" not in r.stderr, (r.status, r.stderr)
    assert r.stderr.count("\n") == 1, r.stderr


@pytest.mark.timeout(120)
def test_a_label_of_digits_is_refused_and_one_stored_before_is_never_taken_for_an_id(cli, store_url):
    for label in ("a", "b"):
        assert cli("run", "null", "--seconds=0", "--repeat", "1", "--quiet", "--label", label).status == 0
    for args in (["run", "null", "--repeat", "1", "--label", "1"], ["run", "cluster", "--label", "02"],
                 ["ior", "-w", "--label", "3"],
                 ["import", "--label", "4", str(Path(__file__).parent / "fixtures" / "import" / "osu-7.4-bw.txt")]):
        r = cli(*args)
        _one_line(r)
        assert "digits only" in r.stderr, (args, r.stderr)
    assert store_rows(store_url, "select id, label from runs order by id") == [(1, "a"), (2, "b")]

    # a store written before: run 2 labelled '1'. `prune --run 1` deleted run 1, `compare 1 a` compared run 1
    with sa.create_engine(store_url).begin() as c:
        c.execute(sa.text("update runs set label = '1' where id = 2"))
    for args in (["prune", "--run", "1"], ["show", "1"], ["compare", "1", "a"], ["export", "1"]):
        r = cli(*args)
        _one_line(r)
        assert "'1' is run 1's id and the label of run(s) 2" in r.stderr, (args, r.stderr)
    assert [i for (i,) in store_rows(store_url, "select id from runs order by id")] == [1, 2]
    assert cli("show", "2").status == 0


@pytest.mark.parametrize("label", ["", "   ", "\t", "\u200b", "\ufeff\u2060", "\x01 \x7f"])
def test_a_blank_label_is_refused_before_anything_runs(cli, store_url, label):
    """--label '' was stored: a blank cell in list, and `show ''` named the
    run; so was one of only zero-width or control characters, blank too."""
    osu = str(Path(__file__).parent / "fixtures" / "import" / "osu-7.4-bw.txt")
    for args in (["run", "null", "--seconds=0", "--repeat", "1", "--label", label], ["import", "--label", label, osu]):
        r = cli(*args)
        _one_line(r)
        assert "a label needs a character that shows" in r.stderr, (args, r.stderr)
    assert not Path(store_url.removeprefix("sqlite:///")).exists()


@pytest.mark.parametrize("name, says", [
    ("a\tb", "character 2 is a tab (U+0009)"), ("two\nlines", "character 4 is a newline (U+000A)"),
    ("x\x1b[31mred", "character 2 is ESC (U+001B)"), ("a\x01b", "character 2 is a control character (U+0001)"),
    ("n\x9b1", "character 2 is a control character (U+009B)"), ("ab\u202ec", "character 3 is a bidirectional control (U+202E)"),
    ("a\u2028b", "character 2 is a line separator (U+2028)")])
def test_a_name_to_be_stored_holding_a_character_that_does_not_print_is_refused_naming_it(cli, store_url, name, says):
    """--label 'a<TAB>b' (and a newline, an escape sequence) was stored, and shown without it; so was an import's
    --host. Refused in one line that names the character and where it is, before anything runs or is stored."""
    osu = str(Path(__file__).parent / "fixtures" / "import" / "osu-7.4-bw.txt")
    for args, what in ((["run", "null", "--seconds=0", "--repeat", "1", "--label", name], "--label"),
                       (["run", "cluster", "--label", name], "--label"), (["ior", "-w", "--label", name], "--label"),
                       (["import", "--label", name, "--host", "n01", osu], "--label"),
                       (["import", "--host", name, osu], "--host")):
        r = cli(*args)
        _one_line(r)
        kind = "a label" if what == "--label" else "a host name"
        assert f"{what} {name!r}: {says}, which does not print; {kind} is printable text only" in r.stderr, \
            (args, r.stderr)
    assert not Path(store_url.removeprefix("sqlite:///")).exists()


@pytest.mark.parametrize("host", ["", "   ", "\u200b"])
def test_a_blank_host_is_refused_before_anything_is_imported(cli, store_url, host):
    """import --host '' was stored as the run's host: 'on ' in show, a blank cell in list."""
    osu = str(Path(__file__).parent / "fixtures" / "import" / "osu-7.4-bw.txt")   # it names no host
    r = cli("import", "--host", host, "--date", "2024-01-01", osu)
    _one_line(r)
    assert "a host name needs a character that shows" in r.stderr, r.stderr
    assert not Path(store_url.removeprefix("sqlite:///")).exists()


def test_a_run_id_of_other_digits_or_past_the_stores_integers_is_no_traceback(cli):
    assert cli("run", "null", "--seconds=0", "--repeat", "1", "--quiet").status == 0
    for ref in ("\u00b2", "\u0661", "99999999999999999999999"):   # '²' and Arabic-Indic 1 are str.isdigit()
        for args in (["show", ref], ["export", ref], ["compare", ref, "1"], ["env", "--diff", ref, "1"]):
            r = cli(*args)
            _one_line(r)
            assert f"no run with id or label '{ref}'" in r.stderr, (args, r.stderr)


@pytest.mark.timeout(120)
def test_show_gives_each_run_once_and_refuses_a_bad_ref_before_printing_any(cli):
    """`show 1 1`, or a run's label beside its id, printed the run twice; a
    bad ref after a good one printed the good run and then the error."""
    assert cli("run", "null", "--seconds=0", "--repeat", "1", "--quiet", "--label", "base").status == 0
    r = cli("show", "1", "base", "1")
    assert r.status == 0 and r.stdout.count("run 1 (base): ok") == 1, r.stdout
    r = cli("show", "1", "no-such-run")
    _one_line(r)
    assert r.stdout == "", r.stdout
