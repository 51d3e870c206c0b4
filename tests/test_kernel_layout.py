"""cbk's layout shows its architecture (docs/design.md, "cbk (kernels/)"):
a kernel with parts is a folder named after it whose entry file is the one
registered, its parts include only each other and core, and threads start
one way (core/threads.h, or the OpenMP team), never by a kernel's own
pthread_create. Read from the sources, so a file put in the wrong place
fails here rather than in review."""
from __future__ import annotations

import re
from pathlib import Path

KERNELS = Path(__file__).resolve().parent.parent / "kernels"
CORE = KERNELS / "core"
FAMILIES = [d for d in KERNELS.iterdir() if d.is_dir() and d != CORE]
KERNEL_FOLDERS = [k for f in FAMILIES for k in f.iterdir() if k.is_dir()]
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
THREAD_START = re.compile(r"\bpthread_create\s*\(")


def test_the_kernels_with_parts_are_folders():
    # the three #34 moved; a folder lost in a later move fails here, not silently
    names = {f"{k.parent.name}/{k.name}" for k in KERNEL_FOLDERS}
    assert {"mpi/pario", "io/randio", "compute/himeno"} <= names


def test_a_kernel_folder_holds_its_registered_entry_file_of_the_same_name():
    registry = (KERNELS / "registry.c").read_text()
    for folder in KERNEL_FOLDERS:
        entry = folder / f"{folder.name}.c"
        assert entry.is_file(), f"{folder} has no {entry.name}"
        symbol = f"cbk_kernel_{folder.name}"
        assert f"const struct cbk_kernel {symbol} =" in entry.read_text(), entry
        assert f"&{symbol}," in registry, f"{symbol} is not in kernels/registry.c"


def test_a_kernel_folder_includes_only_its_own_files_and_core():
    for folder in KERNEL_FOLDERS:
        for source in sorted(folder.glob("*.[ch]")) + sorted(folder.glob("*.cu")):
            for name in INCLUDE.findall(source.read_text()):
                target = (folder / name).resolve()
                assert target.is_file(), f"{source.name} includes {name}, which is not there"
                assert target.parent in (folder.resolve(), CORE.resolve()), \
                    f"{source.relative_to(KERNELS)} includes {name}: a kernel includes only its folder and core"


def test_no_kernel_starts_threads_its_own_way():
    starters = [str(p.relative_to(KERNELS)) for p in KERNELS.rglob("*.c")
                if CORE not in p.parents and THREAD_START.search(p.read_text())]
    assert starters == [], "start threads with core/threads.h's cbk_threads_start (or the OpenMP team)"
