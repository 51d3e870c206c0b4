"""What a store column can hold, checked before a run starts: PostgreSQL
refuses a string longer than its column or holding a NUL character
(DataError), where SQLite would have stored it. A run must not measure for an
hour and then fail to store its name, so such input is bad input up front."""
from __future__ import annotations

import unicodedata
from typing import Iterable

from clusterbench.errors import BadInput
from clusterbench.store import text_limits


def check_text(what: str, value: str | None, limit: int | None = None) -> None:
    """One line and exit status 2 for a value the column (of `limit` characters) cannot store."""
    if value is None:
        return
    if "\x00" in value:
        raise BadInput(f"{what} contains a NUL character, which a store cannot hold")
    if limit and len(value) > limit:
        raise BadInput(f"{what} is {len(value)} characters long; the store holds at most {limit}")


# Unicode categories no terminal draws: controls (shown only as escapes), format characters (a zero-width
# space, a byte order mark), surrogates and unassigned code points
_UNSEEN_CATEGORIES = {"Cc", "Cf", "Cs", "Cn"}


def _shows(character: str) -> bool:
    return not character.isspace() and unicodedata.category(character) not in _UNSEEN_CATEGORIES


def check_printable(what: str, value: str | None, kind: str) -> None:
    """A name given to be stored (a label, a host) is printable text: a tab, a
    newline or an escape sequence in it was stored, and shown without it."""
    from clusterbench.output.render_text import first_control

    if value is not None and (where := first_control(value)):
        raise BadInput(f"{what} {value!r}: {where}, which does not print; {kind} is printable text only")


def check_host(host: str | None) -> None:
    """import --host: one the store can hold, and that shows (a blank one was
    stored as the run's host: 'on ' in show, a blank cell in list)."""
    check_text("--host", host, text_limits.HOST)
    if host is not None and not any(map(_shows, host)):
        raise BadInput(f"--host {host!r}: a host name needs a character that shows; leave --host out for "
                       "the file's own (else 'unknown')")
    check_printable("--host", host, "a host name")


def check_label(label: str | None) -> None:
    """A label the store can hold and the commands can name: one of digits
    only would be read as a run's id by show, compare, report and prune."""
    from clusterbench.store.run_ref import run_id_of

    check_text("--label", label, text_limits.RUN_LABEL)
    if label is not None and not any(map(_shows, label)):
        # stored as given, it was a blank cell in list and a run that `show ''` named
        raise BadInput(f"--label {label!r}: a label needs a character that shows; leave --label out for none")
    check_printable("--label", label, "a label")
    if label is not None and run_id_of(label) is not None:
        raise BadInput(f"--label {label}: a label of digits only cannot be told from run {int(label)}'s id"
                       f" (show, compare, report and prune take either): add a word, e.g. --label n{label}")


def check_run(label: str | None, suite: str | None, step_names: Iterable[tuple[str | None, str, dict]]) -> None:
    """The label, suite name, and each step's name, kernel and parameters."""
    check_label(label)
    check_text("the suite's name", suite, text_limits.RUN_SUITE)
    for i, (name, kernel, params) in enumerate(step_names, 1):
        check_text(f"step {i}'s name", name, text_limits.STEP_NAME)
        check_text(f"step {i}'s kernel", kernel, text_limits.STEP_KERNEL)
        for key, value in params.items():
            check_text(f"step {i}'s parameter {key}", f"{key}={value}")


def step_name(command_line: str) -> str:
    """A step named after a long command line: cut to what the column holds
    (the run's full command line is stored too)."""
    limit = text_limits.STEP_NAME
    return command_line if len(command_line) <= limit else command_line[:limit - 1] + "…"
