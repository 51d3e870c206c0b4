"""Repeated warnings, folded: the same warning from several repetitions,
differing only in its figures, is one line with how many repetitions gave
it and each varying figure as its range:

    5 of 5 repetitions: cold read 1,378-2,864 MiB/s faster than the O_DIRECT read ... (1,021 MiB/s) ...

Warnings are stored as text per sample (older stores too), so the figures
are found in the text: a number standing alone, not part of a name such as
nfs4, vda1 or a path.
"""
from __future__ import annotations

import re

_FIGURE = r"(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?"
# 1,378 or 1378 or 12.5 or a ratio 1.62x, or a range an earlier fold wrote
# (1,378-2,864), not glued to letters, paths, dates or other digits
NUMBER = re.compile(rf"(?<![\w.,/:-]){_FIGURE}(?:-{_FIGURE})?(?!(?!x\b)[\w/:-]|\.\d|,\d)")


def _template(text: str) -> tuple[str, list[str]]:
    figures = NUMBER.findall(text)
    return NUMBER.sub("\0", text), figures


def _range_text(figures: list[str]) -> str:
    """The figures of one slot: itself when all agree, else min-max with
    thousands separators and the most decimals any of them has (a slot
    already a range counts as both its ends)."""
    if len(set(figures)) == 1:
        return figures[0]
    ends = [end for f in figures for end in re.findall(_FIGURE, f)]
    values = [float(f.replace(",", "")) for f in ends]
    decimals = max(len(f.partition(".")[2]) for f in ends)
    return f"{min(values):,.{decimals}f}-{max(values):,.{decimals}f}"


def fold(per_sample: list[list[str]], repetitions: int) -> list[str]:
    """One line per distinct warning (texts equal but for their figures), in
    first-seen order; prefixed 'k of n repetitions:' when n > 1."""
    groups: dict[str, list[list[str]]] = {}
    for warnings in per_sample:
        seen_here = set()
        for w in warnings:
            template, figures = _template(w)
            if template in seen_here:
                continue  # one sample saying it twice counts once
            seen_here.add(template)
            groups.setdefault(template, []).append(figures)
    out = []
    for template, figure_lists in groups.items():
        slots = [_range_text(list(column)) for column in zip(*figure_lists)]
        text = template
        for slot in slots:
            text = text.replace("\0", slot, 1)
        if repetitions > 1:
            text = f"{len(figure_lists)} of {repetitions} repetitions: {text}"
        out.append(text)
    return out


COUNTED = re.compile(r"(\d+) of (\d+) repetitions: (.*)", re.S)


def step_lines(rows) -> list[str]:
    """A step's warnings over its rows (step_summary.Row), each once: the
    same warning from several rows with different counts is one line naming
    each row's count ('2 of 3 repetitions (clock 1 busy), 3 of 3 (clock 2
    busy): ...'), never two lines that read as a contradiction; rows whose
    warning differs only in its figures give one line with each figure's
    range over them, as fold does for repetitions."""
    groups: dict[str, list[tuple[str, str | None]]] = {}  # template -> (row label, "k of n" or None)
    figures: dict[str, list[list[str]]] = {}
    for r in rows:
        for w in r.all_warnings():
            m = COUNTED.fullmatch(w)
            text, count = (m.group(3), f"{m.group(1)} of {m.group(2)}") if m else (w, None)
            template, found = _template(text)
            figures.setdefault(template, []).append(found)
            entries = groups.setdefault(template, [])
            label = f"{r.label} {r.mode or ''}".strip()
            if (label, count) not in entries:
                entries.append((label, count))
    out = []
    for template, entries in groups.items():
        text = template
        for slot in (_range_text(list(column)) for column in zip(*figures[template])):
            text = text.replace("\0", slot, 1)
        counts = list(dict.fromkeys(c for _, c in entries))
        if counts == [None]:
            out.append(text)
        elif len(counts) == 1:
            out.append(f"{counts[0]} repetitions: {text}")
        else:
            parts = [f"{c} ({label})" for label, c in entries if c]
            out.append(f"{parts[0].replace(' (', ' repetitions (', 1)}, {', '.join(parts[1:])}: {text}")
    return out
