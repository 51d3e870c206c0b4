"""Kernel parameters in their canonical text: each value read once by its
type in `cbk --describe`, so one value has one spelling from the plan on.

The store, compare, trend, history and the importers see only this form
(docs/design.md, "Parameters"): `--bytes=1m`, `--bytes=1024k` and
`--bytes=1048576` are all stored as "1m", so they are the same measurement
wherever measurements are matched. The canonical text is still text cbk
takes, so a step's argv is its stored parameters as they are.

    size                 the byte count in the largest binary unit dividing
                         it (sizes.size_arg): "1m", "1536m", "8", "1000"
    string, unit bytes   a comma list of sizes (mpi's and gpucopy's
                         --sizes; tcp's --receive-batch, a list of one),
                         each as a size; the keyword stays
    int                  decimal, no sign or leading zeros: "+010" -> "10"
    real                 the shortest text of the double: "10.0" -> "10"
    bool                 "true" or "false" (cbk also takes 1/yes/on ...)
    choice-list          the choices comma-joined without spaces, in the
                         order given (cbk measures them in that order)
    choice, string, path as given

A value its type cannot read stays as given: cbk --check then refuses it
with its own message, before anything runs.
"""
from __future__ import annotations

import re

from clusterbench.results.sizes import parse_size, size_arg

# Numbers in the digits 0-9 only, as cbk's parser reads them (kernels/core/params.c), for kernel
# parameters and clusterbench's own options alike: \d, int() and float() also take other scripts'
# digits ('--seconds=٣' ran as 3 while cbk refuses it, '--np ٤' ran 4 ranks), float() '1_0' and
# blanks around
WHOLE_NUMBER = re.compile(r"[+-]?[0-9]+")
DECIMAL_NUMBER = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")
_TRUE = frozenset({"1", "true", "yes", "on"})     # cbk's parse_flag (kernels/core/params.c)
_FALSE = frozenset({"0", "false", "no", "off"})


def is_size_list(param) -> bool:
    """A string parameter in bytes is a comma list of sizes (mpi --sizes=8,1k,1m)."""
    return param.type == "string" and param.unit == "bytes"


def canonical_value(param, value: object) -> str:
    """The canonical text of one value of `param` (a catalogue.Param)."""
    text = _text(value)
    t = param.type
    if t == "size":
        n = parse_size(text)
        return text if n is None else size_arg(n)
    if is_size_list(param):
        if text == param.default:
            return text      # its keyword: "powers-of-two"
        sizes = [parse_size(x) for x in text.split(",")]
        return text if any(n is None for n in sizes) else ",".join(size_arg(n) for n in sizes)
    if t == "int":
        return str(int(text)) if WHOLE_NUMBER.fullmatch(text) else text
    if t == "real":
        if not DECIMAL_NUMBER.fullmatch(text):
            return text   # as given: cbk refuses it in one line
        x = float(text)
        return repr(x).removesuffix(".0") if abs(x) != float("inf") else text
    if t == "bool":
        low = text.strip().lower()
        return "true" if low in _TRUE else "false" if low in _FALSE else text
    if t == "choice-list":
        return ",".join(x.strip() for x in text.split(","))
    return text


def canonical(kernel, params: dict) -> dict[str, str]:
    """Every parameter of `kernel` (a catalogue.Kernel, or None for one this
    cbk does not describe: left as text) in its canonical text; a list
    (a sweep the plan expands) canonical item by item."""
    if kernel is None:
        return dict(params)
    out: dict = {}
    for name, value in params.items():
        p = kernel.param(name)
        if p is None:
            out[name] = value
        elif isinstance(value, list):
            out[name] = list(dict.fromkeys(canonical_value(p, v) for v in value))
        else:
            out[name] = canonical_value(p, value)
    return out


def kernel_of(name: str):
    """The catalogue's description of kernel `name`, or None: a kernel this
    cbk lacks (a suite step that requires it is skipped) or no cbk at all."""
    from clusterbench import catalogue
    from clusterbench.errors import BadInput

    try:
        return catalogue.load().kernels.get(name)
    except BadInput:
        return None


def canonical_for(kernel_name: str, params: dict) -> dict:
    """canonical() for a kernel known by name (stored steps, imports, filters)."""
    return canonical(kernel_of(kernel_name), params)


def defaults(kernel) -> dict[str, str]:
    """The kernel's parameter defaults, canonical: a stated default matches one left out."""
    return {p.name: canonical_value(p, p.default) for p in kernel.params if p.default is not None}


def as_run(kernel, params: dict[str, str], recorded: dict | None) -> dict[str, str]:
    """A step's stored parameters with those it ran at without naming them:
    a parameter that declares `before` (what runs made before it existed ran
    as) and that the step's run record lacks was run at that value, not at
    today's default (randio's poll: such runs slept). `recorded` is the run
    record's `parameters`; a step without one (an imported file) states what
    it ran with itself."""
    if kernel is None or recorded is None:
        return params
    older = {p.name: canonical_value(p, p.before) for p in kernel.params
             if p.before is not None and p.name not in params and p.name not in recorded}
    return {**params, **older} if older else params


def typed(param, text: str) -> object:
    """A canonical value as Python reads it: a size as int bytes, a size list
    as a list of them, an int or real as a number, a bool as a bool, a
    choice list as a list; other text (or text its type cannot read) as is."""
    t = param.type
    if t == "size":
        n = parse_size(text)
        return text if n is None else n
    if is_size_list(param):
        sizes = [parse_size(x) for x in text.split(",")]
        return text if any(n is None for n in sizes) else sizes
    if t == "int" and WHOLE_NUMBER.fullmatch(text):
        return int(text)
    if t == "real":
        return float(text) if DECIMAL_NUMBER.fullmatch(text) else text
    if t == "bool" and text in ("true", "false"):
        return text == "true"
    if t == "choice-list":
        return text.split(",")
    return text


def _text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
