"""The options `run` takes past its own (a kernel's --name=value, a suite's
--PART.NAME=VALUE, run cluster's --threshold 10%), read one way both when
a run starts and when the command line the store keeps with it is read
back (a cluster run's thresholds, --one-at-a-time), so the report judges
a run as the run itself did."""
from __future__ import annotations

import shlex

from clusterbench.errors import BadInput


class BareFlag(str):
    """"true" as a bare --flag gave it: a parameter that needs a value can
    say so ("--file-size needs a value") instead of "true is not a size"."""


def parse_extra(args: list[str], strict: bool = True) -> dict[str, str]:
    """--name=value, --name value, and a bare --flag (true). A word that is
    not an option, or an option given twice, is refused, or (strict=False)
    passed over (the last one kept)."""
    out: dict[str, str] = {}
    i = 0
    while i < len(args):
        a = args[i]
        if not a.startswith("--") or len(a) == 2:
            if strict:
                raise BadInput(f"unexpected argument '{a}' (kernel parameters are --name=value)")
            i += 1
            continue
        if "=" in a:
            k, v = a[2:].split("=", 1)
        elif i + 1 < len(args) and not args[i + 1].startswith("--"):
            k, v = a[2:], args[i + 1]
            i += 1
        else:
            k, v = a[2:], BareFlag("true")
        if strict and k in out:
            # the last one winning in silence ran what the user did not read last
            raise BadInput(f"--{k} given twice ({out[k]}, then {v}): give it once")
        out[k] = v
        i += 1
    return out


def stored_options(command: str | None) -> dict[str, str]:
    """The options of a stored command line ("clusterbench run cluster
    --threshold 20% ..."), every form parse_extra reads; {} when it does
    not split (an unbalanced quote)."""
    try:
        words = shlex.split(command or "")
    except ValueError:
        return {}
    return parse_extra(words, strict=False)
