"""mdtest's warnings of operations on items that failed (mdtest 4.0 and
later: IOR 3.3 and earlier abort on the first one, leaving no SUMMARY).

mdtest 4.0 warns and goes on, counting the failed call as done:

    WARNING: unable to stat directory /x/mdtest_tree.0/dir.mdtest.0.526

so the rate of a phase with such lines is partly of calls that failed at
once (ENOENT), not of operations done. The stonewall timer makes them in
every directory phase (mdtest.c stops directory creation at the limit and,
unlike file creation, does not go on to the others' count), and creation
then counts every item asked for: `-n 600 -W 1` on 2 ranks printed 1200
directories created in 1.022 s, of which 438 were never made. Only item paths (dir.*, file.*) count: the
test and tree directories are not a phase's items.
"""
from __future__ import annotations

import re
from collections import Counter

WARNING = re.compile(r"^WARNING: unable to (create|stat|rename|remove|read|write|mknode) (directory|file) "
                     r"\S*?([^/\s]+)$", re.M)
UNLINK = re.compile(r"^WARNING: \[RANK \d+\]: unlink\(\) of file \"\S*?([^/\s\"]+)\" failed", re.M)
PHASE = {("create", "directory"): "dir-create", ("stat", "directory"): "dir-stat",
         ("rename", "directory"): "dir-rename", ("remove", "directory"): "dir-remove",
         ("create", "file"): "file-create", ("mknode", "file"): "file-create", ("write", "file"): "file-create",
         ("stat", "file"): "file-stat", ("read", "file"): "file-read"}


def failed_per_phase(text: str) -> Counter:
    """phase -> how many of its items mdtest warned it failed on."""
    failed: Counter = Counter()
    for m in WARNING.finditer(text):
        if m.group(3).startswith(("dir.", "file.")):
            failed[PHASE[m.group(1), m.group(2)]] += 1
    for m in UNLINK.finditer(text):
        if m.group(1).startswith("file."):
            failed["file-remove"] += 1
    return failed


def left_out(failed: Counter, stonewall_stopped: bool) -> list[str]:
    """The phases whose rate is not of operations done: those with failed
    items, and, where the stonewall timer stopped a run whose directory
    items failed, every directory phase (its creation counted items it
    never made)."""
    phases = set(failed)
    if stonewall_stopped and any(p.startswith("dir-") for p in failed):
        phases |= {"dir-create", "dir-stat", "dir-rename", "dir-remove"}
    return sorted(phases)


def note(failed: Counter, phases: list[str]) -> str:
    counts = ", ".join(f"{p} {n}" for p, n in sorted(failed.items()))
    unfailed = [p for p in phases if p not in failed]
    stonewall = (f" ({', '.join(unfailed)}: the stonewall timer stopped directory creation, and mdtest counts "
                 f"every directory asked for as made)") if unfailed else ""
    return (f"mdtest warned of {sum(failed.values())} failed item operation(s) ({counts}) and counts a failed "
            f"call as done: the rates of {', '.join(phases)} are not of operations done, left out{stonewall}")
