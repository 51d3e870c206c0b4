"""Option tokens as IOR 4 and mdtest take them (their src/option.c), pure Python.

Both tools share one parser; this module reads a command line the same way:
`-b 4m`, `-b4m`, `-b=4m`, clustered flags `-wrC`, a value option at the end
of a cluster taking the next word (`-Fb 4m`), long options `--name`,
`--name=value` or `--name value`, and a flag given a count (`-v=2`). Like
IOR, a '-' inside a cluster is skipped (`-z-k` is `-z -k`). Unlike IOR, the
letters of a glued value are not also read as flags: IOR takes `-b4m` as
`-b 4m` *and* `-m` (its loop goes on over the value's letters), a parser
bug that `-t1k` (`-k` too) shows; here a glued value ends the token, as
getopt does (docs/kernels/pario.md, "Deliberate differences").

`tokens()` never raises on an unknown option: it returns every problem of
the line, so a refusal can name them all at once. `number()` reads a value
as both tools read their numbers and sizes.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

# IOR's string_to_bytes (src/option.c), which IOR and mdtest use for every
# number and size option (-b, -t, -s, -i, -n, -I, -w, --random-seed, ...):
# sscanf(text, " %lld %c "), a whole number then the first non-blank
# character after it, a binary multiple if it is k, m, g, t or p (either
# case); nothing after that character is read. So "1gb", "4MB" and "1MiB"
# are 1 GiB, 4 MiB and 1 MiB, and IOR prints them so; but "1.5g" is 1
# ('.' is no multiple) and "4k5" is 4096. The multiple followed by "b" or
# "ib" (or "b" alone) reads as written; anything else after the number is
# a value IOR misreads without a word, refused here.
MULTIPLE_BITS = {"k": 10, "m": 20, "g": 30, "t": 40, "p": 50}
_AS_WRITTEN = re.compile(r"\s*([+-]?\d+)\s*(?:([kmgtp])(i?b)?|b)?\s*", re.I)
_AS_IOR_READS = re.compile(r"\s*([+-]?\d+)\s*(\S?)(.*)", re.S)
LARGEST = 2**63 - 1   # IOR's int64_t


@dataclass(frozen=True)
class Number:
    value: int | None      # as written; None where it does not read as written
    problem: str = ""      # why not, one clause ("" when it reads)
    plain: bool = True     # digits with at most the multiple's letter, as IOR's help writes sizes (4k, 1g)


def number(text: str, tool: str = "IOR") -> Number:
    """text as `tool` (IOR or mdtest) reads it, or why not."""
    m = _AS_WRITTEN.fullmatch(text or "")
    if m:
        value = int(m[1]) << MULTIPLE_BITS.get((m[2] or "").lower(), 0)
        if abs(value) > LARGEST:
            return Number(None, "larger than IOR's 64-bit numbers")
        return Number(value, plain=re.fullmatch(r"[+-]?\d+[kmgtp]?", text, re.I) is not None)
    r = _AS_IOR_READS.fullmatch(text or "")
    if not r:
        return Number(None, "not a number")
    read = int(r[1]) << MULTIPLE_BITS.get(r[2].lower(), 0)
    rest = r[3] if r[2].lower() in MULTIPLE_BITS else r[2] + r[3]
    return Number(None, f"{tool} would read {read} and ignore '{rest.strip()}'; give a whole number with "
                        f"an optional k, m, g, t or p (binary multiples)")


@dataclass(frozen=True)
class Grammar:
    """Which short letters and long names take a value and which are flags."""
    short_values: frozenset[str]
    short_flags: frozenset[str]
    long_values: frozenset[str] = frozenset()
    long_flags: frozenset[str] = frozenset()
    # "--dummy.": the options of a module whose options are not listed one by one (IOR's
    # backends register theirs as --<backend>.<name>); taken with "=value" or the next word
    long_prefixes: frozenset[str] = frozenset()


@dataclass
class Parsed:
    options: list[tuple[str, str | None]] = field(default_factory=list)  # ("-b", "4m"), ("-F", None)
    problems: list[str] = field(default_factory=list)                   # one line each


def tokens(argv: list[str], g: Grammar) -> Parsed:
    out = Parsed()
    i = 0
    while i < len(argv):
        word = argv[i]
        i += 1
        if not word.startswith("-") or word == "-":
            out.problems.append(f"'{word}': unexpected word (options start with -)")
            continue
        if word.startswith("--"):
            name, eq, value = word[2:].partition("=")
            if name in g.long_flags:
                out.options.append(("--" + name, value if eq else None))
            elif name in g.long_values:
                if not eq:
                    if i >= len(argv):
                        out.problems.append(f"--{name}: needs a value")
                        continue
                    value = argv[i]
                    i += 1
                out.options.append(("--" + name, value))
            elif any(name.lower().startswith(p) for p in g.long_prefixes):
                if not eq and i < len(argv) and not argv[i].startswith("-"):
                    value, eq = argv[i], "="
                    i += 1
                out.options.append(("--" + name, value if eq else None))
            else:
                out.problems.append(f"--{name}: unknown option")
            continue
        body, eq, eq_value = word[1:].partition("=")
        for pos, letter in enumerate(body):
            if letter == "-":
                continue  # IOR's parser skips it: -z-k is -z -k
            opt = "-" + letter
            if letter in g.short_flags:
                out.options.append((opt, eq_value if eq else None))
            elif letter in g.short_values:
                if eq and pos == len(body) - 1:
                    value = eq_value
                elif pos < len(body) - 1:
                    value = body[pos + 1:] + (eq + eq_value if eq else "")
                elif i < len(argv):
                    value = argv[i]
                    i += 1
                else:
                    out.problems.append(f"{opt}: needs a value")
                    break
                if value == "":
                    out.problems.append(f"{opt}: needs a value")
                else:
                    out.options.append((opt, value))
                break
            else:
                out.problems.append(f"{opt}: unknown option")
    return out
