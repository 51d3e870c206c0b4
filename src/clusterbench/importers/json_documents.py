"""The JSON documents of a file that holds more than one: a job's log where
Slurm or MPI wrote warnings before or after the tool's JSON ("srun: error:
...", Open MPI's help messages), fio's --output-format=json,normal (the
JSON, then the same results as text), or `iperf3 -J >> log` run twice.
Each document starts on a line of its own with "{"; the lines around them
are not the tool's, and the importer's note says they were skipped."""
from __future__ import annotations

import json
import re

from clusterbench.importers import Unreadable

OPENING = re.compile(r"^[ \t]*\{", re.M)


def documents(text: str) -> tuple[list[dict], bool]:
    """(every document of the file, whether lines of other output were
    skipped); Unreadable (one line) for a document that does not parse,
    cut short or with other output inside it."""
    decoder = json.JSONDecoder()
    docs, skipped, pos = [], False, 0
    while True:
        m = OPENING.search(text, pos)
        if m is None:
            skipped = skipped or bool(text[pos:].strip())
            break
        skipped = skipped or bool(text[pos:m.start()].strip())
        start = m.end() - 1
        try:
            doc, pos = decoder.raw_decode(text, start)
        except json.JSONDecodeError as e:
            where = f"line {e.lineno} column {e.colno}"
            # json's "Unterminated string starting at" and "Invalid control character at" end in their "at"
            raise Unreadable(f"not complete JSON: {e.msg.removesuffix(' at')} at {where}"
                             + (f" (document {len(docs) + 1} of the file)" if docs else "")) from None
        if not isinstance(doc, dict):
            raise Unreadable("the JSON document is not an object")
        docs.append(doc)
    if not docs:
        raise Unreadable("no JSON object in the file")
    return docs, skipped
