"""A count with its noun in the number it agrees with: "1 difference",
"3 differences", never "1 differences" nor "3 difference(s)". Every
human-facing count of the reports and commands goes through counted()
(or agreeing(), where the count is not printed before the noun)."""
from __future__ import annotations


def agreeing(n: int, noun: str, plural: str | None = None) -> str:
    """The noun in the number n asks for: 'outlier' for 1, 'outliers' for 0 or 2."""
    return noun if n == 1 else plural or noun + "s"


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """'1 rank', '2 ranks'; plural for a noun that is not noun + 's' ('1 status', '3 statuses')."""
    return f"{n:,} {agreeing(n, noun, plural)}"
