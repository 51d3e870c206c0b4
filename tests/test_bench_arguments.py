"""The bench/ scripts' argument handling and dry paths: --help answers with
the usage, and a bad argument is argparse's one line and exit 2 before
anything is made or measured (no traceback, no file left behind). Never a
real comparison: every case here is refused before the first pair."""
from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"
SCRIPTS = sorted(p.name for p in BENCH.iterdir() if p.is_file() and p.stat().st_mode & stat.S_IXUSR)


def bench(script: str, *args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(BENCH / script), *args], capture_output=True, text=True, timeout=120,
                          cwd=cwd, env={**os.environ, **env})


@pytest.fixture
def quiet_dir(tmp_path: Path) -> Path:
    """The bench's working directory, which must stay empty."""
    d = tmp_path / "cwd"
    d.mkdir()
    return d


def test_the_bench_scripts_are_found():
    assert {"ior_vs_ior", "mdtest_vs_mdtest", "mpi_overhead", "pario_vs_fio", "seqio_vs_fio"} <= set(SCRIPTS)


@pytest.mark.parametrize("script", SCRIPTS)
def test_every_bench_script_answers_help_with_its_usage(script, quiet_dir):
    p = bench(script, "--help", cwd=quiet_dir)
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr
    assert p.stdout.startswith("usage:"), p.stdout[:300]
    assert list(quiet_dir.iterdir()) == []


# each refused before a pair runs; IOR_BIN_DIR points at an empty folder so no
# script clones or builds IOR even if it got that far
HAND_PARSED = [
    ("ior_vs_ior", ["0"], "at least 1"),
    ("ior_vs_ior", ["lots"], "at least 1"),
    ("ior_vs_ior", ["2", "/nonexistent-dir"], "/nonexistent-dir: no such directory"),
    ("mdtest_vs_mdtest", ["--help-me"], "unrecognized arguments"),
    ("mdtest_vs_mdtest", ["-3"], "at least 1"),
    ("mpi_overhead", ["0"], "at least 1"),
    ("pario_vs_fio", ["2", ".", "bogus"], "'bogus' is not a size"),
    ("pario_vs_fio", ["1", "/nonexistent-dir"], "/nonexistent-dir: no such directory"),
]


@pytest.mark.parametrize("script,args,says", HAND_PARSED)
def test_a_bad_positional_argument_is_one_line_and_exit_2(script, args, says, quiet_dir, tmp_path, cbk_bin):
    empty = tmp_path / "no-ior"
    empty.mkdir()
    p = bench(script, *args, cwd=quiet_dir, IOR_BIN_DIR=str(empty), CLUSTERBENCH_CBK=cbk_bin)
    assert p.returncode == 2, p.stdout + p.stderr
    assert "Traceback" not in p.stderr and says in p.stderr.strip().splitlines()[-1], p.stderr
    assert p.stdout == "" and list(quiet_dir.iterdir()) == []


# the scripts that parse options: each bad value was found only after the
# set-up (a memory device, a namespace link, a store of 10,000 runs) or the
# pairs, as a median of no pairs, a ZeroDivisionError or a ValueError
OPTIONS = [
    ("seqio_vs_fio", ["--pairs", "0"], "at least 1"),
    ("seqio_vs_fio", ["--dir", "/nonexistent-dir"], "/nonexistent-dir: no such directory"),
    ("seqio_vs_fio", ["--bs", "1q"], "'1q' is not a size"),
    ("randio_vs_fio", ["--pairs", "0"], "at least 1"),
    ("randio_vs_fio", ["--runtime", "0"], "seconds above 0"),
    ("randio_vs_fio", ["--size", "bogus"], "'bogus' is not a size"),
    ("randio_vs_fio", ["--depths", "1,0"], "at least 1"),
    ("manyfiles_vs_fio", ["--files", "0"], "at least 1"),
    ("manyfiles_vs_fio", ["--pairs", "-1"], "at least 1"),
    ("pario_vs_ior", ["--ior-src", ".", "--pairs", "0"], "at least 1"),
    ("pario_vs_ior", ["--ior-src", ".", "--dir", "/nonexistent-dir"], "/nonexistent-dir: no such directory"),
    ("tcp_vs_iperf3", ["--streams", "1,x"], "'x' is not a whole number"),
    ("tcp_vs_iperf3", ["--pairs", "0"], "at least 1"),
    ("tcp_vs_iperf3", ["--duration", "-1"], "seconds above 0"),
    ("store_scale", ["--runs", "0"], "at least 1"),
    ("import_speed", ["--rounds", "0"], "at least 1"),
    ("harness_overhead", ["--rounds", "0"], "at least 1"),
    ("compute", ["--pairs", "0"], "at least 1"),
    ("gpu_vs_reference", ["--pairs", "0"], "at least 1"),
    ("gpu_vs_reference", ["--passes", "0"], "at least 1"),
]


@pytest.mark.parametrize("script,args,says", OPTIONS)
def test_a_bad_option_value_is_one_line_and_exit_2_before_anything_is_made(script, args, says, quiet_dir, cbk_bin):
    p = bench(script, *args, cwd=quiet_dir, CLUSTERBENCH_CBK=cbk_bin)
    assert p.returncode == 2, p.stdout + p.stderr
    assert "Traceback" not in p.stderr and says in p.stderr.strip().splitlines()[-1], p.stderr
    assert p.stdout == "" and list(quiet_dir.iterdir()) == []


def option_helps(help_text: str) -> dict[str, str]:
    """--option -> its help text, for the options that take a value."""
    import re

    section = help_text.split("\noptions:\n", 1)[1]
    found: dict[str, str] = {}
    name = None
    for line in section.splitlines():
        m = re.match(r"  (?:-\w, )?(--[\w-]+)( [A-Z_{][^ ,]*(?: \[[^]]*\])*)?(?:, --[\w-]+(?: [A-Z_{][^ ,]*)?)*"
                     r"(?:\s{2,}(.*))?$", line)
        if m:
            name = m.group(1) if m.group(2) else None
            if name:
                found[name] = m.group(3) or ""
        elif name and line.startswith(" " * 8):
            found[name] += " " + line.strip()
    return found


# options whose absence is the default state, which their help says in words
NO_DEFAULT = {"--against", "--himeno-src", "--stream-src", "--ior-src"}


@pytest.mark.parametrize("script", SCRIPTS)
def test_every_bench_option_that_takes_a_value_says_what_it_is_and_its_default(script, quiet_dir):
    text = bench(script, "--help", cwd=quiet_dir).stdout
    helps = option_helps(text)
    assert helps or "positional arguments:" in text, script
    for option, text in helps.items():
        assert text.strip(), f"{script} {option}: no help"
        assert option in NO_DEFAULT or "default" in text, f"{script} {option}: no default in {text!r}"


@pytest.mark.parametrize("script,args,says", [
    ("pario_vs_fio", ["1"], "fio"),
    ("ior_vs_ior", ["1"], "no ior in"),
    ("mdtest_vs_mdtest", ["1"], "no mdtest in"),
])
def test_the_positional_benches_find_the_cbk_setup_installed_and_name_the_missing_tool(script, args, says, quiet_dir,
                                                                                      tmp_path):
    """scripts/setup.sh puts cbk beside the venv's Python, where the other
    benches look (benchkit.cbk_path); these four looked in build/cbk only
    and stopped there with 'no cbk at .../build/cbk'."""
    beside = Path(sys.executable).parent / "cbk"
    if not os.access(beside, os.X_OK):
        pytest.skip("no cbk beside this Python (not the venv setup.sh makes)")
    no_tools, no_ior = tmp_path / "bin", tmp_path / "no-ior"
    no_tools.mkdir()
    no_ior.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "CLUSTERBENCH_CBK"}
    p = subprocess.run([sys.executable, str(BENCH / script), *args], capture_output=True, text=True, timeout=120,
                       cwd=quiet_dir, env={**env, "PATH": str(no_tools), "IOR_BIN_DIR": str(no_ior)})
    assert p.returncode != 0 and "Traceback" not in p.stderr, p.stderr
    assert "no cbk" not in p.stderr and says in p.stderr.strip().splitlines()[-1], p.stderr
    assert list(quiet_dir.iterdir()) == []


@pytest.mark.parametrize("script", ["ior_vs_ior", "mdtest_vs_mdtest"])
def test_ior_src_that_is_no_ior_source_is_named_in_one_line_and_nothing_is_left(script, quiet_dir, tmp_path):
    """Where GitHub cannot be reached IOR is built from IOR_SRC (a local git
    directory[@TAG] or a source tree); these benches cloned GitHub regardless."""
    beside = Path(sys.executable).parent / "cbk"
    if not os.access(beside, os.X_OK):
        pytest.skip("no cbk beside this Python (not the venv setup.sh makes)")
    not_ior, tmp = tmp_path / "not-ior", tmp_path / "tmp"
    not_ior.mkdir()
    tmp.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("CLUSTERBENCH_CBK", "IOR_BIN_DIR")}
    p = subprocess.run([sys.executable, str(BENCH / script), "1"], capture_output=True, text=True, timeout=120,
                       cwd=quiet_dir, env={**env, "IOR_SRC": f"{not_ior}@4.0.0", "TMPDIR": str(tmp)})
    assert p.returncode != 0 and "Traceback" not in p.stderr, p.stderr
    assert p.stderr.strip().splitlines()[-1] == f"IOR_SRC={not_ior}@4.0.0: not an IOR source directory or git directory"
    assert list(quiet_dir.iterdir()) == [] and list(tmp.iterdir()) == []
