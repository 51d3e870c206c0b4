"""What README.md and docs/ tell a user to type is what the tool takes: every
`clusterbench ...` command line they show parses with the command's own
options, every kernel parameter a `clusterbench run KERNEL` line gives is one
`cbk --describe` lists, every default a kernel page states is the one cbk
uses, and the commands the README says take `--width` are those that do."""
from __future__ import annotations

import json
import re
import shlex
import subprocess
from pathlib import Path

import click

from clusterbench import cli as cli_module

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
COMMANDS = "kernels|run|ior|mdtest|import|list|show|compare|report|export|history|trend|prune|env|clean|testbed"
COMMAND_LINE = re.compile(rf"(?:^|`|\$ |# |\s)(clusterbench (?:{COMMANDS})\b[^`#|]*)")
# Lines that show a pattern, not a command to type: a placeholder in capitals,
# an ellipsis, an optional part in brackets, a choice, a line continued below.
PLACEHOLDER = re.compile(r"\.\.\.|[\[<|]|\b[A-Z][A-Z_]*\b|\\$")


def documented_command_lines() -> list[tuple[str, list[str]]]:
    found = []
    for page in PAGES:
        for number, line in enumerate(page.read_text().splitlines(), 1):
            for m in COMMAND_LINE.finditer(line):
                text = m.group(1).strip()
                if PLACEHOLDER.search(text):
                    continue
                try:
                    words = shlex.split(text)[1:]
                except ValueError:
                    continue
                found.append((f"{page.relative_to(ROOT)}:{number}", words))
    return found


# What a typo or a renamed option gives; a mention in a sentence
# ("`clusterbench compare` prints ...") lacks its arguments and is no error.
REFUSALS = ("No such option", "Invalid value", "unexpected extra argument", "No such command", "no such command")


def parse_error(words: list[str]) -> str | None:
    """Parses a command line as `clusterbench` would, running nothing; the
    refusal a user would get, or None. A file the line names need not exist
    here (a host file, an output)."""
    group, words = cli_module.cli, list(words)
    parent = click.Context(group, info_name="clusterbench")
    try:
        while words and not words[0].startswith("-"):
            command = group.get_command(parent, words[0])
            if command is None:
                return f"No such command {words[0]!r}"
            if not isinstance(command, click.Group):
                command.make_context(words[0], words[1:], parent=parent)
                return None
            # a group of subcommands (testbed) has no options of its own but --help
            group, parent, words = command, click.Context(command, info_name=words[0], parent=parent), words[1:]
        return None
    except click.MissingParameter:
        return None
    except click.BadParameter as e:
        if isinstance(e.param.type, click.Path) and e.param.type.exists:
            return None
        return e.format_message()
    except click.UsageError as e:
        message = e.format_message()
        return message if any(r in message for r in REFUSALS) else None


def kernel_parameters(cbk: str) -> dict[str, set[str]]:
    described = json.loads(subprocess.run([cbk, "--describe"], capture_output=True, text=True, check=True).stdout)
    return {k["name"]: {p["name"] for p in k["parameters"]} for k in described["kernels"]}


def described_defaults(cbk: str) -> dict[str, dict[str, str]]:
    described = json.loads(subprocess.run([cbk, "--describe"], capture_output=True, text=True, check=True).stdout)
    return {k["name"]: {p["name"]: str(p["default"]) for p in k["parameters"]} for k in described["kernels"]}


def test_every_documented_command_line_parses():
    lines = documented_command_lines()
    assert len(lines) > 100, "the extraction found too few command lines to mean anything"
    refused = {where: f"{' '.join(words)}: {err}" for where, words in lines if (err := parse_error(words))}
    assert not refused, f"command lines the docs show that clusterbench refuses: {refused}"


def test_the_parse_check_sees_a_misspelt_option_and_a_bad_choice():
    assert "--frmat" in parse_error(["export", "1", "--frmat", "csv"])
    assert "'xml'" in parse_error(["export", "1", "--format", "xml"])
    assert parse_error(["run", "null", "--hostfile", "/no/such/hosts", "--np", "2"]) is None


def test_every_kernel_parameter_a_documented_run_gives_is_the_kernels(cbk_bin):
    params = kernel_parameters(cbk_bin)
    unknown = {}
    for where, words in documented_command_lines():
        if words[0] != "run" or len(words) < 2 or words[1] not in params:
            continue
        run = cli_module.COMMANDS.load("run").command
        ctx = run.make_context("run", words[1:], resilient_parsing=True)
        names = {w[2:].split("=")[0] for w in ctx.args if w.startswith("--")}
        if bad := names - params[words[1]]:
            unknown[where] = sorted(bad)
    assert not unknown, f"parameters the docs give that the kernel does not have: {unknown}"


# `--name` (default V ...), `--name=V` (default ...)
STATED_DEFAULT = re.compile(r"`--([a-z][a-z-]*)(?:=([^`]+))?` \((?:the )?default(?: ([^,;)\s]+))?")


def stated_defaults(page: Path) -> list[tuple[str, str]]:
    stated = []
    for name, with_value, in_parens in STATED_DEFAULT.findall(page.read_text()):
        value = with_value or in_parens
        if value and not value.isupper():      # `--poll=US`: a placeholder, the value follows
            stated.append((name, value))
        elif in_parens:
            stated.append((name, in_parens))
    # a page's parameter table: | `name` | default | meaning |
    table = re.search(r"^\| parameter \| default \|.*?\n((?:\|.*\n)+)", page.read_text(), re.M)
    if table:
        stated += re.findall(r"^\| `([a-z-]+)` \| ([^|\s]+) \|", table.group(1), re.M)
    return stated


def wrong_stated_defaults(cbk: str) -> tuple[int, dict[str, str]]:
    defaults = described_defaults(cbk)
    wrong, checked = {}, 0
    for page in sorted((ROOT / "docs" / "kernels").glob("*.md")):
        kernel = page.stem
        if kernel not in defaults:          # a GPU kernel this cbk was built without
            continue
        for name, value in stated_defaults(page):
            if name not in defaults[kernel]:
                continue
            checked += 1
            if value != defaults[kernel][name]:
                wrong[f"{page.name} --{name}"] = f"page says {value}, cbk says {defaults[kernel][name]}"
    return checked, wrong


def test_every_default_a_kernel_page_states_is_cbks(cbk_bin):
    checked, wrong = wrong_stated_defaults(cbk_bin)
    assert checked >= 10, f"only {checked} stated defaults found: the pattern no longer matches the pages"
    assert not wrong, f"defaults the kernel pages state that cbk does not use: {wrong}"


def test_every_default_a_gpu_kernel_page_states_is_cbks(cuda_cbk):
    checked, wrong = wrong_stated_defaults(cuda_cbk)
    assert checked >= 12, f"only {checked} stated defaults found, the GPU pages' among them expected"
    assert not wrong, f"defaults the kernel pages state that cbk does not use: {wrong}"


def test_the_default_check_reads_both_forms_and_the_table(tmp_path):
    page = tmp_path / "k.md"
    page.write_text("`--poll=US` (default 50 us) and `--bind=cores` (default) and `--passes` (default 10, at most 100)\n\n"
                    "| parameter | default | meaning |\n|---|---|---|\n| `size` | 1m | bytes |\n")
    assert stated_defaults(page) == [("poll", "50"), ("bind", "cores"), ("passes", "10"), ("size", "1m")]


def test_the_readme_names_every_command_that_takes_width():
    sentence = re.search(r"`--width N` sets it for (.*?)\.", " ".join((ROOT / "README.md").read_text().split()))
    assert sentence, "README no longer says which commands take --width"
    named = set(re.findall(r"`([a-z]+)`", sentence.group(1)))
    taking = {name for name in cli_module.COMMANDS.names()
              if any(p.name == "width" for p in cli_module.COMMANDS.load(name).command.params)}
    assert named == taking, f"README names {sorted(named)}; these take --width: {sorted(taking)}"


def test_the_readme_lists_every_shipped_suite():
    line = next(l for l in (ROOT / "README.md").read_text().splitlines() if l.startswith("- Suites shipped:"))
    named = set(re.findall(r"`([a-z0-9-]+)`", line))
    shipped = {p.stem for p in (ROOT / "src" / "clusterbench" / "suites").glob("*.toml")}
    assert named == shipped, f"README names {sorted(named)}; shipped: {sorted(shipped)}"


def test_the_command_list_names_every_format_a_command_writes():
    """`clusterbench --help` is where a user first reads what export and
    report can write: each --format choice is named there."""
    words = {"json": "JSON", "csv": "CSV", "md": "Markdown", "html": "HTML", "pdf": "PDF"}
    unnamed = {}
    summaries = dict(cli_module.COMMANDS.items())
    for name in ("export", "report"):
        fmt = next(p for p in cli_module.COMMANDS.load(name).command.params if p.name == "fmt")
        if missing := [c for c in fmt.type.choices if words[c] not in summaries[name]]:
            unnamed[name] = missing
    assert not unnamed, f"formats a command writes that `clusterbench --help` does not name: {unnamed}"
