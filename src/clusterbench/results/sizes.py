"""Byte counts: read in cbk's size syntax, written as a parameter ("1m"),
exact in a label ("1 KiB", a message size of a sweep), rounded in a
description ("31.3 GiB" of memory). The one Python reader and writer of
sizes; cbk's C parser (kernels/core/params.c, cbk_parse_size) reads the
same syntax, and tests/test_typed_params.py holds the two to it."""
from __future__ import annotations

import re

_SHIFT = {"": 0, "k": 10, "m": 20, "g": 30, "t": 40}
_SIZE = re.compile(r"(\d+(?:\.\d{1,9})?)([kmgt]?)(i?b)?")


def parse_size(text: object) -> int | None:
    """cbk's size syntax (binary suffixes k, m, g, t, optionally "iB" or "B";
    decimals that come to whole bytes, such as 1.5g) for plain numbers too;
    None if not a size."""
    from fractions import Fraction   # here: a run that reads no size never imports it (#24)

    m = _SIZE.fullmatch(str(text).strip().lower())
    if not m:
        return None
    size = Fraction(m.group(1)) * (1 << _SHIFT[m.group(2)])
    return int(size) if size.denominator == 1 else None


def size_arg(n: int) -> str:
    """A byte count as a parameter's canonical text: the largest binary unit
    that divides it exactly, lower case ("1m", "1536m", "8", "1000").
    One text per value, so 1m, 1024k and 1048576 are stored alike."""
    for suffix in ("t", "g", "m", "k"):
        shift = _SHIFT[suffix]
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift}{suffix}"
    return str(n)


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
