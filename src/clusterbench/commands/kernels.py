from __future__ import annotations

import click

from clusterbench.commands.options import width_option


@click.command("kernels")
@width_option
@click.argument("name", required=False)
def command(name):
    """List the kernels (from cbk --describe), or one kernel's parameters."""
    from clusterbench.output.console import stdout_console
    from clusterbench.output.whole_columns import print_whole
    from rich.table import Table

    from clusterbench import catalogue
    from clusterbench.environment.mpi_consistency import library_text

    cat = catalogue.load()
    console = stdout_console()
    if not name:
        t = Table("kernel", "parallel", "summary", title=f"cbk {cat.version}, MPI: {library_text(cat.mpi_library) or 'not built in'}")
        for k in cat.kernels.values():
            t.add_row(k.name, "MPI" if k.parallel else "", k.summary)
        if cat.left_out:   # a kernel missing from the list without a word looked like one that does not exist
            t.caption = "not in this cbk: " + "; ".join(
                f"{', '.join(names)} ({why})" for why, names in _by_reason(cat.left_out).items())
            t.caption_justify = "left"
        print_whole(console, t)   # a kernel's name, never cut to 'manyf…' on a narrow terminal
        return
    k = cat.kernel(name)
    t = Table("parameter", "type", "default", "unit", "allowed", "help", title=f"{k.name}: {k.summary}")
    for p in k.params:
        allowed = ", ".join(p.choices) if p.choices else (
            f"{p.min or ''}..{p.max or ''}" if (p.min or p.max) else "")
        t.add_row(f"--{p.name}", p.type, p.default or "(required)", p.unit or "", allowed, p.help)
    t.columns[-1].overflow = "fold"   # the help's long words (a|b|c lists) may break; names and values never
    print_whole(console, t)   # a parameter or its default cut to '--blo…', 'ping…' could not be typed back


def _by_reason(left_out: dict[str, str]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for name, why in left_out.items():
        out.setdefault(why, []).append(name)
    return out
