"""What this machine's kernel can give as transparent huge pages, to judge
the buffer_huge_bytes seqio and pario record (kernels/core/buffer.c)."""
from __future__ import annotations

import re
from pathlib import Path

THP = Path("/sys/kernel/mm/transparent_hugepage")


def page_bytes() -> int:
    """The huge page size; 0 where THP is not built in."""
    try:
        return int((THP / "hpage_pmd_size").read_text())
    except (OSError, ValueError):
        return 0


def mode() -> str:
    """always, madvise or never ("never" also where THP is not built in)."""
    try:
        return re.search(r"\[(\w+)\]", (THP / "enabled").read_text()).group(1)
    except (OSError, AttributeError):
        return "never"


def free_huge_blocks() -> int:
    """Free blocks of huge-page size or more in the Normal zones (/proc/buddyinfo):
    where there are none, the kernel gives small pages however it is asked."""
    order = max(page_bytes() // 4096, 1).bit_length() - 1
    free = 0
    for line in Path("/proc/buddyinfo").read_text().splitlines():
        parts = line.split()
        if "Normal" in parts:
            counts = [int(x) for x in parts[parts.index("Normal") + 1:]]
            free += sum(c << (o - order) for o, c in enumerate(counts) if o >= order)
    return free


def check_record(rec: dict, buffer_bytes: int, asked: bool = True) -> None:
    """huge_pages as asked; buffer_huge_bytes whole huge pages within the
    buffer rounded up to them, none when not asked or THP is off (the caller
    holds machine_settings_steady, so THP's mode is the run's). Whether the
    kernel gave any is judged by gives_some, over runs, not per record: a
    huge page the kernel could not find at the fault is its answer, not the
    tool's (thp_fault_fallback in /proc/vmstat counts those)."""
    assert rec["huge_pages"] is asked, rec
    got, page = rec["buffer_huge_bytes"], page_bytes()
    if not asked or page == 0 or mode() == "never":
        assert got == 0, rec
        return
    rounded = -(-buffer_bytes // page) * page
    assert got % page == 0 and 0 <= got <= rounded, (got, page, rounded)


def gives_some(run, first: list[dict] | None = None, attempts: int = 3) -> None:
    """run() returns records asked for huge pages (`first`: those of a run
    already made, the first attempt); on a machine with THP on and free huge
    blocks every record of one of `attempts` runs has some. A buffer laid out
    wrong (unaligned, touched before the advice) never gets one, so such a
    defect fails every attempt; a fault the kernel answered with small pages
    under load does not repeat."""
    seen = []
    for i in range(attempts):
        if page_bytes() == 0 or mode() == "never" or free_huge_blocks() < 64:
            return
        recs = first if i == 0 and first is not None else run()
        assert recs, "no record to judge"
        if all(r["buffer_huge_bytes"] > 0 for r in recs):
            return
        seen.append([r["buffer_huge_bytes"] for r in recs])
    raise AssertionError(f"THP {mode()}, {free_huge_blocks()} free huge blocks, yet no huge page in "
                         f"{attempts} runs: buffer_huge_bytes {seen}")
