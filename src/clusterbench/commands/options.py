"""Options several subcommands share."""
from __future__ import annotations

import datetime as dt
import math

import click

from clusterbench.launch import MAX_RANKS
from clusterbench.results.params import DECIMAL_NUMBER, WHOLE_NUMBER

# a UTC date on the command line (list, history, trend, prune)
DAY = click.DateTime(formats=["%Y-%m-%d", "%Y-%m-%d %H:%M", "%Y-%m"])


def utc(d: dt.datetime | None) -> dt.datetime | None:
    """A date given on the command line, read as UTC (the store's times are UTC)."""
    return d.replace(tzinfo=dt.timezone.utc) if d else None


class PathParam(click.Path):
    """click.Path, with a NUL byte refused as bad input (os.stat raises
    ValueError on one, which click lets through as a traceback)."""

    def convert(self, value, param, ctx):
        if isinstance(value, str) and "\x00" in value:
            self.fail(f"{value!r} holds a NUL byte, which no file name can", param, ctx)
        return super().convert(value, param, ctx)


def _host_file(_ctx, param, value: str | None) -> str | None:
    """A host file is read whole, and by the MPI launcher too: a FIFO would
    block both, a device never end; its hosts are names (UTF-8 text)."""
    import os

    if value is None:
        return value
    if not os.path.isfile(value):
        raise click.BadParameter(f"{value!r} is not a regular file", param=param)
    try:
        with open(value, "rb") as f:
            f.read(1 << 20).decode("utf-8")
    except UnicodeDecodeError as e:
        raise click.BadParameter(f"{value!r} is not UTF-8 text (byte offset {e.start}): host names are text",
                                 param=param) from None
    except OSError as e:
        raise click.BadParameter(f"{value!r}: {e.strerror}", param=param) from None
    return value


hostfile_option = click.option("--hostfile", type=PathParam(exists=True, dir_okay=False), callback=_host_file,
                               help="Host file for the MPI launcher: one host a line, as 'host', 'host:slots' "
                                    "(MPICH) or 'host slots=N' (Open MPI); each MPI is given it in its own form.")


db_option = click.option("--db", "db_url", default=None, metavar="URL",
                         help="Results store: an SQLAlchemy URL or a file path "
                              "(default: $CLUSTERBENCH_DB, else results.db in the user's data directory).")


memory_limit_option = click.option(
    "--memory-limit", metavar="SIZE",
    help="Run the kernel's processes in a memory cgroup capped at SIZE (e.g. 1g) on every host, so their page "
         "cache cannot exceed it (as booting with mem= did); below each host's RAM, where it caps something. "
         "Needs root or delegation.")
setting_option = click.option(
    "--setting", "settings", multiple=True, metavar="NAME=VALUE",
    help="Change a system setting for this run and restore it after: a sysctl (vm.dirty_ratio=5), tuned=PROFILE, "
         "governor=, thp=, thp-defrag=, io-scheduler=, read-ahead= (of --dir's disk), "
         "cpu-latency=US (0: CPUs kept out of idle). Needs root. Repeatable.")


def parse_link_speed(text: str | None) -> float | None:
    """'1g', '10Gbit', '100Mbps', '25' (a bare number: Gbit/s) -> bit/s; None for None.
    A rate in bytes (1GB, 1GB/s) is refused, not read as bits."""
    import re

    from clusterbench.errors import BadInput

    if text is None:
        return None
    # "GB", "GB/s", "GBps" and "gbyte" are bytes: read as bits they were 8 times too slow a link
    if "byte" in text.lower() or re.search(r"B(?![iI][tT])", text):
        raise BadInput(f"--link-speed {text}: a link's rate is in bits per second (a capital B means bytes); "
                       f"give Gbit/s, e.g. 8g for 1 GB/s")
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]*)?(?:e[0-9]+)?)\s*([kmgt]?)(?:bit(?:/s)?|b(?:ps|it/s)?)?\s*", text.lower())
    if not m or float(m.group(1)) <= 0:
        raise BadInput(f"--link-speed {text}: give a rate such as 1g, 10gbit, 100m, or a number of Gbit/s (25)")
    if not m.group(2):
        # a bare number is Gbit/s, as the tcp kernel's own --link-speed (run passes it on)
        if float(m.group(1)) > 100_000:
            raise BadInput(f"--link-speed {text}: a bare number is Gbit/s; give a unit (25g, 100m)")
        return float(m.group(1)) * 1e9
    return float(m.group(1)) * {"k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12}[m.group(2)]


link_speed_option = click.option(
    "--link-speed", "link_speed", default=None, metavar="RATE", callback=lambda _c, _p, v: parse_link_speed(v),
    help="The network link's nominal rate (1g, 10g, 100m; a bare number is Gbit/s) when the environment does not know it or "
         "a shaper lowers it: network figures and reads over network file systems are checked against it.")


def run_conditions(memory_limit: str | None, settings: tuple[str, ...]):
    """--memory-limit and --setting as one Conditions (clusterbench.conditions), or None."""
    from clusterbench.conditions import spec

    c = spec.Conditions(spec.parse_memory_limit(memory_limit), spec.parse_settings(settings))
    return c or None


class Digits(click.IntRange):
    """A whole number within the bounds, written in the digits 0-9; its
    range said with its unit ("1<=x<=2147483647 (ranks)"), in --help and in
    a refusal alike."""

    def __init__(self, min=None, max=None, unit: str | None = None, **kwargs):
        super().__init__(min, max, **kwargs)
        self.unit = unit

    def _describe_range(self) -> str:
        if self.min is None and self.max is None:   # bounds checked where the value is used (testbed's --hosts)
            return f"a number of {self.unit}" if self.unit else "a whole number"
        return f"{super()._describe_range()} ({self.unit})" if self.unit else super()._describe_range()

    def convert(self, value, param, ctx):
        if isinstance(value, str) and not WHOLE_NUMBER.fullmatch(value):
            self.fail(f"{value!r} is not a whole number written in the digits 0-9; give {self._describe_range()}",
                      param, ctx)
        return super().convert(value, param, ctx)


RANK_COUNT = Digits(1, MAX_RANKS, unit="ranks")   # --np, --ppn


class ByteSize(click.ParamType):
    """A byte count as cbk writes sizes (16m, 1g, 4096) within the bounds,
    said with its unit as Digits says its range: "0 is not in the range
    1<=x<=1g (bytes)" (0 was "not a size": it is one, out of range)."""
    name = "size"
    unit = "bytes"

    def __init__(self, min: int, max: int):
        self.min, self.max = min, max

    def range_text(self) -> str:
        from clusterbench.results.sizes import size_arg

        return f"{size_arg(self.min)}<=x<={size_arg(self.max)} ({self.unit})"

    def convert(self, value, param, ctx):
        from clusterbench.results.sizes import parse_size

        n = value if isinstance(value, int) else parse_size(value)
        if n is None and str(value).strip().startswith("-") and parse_size(str(value).strip()[1:]) is not None:
            n = -1   # a negative size is a size, out of range
        if n is None:
            self.fail(f"{value!r} is not a size (such as 64m or 1g); give {self.range_text()}", param, ctx)
        if not self.min <= n <= self.max:
            self.fail(f"{value} is not in the range {self.range_text()}", param, ctx)
        return n


# what float() reads as no finite number: said as such ("nan is not a finite number"), not as no decimal
NOT_FINITE = {"nan", "+nan", "-nan", "inf", "+inf", "-inf", "infinity", "+infinity", "-infinity"}


class Finite(click.FloatRange):
    """A number within the bounds, and a number: click's FloatRange lets nan
    through every bound (each comparison with it is false) and inf through an
    open one, so --threshold nan never failed a --fail-if gate, --ci-target
    nan was never reached, and --step-timeout nan timed every step out.
    Written in decimal digits 0-9, as Digits is."""

    def __init__(self, min=None, max=None, unit: str | None = None, **kwargs):
        super().__init__(min, max, **kwargs)
        self.unit = unit   # said after the range: "1<=x<=31536000 (seconds)", not a bare number

    def _describe_range(self) -> str:
        return f"{super()._describe_range()} ({self.unit})" if self.unit else super()._describe_range()

    def convert(self, value, param, ctx):
        # before click's own reading: "'abc' is not a valid float range" named no number and no unit
        if isinstance(value, str) and not DECIMAL_NUMBER.fullmatch(value) and value.strip().lower() not in NOT_FINITE:
            self.fail(f"{value!r} is not a decimal number written in the digits 0-9; give {self._describe_range()}",
                      param, ctx)
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value} is not a finite number", param, ctx)
        if isinstance(value, str) and not DECIMAL_NUMBER.fullmatch(value):
            self.fail(f"{value!r} is not a decimal number written in the digits 0-9", param, ctx)
        return number


def _keep_width(ctx, _param, value):
    if value:   # called without --width too: rich (under clusterbench.output.console) only when given
        from clusterbench.output.console import WIDTH_KEY

        ctx.meta[WIDTH_KEY] = value
    return value


# 40: output/console.py MIN_WIDTH, the narrowest a table is drawn (not imported here: it loads rich)
width_option = click.option("--width", type=Digits(40, 1000, unit="characters"), default=None, metavar="COLUMNS",
                            expose_value=False, callback=_keep_width,
                            help="Width of the tables in characters (default: the terminal's; 160 when piped, "
                                 "unless $COLUMNS says).")


def tool_line_options(tool: str, quiet_help: str):
    """The options of a command that runs another tool's command line (ior,
    mdtest): ours come before the tool's words, which end up in ARGS."""
    from clusterbench.launch import help_text as launcher_help

    def decorate(f):
        for option in reversed([
                click.option("--np", "ranks", type=RANK_COUNT, default=None,
                             help="MPI ranks (or give them with a leading `mpiexec -n N`)."),
                click.option("--ppn", type=RANK_COUNT, default=None, help="Ranks per node."),
                hostfile_option,
                click.option("--launcher", help=launcher_help()),
                click.option("--oversubscribe", is_flag=True,
                             help="Allow more ranks than cores (Open MPI needs it said), and more than 16 per "
                                  "hardware thread on this host alone (refused otherwise)."),
                click.option("--label", help="Name of the configuration measured."),
                memory_limit_option, setting_option,
                click.option("--quiet", is_flag=True, help=quiet_help),
                db_option, width_option,
                click.argument("args", nargs=-1, type=click.UNPROCESSED, metavar=f"[{tool.upper()}_ARGS]...")]):
            f = option(f)
        return f
    return decorate
