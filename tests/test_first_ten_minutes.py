"""What a new user meets first (issue 26), checked as the user sees it: on a
terminal 80 and 160 columns wide, and piped into a file."""
from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib import metadata
from pathlib import Path

import pytest

from conftest import REPO, store_rows
from terminal import on_terminal, piped, user_env

SEEN_AS = ["80", "160", "pipe"]


def seen(args: list[str], how: str, env: dict):
    return piped(args, env) if how == "pipe" else on_terminal(args, int(how), env)


def flat(text: str) -> str:
    """Text with line wrapping undone: a terminal 80 columns wide wraps long warnings."""
    return " ".join(text.split())


@pytest.fixture(scope="module")
def warm_run(cbk_bin, tmp_path_factory):
    """One stored seqio run with a warm read (warned as a likely cache effect in every
    repetition), and cold-read warnings with different figures added to its reads, as
    the runner adds them when a cold read beats the O_DIRECT one."""
    from clusterbench.store import Store

    tmp = tmp_path_factory.mktemp("warm")
    (tmp / "target").mkdir()
    env = user_env(cbk_bin, f"sqlite:///{tmp / 'results.db'}")
    r = piped(["run", "seqio", f"--dir={tmp / 'target'}", "--file-size=4m", "--block-size=1m", "--write=buffered",
               "--read=warm", "--repeat", "3", "--quiet"], env)
    assert r.status == 0, r.stderr
    store = Store(env["CLUSTERBENCH_DB"])
    reads = [i for (i,) in store_rows(store.url, "select id from samples where phase = 'read' order by id")]
    for sid, rate in zip(reads, (1378, 2864, 2001)):
        store.add_sample_warnings(sid, [f"cold read {rate:,} MiB/s faster than the O_DIRECT read of the same "
                                        f"directory (1,021 MiB/s): readahead helped"])
    return env


# 1. repeated warnings
@pytest.mark.parametrize("how", SEEN_AS)
def test_a_warning_repeated_in_every_repetition_is_one_line_with_count_and_range(warm_run, how):
    r = seen(["show", "1"], how, warm_run)
    assert r.status == 0, r.text + r.stderr
    text = flat(r.text)
    assert text.count("cold read") == 1 and text.count("likely cache effect") == 1, r.text
    assert ("warning: 3 of 3 repetitions: cold read 1,378-2,864 MiB/s faster than the O_DIRECT read of the same "
            "directory (1,021 MiB/s)") in text
    assert re.search(r"warning: 3 of 3 repetitions: likely cache effect: the data read \(4 MiB\) fits in free "
                     r"memory \([\d.]+ [KMGT]iB\)", text)


def test_folding_keeps_names_with_digits_and_counts_each_sample_once():
    from clusterbench.results.warning_fold import fold

    assert fold([["read over nfs4 at 9.5 Gbit/s"], [], ["read over nfs4 at 10.25 Gbit/s"]], 3) == [
        "2 of 3 repetitions: read over nfs4 at 9.50-10.25 Gbit/s"]
    assert fold([["on vda1: 7 errors", "on vda1: 9 errors"]], 1) == ["on vda1: 7 errors"]
    assert fold([["a"], ["b"]], 2) == ["1 of 2 repetitions: a", "1 of 2 repetitions: b"]
    # stores written before the fold keep their wording and fold the same way
    assert fold([["cold read (1378 MiB/s) faster (1021 MiB/s)"], ["cold read (2864 MiB/s) faster (1021 MiB/s)"]],
                2) == ["2 of 2 repetitions: cold read (1,378-2,864 MiB/s) faster (1021 MiB/s)"]


# 2. the mode column
def test_the_mode_column_is_named_after_what_it_holds(warm_run, cli, store_url, mpiexec):
    assert cli("run", "null", "--seconds=0.001", "--repeat", "1", "--quiet").status == 0
    assert cli("run", "mpi", "--np", "2", "--op=allreduce", "--sizes=8", "--algorithm=recursive-doubling",
               "--repeat", "1", "--quiet").status == 0
    env = {**warm_run, "CLUSTERBENCH_DB": store_url}

    def header(args, env, how):
        r = seen(args, how, env)
        return next(line for line in r.lines if "median" in line), r.text

    for how in SEEN_AS:
        io, text = header(["show", "1"], warm_run, how)
        assert re.search(r"phase\s+┃ cache\s+┃ n", io) and "mode" not in io, text
        null, text = header(["show", "1"], env, how)
        assert re.search(r"phase\s+┃ n\s+┃", null), text  # nothing to say: no column
        if how != "80":  # there the mpi table folds its cells, headings included
            mpi, text = header(["show", "2"], env, how)
            assert re.search(r"phase\s+┃ algorithm\s+┃ n", mpi) and "recursive-doubling" in text, text


def test_records_that_declare_their_qualifiers_name_the_column_after_them():
    """The record contract (docs/records.md): mode is the cache state or n/a;
    an algorithm or a count of busy CPUs is a declared field."""
    from clusterbench.report.terminal import condition_header
    from clusterbench.results.sample import Sample
    from clusterbench.analysis.step_summary import rows

    def sample(rec):
        return Sample.from_record({"phase": "p", "rate": 1.0, "rate_unit": "us", **rec})

    mpi = [sample({"mode": "n/a", "qualifiers": ["algorithm"], "algorithm": "library",
                   "sweep_key": "size_bytes", "size_bytes": 8})]
    assert condition_header(rows(mpi), "no-such-kernel") == "algorithm"
    cpufreq = [sample({"mode": "n/a", "qualifiers": [], "sweep_key": "busy_cpus", "busy_cpus": 2})]
    assert condition_header(rows(cpufreq), "no-such-kernel") == "busy cpus"
    assert sample({"mode": "cold", "qualifiers": [], "sweep_key": None}).condition_names == ("cache",)
    assert sample({"mode": "n/a", "qualifiers": [], "sweep_key": None}).condition_names == ()
    assert sample({"mode": "2 busy"}).condition_names == ("mode",)  # an older record: the text, under a plain name


# 3. the suite's report
def test_a_suite_report_lands_beside_the_store_in_use_or_in_report_dir(cbk_bin, tmp_path):
    suite = tmp_path / "tiny.toml"
    suite.write_text('[[steps]]\nkernel = "null"\nrepeat = 2\nparams = { seconds = "0.001" }\n')
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    env = user_env(cbk_bin, str(tmp_path / "a" / "site.db"))
    r = piped(["run", str(suite), "--quiet"], env)
    assert r.status == 0, r.stderr
    assert f"report: {tmp_path / 'a' / 'site-run-1.html'}" in r.text
    assert (tmp_path / "a" / "site-run-1.html").read_text().startswith("<!DOCTYPE html>")

    r = piped(["run", str(suite), "--quiet", "--db", str(tmp_path / "b" / "other.db")], env)
    assert r.status == 0 and f"report: {tmp_path / 'b' / 'other-run-1.html'}" in r.text, r.text + r.stderr

    r = piped(["run", str(suite), "--quiet", "--report-dir", str(tmp_path / "reports" / "nov")], env)
    assert r.status == 0 and f"report: {tmp_path / 'reports' / 'nov' / 'site-run-2.html'}" in r.text
    assert (tmp_path / "reports" / "nov" / "site-run-2.html").exists()

    (tmp_path / "afile").write_text("")
    r = piped(["run", str(suite), "--quiet", "--report-dir", str(tmp_path / "afile" / "sub")], env)
    assert r.status == 2 and len(r.stderr.strip().splitlines()) == 1 and "is not a directory" in r.stderr
    assert store_rows(f"sqlite:///{tmp_path / 'a' / 'site.db'}", "select count(*) from runs") == [(2,)]


def test_a_skipped_step_is_one_line_with_its_reason_not_an_empty_table(cbk_bin, tmp_path):
    """quick on a node without a GPU ends with its GPU steps skipped: each was an
    empty table (headings, no row, the command line as if it had run) with the
    reason under it in red, after the reason had already been said."""
    import json
    import subprocess

    described = json.loads(subprocess.run([cbk_bin, "--describe"], capture_output=True, text=True).stdout)
    if "gpumem" in {k["name"] for k in described["kernels"]}:
        pytest.skip("this cbk was built with CUDA")
    suite = tmp_path / "mixed.toml"
    suite.write_text('[[steps]]\nname = "GPU memory"\nkernel = "gpumem"\nrequires = ["gpu"]\n'
                     '[[steps]]\nkernel = "null"\nrepeat = 2\nparams = { seconds = "0.001" }\n')
    env = user_env(cbk_bin, f"sqlite:///{tmp_path / 'results.db'}")
    r = piped(["run", str(suite), "--report-dir", str(tmp_path)], env)
    assert r.status == 0, r.stderr
    assert r.text.count("┃ phase") == 1, r.text   # the null step's table only
    skipped = [line for line in r.text.splitlines() if "GPU memory" in line]
    from clusterbench.environment.gpu import pci_gpus

    # on a host with no GPU that is the reason; with one, the cbk's build is
    why = "no GPU on this host" if pci_gpus() == {} else "this cbk was built without CUDA"
    assert len(skipped) == 1 and skipped[0].startswith(f"GPU memory [skipped]: {why}"), r.text
    assert "gpumem --" not in r.text and "gpumem," not in r.text
    shown = piped(["show", "1"], env)
    assert shown.status == 0 and shown.text.count("┃ phase") == 1 and "GPU memory [skipped]: " in shown.text


def help_texts() -> dict[str, str]:
    """Every command's and subcommand's --help, as `clusterbench X --help` prints it."""
    import click

    from clusterbench.cli import COMMANDS, cli

    texts: dict[str, str] = {}

    def walk(cmd, path: list[str], parent) -> None:
        ctx = click.Context(cmd, info_name=" ".join(path), parent=parent)
        texts[" ".join(path)] = cmd.get_help(ctx)
        if isinstance(cmd, click.Group):
            for name in cmd.list_commands(ctx):
                walk(cmd.get_command(ctx, name), [*path, name], ctx)

    root = click.Context(cli, info_name="clusterbench")
    for name in COMMANDS:
        walk(cli.get_command(root, name), [name], root)
    return texts


def test_every_run_example_in_a_help_text_names_a_kernel_or_suite_run_takes(cbk_bin):
    """An example pasted from --help must start: `clusterbench testbed --help`
    showed `clusterbench run pingpong ...`, and there is no kernel pingpong
    (it is `mpi --op=pingpong`): 'no such kernel or suite'."""
    import json
    import subprocess

    from clusterbench import suites

    described = json.loads(subprocess.run([cbk_bin, "--describe"], capture_output=True, text=True).stdout)
    known = {k["name"] for k in described["kernels"]} | set(described.get("left_out") or {})
    known |= set(suites.shipped()) | {"cluster", "KERNEL"}
    examples = [(where, m.group(1)) for where, text in help_texts().items()
                for m in re.finditer(r"clusterbench run ([^\s\[]\S*)", text)]
    assert len(examples) >= 7 and ("run", "quick") in examples, examples
    wrong = [(where, target) for where, target in examples if target not in known and not target.endswith(".toml")]
    assert not wrong, wrong


# 4. bad input on the command line
@pytest.mark.parametrize("how", SEEN_AS)
@pytest.mark.parametrize("args, message", [
    (["run", "null", "--np", "0"], "'--np': 0 is not in the range"),
    (["frob"], "no such command: 'frob' (commands: kernels, run,"),
    (["run"], "Missing argument 'TARGET'"),
    (["show"], "Missing argument 'RUNS...'"),
    (["show", "--width", "10", "1"], "'--width': 10 is not in the range"),
])
def test_a_usage_error_is_one_line_and_exit_2(cbk_bin, tmp_path, how, args, message):
    r = seen(args, how, user_env(cbk_bin, f"sqlite:///{tmp_path / 'results.db'}"))
    shown = r.stderr if how == "pipe" else r.text
    assert r.status == 2
    assert len(shown.strip().splitlines()) == 1 and shown.startswith("Error: ") and message in shown, shown
    assert "Usage:" not in shown and r.text.strip() == ("" if how == "pipe" else shown.strip())


# 5. sizes
def test_decimal_sizes_that_come_to_whole_bytes_are_taken(cli, tmp_path, store_url):
    r = cli("run", "seqio", f"--dir={tmp_path}", "--file-size=1.5m", "--block-size=512k", "--repeat", "1", "--quiet")
    assert r.status == 0, r.stderr
    (record,) = store_rows(store_url, "select record from samples where phase = 'write'")
    import json

    assert json.loads(record[0])["file_bytes"] == 1572864
    bad = cli("run", "seqio", f"--dir={tmp_path}", "--file-size=1.3")
    assert bad.status == 2 and "--file-size=1.3 is not a whole number of bytes" in bad.stderr

    from clusterbench.results.sizes import parse_size

    assert [parse_size(t) for t in ("1.5g", "0.5k", "4KiB", "1.3", "1.5x", ".5g")] == [
        1610612736, 512, 4096, None, None, None]


@pytest.mark.parametrize("how", ["80", "pipe"])
def test_the_free_space_refusal_speaks_one_unit(cbk_bin, tmp_path, how):
    r = seen(["run", "seqio", f"--dir={tmp_path}", "--file-size=1000t"], how,
             user_env(cbk_bin, f"sqlite:///{tmp_path / 'results.db'}"))
    shown = flat(r.stderr if how == "pipe" else r.text)
    assert r.status == 2
    assert re.search(r"the run needs 1000 TiB, [\d.]+ TiB is free$", shown), shown


# 6. clusterbench ior
@pytest.mark.parametrize("how", SEEN_AS)
def test_ior_with_a_missing_directory_prints_only_the_error(cbk_bin, mpiexec, tmp_path, how):
    r = seen(["ior", "-a", "POSIX", "-b", "1m", "-t", "256k", "-o", "/missing/x"], how,
             user_env(cbk_bin, f"sqlite:///{tmp_path / 'results.db'}"))
    assert r.status == 2
    if how == "pipe":
        assert r.text == "" and len(r.stderr.strip().splitlines()) == 1, r.text + r.stderr
        assert "/missing" in r.stderr
    else:
        assert len(r.lines) == 1 and r.lines[0].startswith("Error: ") and "note:" not in r.text, r.text


# 7. table width
def _widest(text: str) -> int:
    return max(len(line.rstrip()) for line in text.splitlines())


def _whole(text: str) -> bool:
    """No cell cut short (…) and no table line cropped at the right edge."""
    rows = [line.rstrip() for line in text.splitlines() if line and line[0] in "┏┃┡│└"]
    return "…" not in text and all(line[-1] in "┓┃┩│┘" for line in rows)


def test_tables_fit_the_terminal_or_width_and_pipes_get_160(warm_run):
    at_80 = on_terminal(["show", "1"], 80, warm_run).text
    assert _widest(at_80) <= 80 and _whole(at_80), at_80
    narrow = on_terminal(["show", "1", "--width", "50"], 160, warm_run).text
    assert _widest(narrow) <= 50 and _whole(narrow), narrow
    at_160 = _widest(on_terminal(["show", "1"], 160, warm_run).text)
    assert 80 < at_160 <= 160
    assert _widest(on_terminal(["show", "1", "--width", "100"], 160, warm_run).text) <= 100
    piped_width = _widest(piped(["show", "1"], warm_run).text)
    assert 80 < piped_width <= 160
    assert _widest(piped(["show", "1", "--width", "90"], warm_run).text) <= 90
    assert _widest(piped(["list", "--width", "70"], warm_run).text) <= 70
    assert _widest(piped(["show", "1"], {**warm_run, "COLUMNS": "100"}).text) <= 100


# 8. dependencies
def test_every_third_party_import_is_declared_and_every_dependency_is_imported():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    declared = {re.split(r"[\[<>=! ]", d)[0].lower() for d in project["dependencies"]}
    imported = set()
    for path in (REPO / "src" / "clusterbench").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                imported |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                imported.add(node.module.split(".")[0])
    third_party = imported - set(sys.stdlib_module_names) - {"clusterbench", "__future__"}
    distributions = metadata.packages_distributions()
    used = {dist.lower() for module in third_party for dist in distributions.get(module, [module])}
    assert used == declared, f"imported but not declared: {used - declared}; declared, never imported: {declared - used}"
