from __future__ import annotations

import click

from clusterbench.commands.options import width_option


@click.command("kernels")
@width_option
@click.argument("name", required=False)
def command(name):
    """List the kernels (from cbk --describe), or one kernel's parameters."""
    from clusterbench.output.console import stdout_console
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
        console.print(t)
        return
    k = cat.kernel(name)
    t = Table("parameter", "type", "default", "unit", "allowed", "help", title=f"{k.name}: {k.summary}")
    for p in k.params:
        allowed = ", ".join(p.choices) if p.choices else (
            f"{p.min or ''}..{p.max or ''}" if (p.min or p.max) else "")
        t.add_row(f"--{p.name}", p.type, p.default or "(required)", p.unit or "", allowed, p.help)
    console.print(t)


def _by_reason(left_out: dict[str, str]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for name, why in left_out.items():
        out.setdefault(why, []).append(name)
    return out
