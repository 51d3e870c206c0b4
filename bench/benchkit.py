"""What the bench scripts share: finding the cbk to measure, sizes in
cbk's syntax (binary suffixes k, m, g, t), the argument types that refuse a
bad value in argparse's one line (exit 2) before anything is made, the
spread they print, a sync before each run, and IOR's build (ior_vs_ior,
mdtest_vs_mdtest)."""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def cbk_path(given: str | None) -> str:
    """--cbk, else $CLUSTERBENCH_CBK, else the one beside this Python, the
    CMake build tree's, or the first on PATH."""
    for c in (given, os.environ.get("CLUSTERBENCH_CBK"), str(Path(sys.executable).parent / "cbk"),
              str(REPO / "build" / "cbk"), shutil.which("cbk")):
        if c and os.access(c, os.X_OK):
            return c
    sys.exit("cbk not found: pass --cbk or run scripts/setup.sh")


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """The script's docstring as written, and each option's default after its
    help unless the help already gives it."""

    def _get_help_string(self, action):
        text = action.help or ""
        if action.option_strings and action.default not in (None, False, argparse.SUPPRESS) and "default" not in text:
            text += " (default: %(default)s)"
        return text


def parsed_size(text: str) -> int | None:
    """cbk's size syntax, read by clusterbench's one parser (clusterbench.results.sizes)."""
    try:
        from clusterbench.results.sizes import parse_size
    except ImportError:   # a bench script run with a Python that lacks the package: the source tree's
        sys.path.insert(0, str(REPO / "src"))
        from clusterbench.results.sizes import parse_size
    return parse_size(text)


def size_bytes(text: str) -> int:
    n = parsed_size(text)
    if n is None:
        sys.exit(f"bad size {text}: give bytes with an optional k, m, g or t (e.g. 4k, 1.5g)")
    return n


# argparse types: a bad value is argparse's one line and exit 2, before a
# directory, a memory device or a network namespace is made (a value found
# bad after the pairs, as a median of no pairs, was a traceback)

def count(text: str) -> int:
    """A whole number of at least 1 (pairs, rounds, files, streams)."""
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of at least 1")
    return n


def counts(text: str) -> list[int]:
    """A comma-separated list of counts, e.g. 1,4."""
    return [count(x.strip()) for x in text.split(",")]


def seconds(text: str) -> float:
    """A duration in seconds, more than 0."""
    try:
        s = float(text)
    except ValueError:
        s = 0.0
    if not s > 0 or s == float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds above 0")
    return s


def size(text: str) -> str:
    """A size in cbk's syntax, kept as given (the tools are handed the text)."""
    n = parsed_size(text)
    if n is None or n < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a size: give bytes with an optional k, m, g or t "
                                         "(e.g. 4k, 1.5g)")
    return text


def directory(text: str) -> str:
    """An existing directory the bench may write in."""
    if not os.path.isdir(text):
        raise argparse.ArgumentTypeError(f"{text}: no such directory")
    if not os.access(text, os.W_OK | os.X_OK):
        raise argparse.ArgumentTypeError(f"{text}: not writable")
    return text


def spread(xs: list[float]) -> str:
    """(max - min) / median of one tool's figures over the pairs, in %: a ratio
    nearer 1 than the two tools' spreads is a tie."""
    return f"{(max(xs) - min(xs)) / statistics.median(xs) * 100:.0f} %"


def settle() -> None:
    """Writes what is dirty and commits the file systems' journals (a deleted
    file's blocks are freed at the commit), so a run does not pay for what
    the run before it left to write, whichever tool that was."""
    os.sync()


IOR_TAG = "4.0.0"


def ior_source(spec: str | None, into: str) -> None:
    """IOR's source into `into` (absent yet): from $IOR_SRC when given, a source
    directory or a git directory with @TAG (default 4.0.0), e.g. a local mirror
    on a machine without internet; else cloned from GitHub at that tag."""
    if not spec:
        cmd = ["git", "clone", "-q", "--depth", "1", "--branch", IOR_TAG, "https://github.com/hpc/ior", into]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode:
            sys.exit(f"cloning IOR failed ({p.stderr.strip()[-300:]}): set IOR_SRC to a local IOR git "
                     f"directory[@TAG] or source directory, or IOR_BIN_DIR to a built one")
        return
    path, _, tag = spec.partition("@")
    src = Path(path)
    gitdir = src / ".git" if (src / ".git").is_dir() else src
    if (gitdir / "objects").is_dir():
        archive = subprocess.run(["git", f"--git-dir={gitdir}", "archive", tag or IOR_TAG], capture_output=True)
        if archive.returncode:
            sys.exit(f"IOR_SRC={spec}: git archive failed: {archive.stderr.decode().strip()[-300:]}")
        os.makedirs(into)
        subprocess.run(["tar", "-x", "-C", into], input=archive.stdout, check=True)
    elif (src / "configure.ac").is_file():
        shutil.copytree(src, into)
    else:
        sys.exit(f"IOR_SRC={spec}: not an IOR source directory or git directory")


def build_ior(work: str, mpicc: str) -> str:
    """IOR (ior and mdtest) built under `work` with `mpicc`; returns the
    directory holding the binaries."""
    src = os.path.join(work, "ior")
    ior_source(os.environ.get("IOR_SRC"), src)
    for cmd in (["./bootstrap"], ["./configure", f"CC={mpicc}", "--without-gpfs", "--without-lustre"],
                ["make", "-j2"]):
        p = subprocess.run(cmd, cwd=src, capture_output=True, text=True)
        if p.returncode:
            sys.exit(f"building IOR failed at {' '.join(cmd)}: {p.stderr.strip()[-400:]}")
    return os.path.join(src, "src")
