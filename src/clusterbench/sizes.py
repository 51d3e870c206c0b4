"""Byte counts as people read them: exact in a label ("1 KiB", a message
size of a sweep), rounded in a description ("31.3 GiB" of memory)."""
from __future__ import annotations


def size_text(n: int) -> str:
    """Exact: the largest binary unit that divides n ("32 KiB", "1000 B")."""
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift} {unit}"
    return f"{n} B"


def rounded_size_text(n: object) -> str:
    """Rounded to one decimal in the largest binary unit n reaches ("1.5 GiB"); other values as text."""
    if not isinstance(n, (int, float)):
        return str(n)
    for unit, scale in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= scale:
            return f"{n / scale:.1f}".removesuffix(".0") + f" {unit}"
    return f"{n} B"
