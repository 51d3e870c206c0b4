"""A JSON reader for the malformed JSON real tools wrote (IOR 3.x's summary
above all): lines of other output inside the document (an error message,
MPI's abort), missing commas between members, keys written twice, and
files cut short. It repairs what it can and lists each repair, so the
importer can say what it took on trust; what it cannot repair is an error.
"""
from __future__ import annotations

import json
import re

MAX_REPAIRS = 200
JSON_LINE = re.compile(r'^\s*([{}\[\],"\d\-]|true|false|null|$)')


class Repairs(list):
    def add(self, what: str) -> None:
        if what not in self:
            self.append(what)


def loads(text: str) -> tuple[object, list[str]]:
    """(document, repairs made); ValueError with one line when it cannot be read."""
    repairs = Repairs()
    start = text.find("{")
    if start < 0:
        raise ValueError("no JSON object in the file")
    kept = []
    for line in text[start:].splitlines():
        if JSON_LINE.match(line):
            kept.append(line)
        else:
            repairs.add("lines of other output inside the JSON were skipped")
    body = "\n".join(kept)
    for _ in range(MAX_REPAIRS):
        try:
            doc, end = json.JSONDecoder(object_pairs_hook=lambda pairs: _pairs(pairs, repairs)).raw_decode(body)
            if body[end:].strip():
                repairs.add("text after the JSON document was ignored")
            return doc, list(repairs)
        except json.JSONDecodeError as e:
            body = _repair(body, e, repairs)
    raise ValueError("the JSON is damaged beyond repair")


def _pairs(pairs: list[tuple[str, object]], repairs: Repairs) -> dict:
    out: dict = {}
    for k, v in pairs:
        if k in out:
            differs = f" with different values ({json.dumps(out[k])[:40]}, {json.dumps(v)[:40]})" if out[k] != v else ""
            repairs.add(f"key '{k}' written twice{differs}: the first kept")
            continue
        out[k] = v
    return out


def _repair(body: str, e: json.JSONDecodeError, repairs: Repairs) -> str:
    rest = body[e.pos:].strip()
    if not rest or e.msg.startswith("Unterminated string"):
        repairs.add("the file is cut short: its last, incomplete value was dropped")
        return _close(body)
    if e.msg == "Expecting ',' delimiter" and rest[:1] in "]}":
        # a closer of the wrong kind: the one that opened it was dropped as stray, or never written
        repairs.add(f"an unmatched '{rest[0]}' was dropped")
        return body[:e.pos] + body[e.pos:].replace(rest[0], " ", 1)
    if e.msg == "Expecting ',' delimiter":
        repairs.add("missing commas between members were supplied")
        return body[:e.pos] + "," + body[e.pos:]
    if e.msg.startswith("Expecting property name") and rest[:1] in "[{" and \
            re.match(r'[\[{]\s*"[^"]*"\s*:', rest):
        # IOR 3.2 wrote a stray "[" before a member ("[     \"Options\": {")
        repairs.add(f"a stray '{rest[0]}' before a member was dropped")
        return body[:e.pos] + body[e.pos:].replace(rest[0], " ", 1)
    if e.msg.startswith("Expecting property name") or e.msg == "Expecting value":
        # a trailing comma before } or ]: drop it
        before = body[:e.pos].rstrip()
        if before.endswith(",") and rest[:1] in "}]":
            repairs.add("trailing commas were dropped")
            return before[:-1] + body[e.pos:]
    raise ValueError(f"damaged JSON: {e.msg} at line {e.lineno} column {e.colno}")


def _scan(text: str) -> tuple[list[str], int]:
    """The brackets open at the end of text, and where its last complete member ends."""
    stack, in_string, escape, last_good = [], False, False, 0
    for i, ch in enumerate(text):
        if in_string:
            if escape:
                escape = False
            elif ch == "\\":
                escape = True
            elif ch == '"':
                in_string = False
            continue
        if ch == '"':
            in_string = True
        elif ch in "{[":
            stack.append(ch)
            last_good = i + 1
        elif ch in "}]":
            if stack:
                stack.pop()
            last_good = i + 1
        elif ch == ",":
            last_good = i
    return stack, last_good


def _close(body: str) -> str:
    """The body cut after its last complete member, with its open brackets closed."""
    stack, last_good = _scan(body)
    if not stack:
        raise ValueError("damaged JSON: nothing complete to keep")
    cut = body[:last_good].rstrip().rstrip(",")
    stack, _ = _scan(cut)
    return cut + "".join("}" if c == "{" else "]" for c in reversed(stack))
