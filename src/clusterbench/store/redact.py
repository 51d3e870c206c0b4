"""A store URL may carry secrets: a password in its user part
(postgresql+psycopg://user:PW@host/db), or in its query as libpq reads it
(?password=, ?sslpassword=, ?passfile= naming where one is kept, or
?options=-c x.password=...). They are needed to connect and nowhere else.
mask_secrets is the one function through which anything that may hold
them passes before it is printed, stored with a run (its command line) or
put in an error message; public_url is that function applied to a URL."""
from __future__ import annotations

import re
from urllib.parse import unquote

from clusterbench.store.sqlite_url import render, sqlite_file

MASK = "***"
# scheme://user:PASSWORD@ in any text. SQLAlchemy reads the password to the
# first @, whatever it holds (a raw / or # too); the mask runs on to the LAST @
# before the query, so a raw @ inside it (p@ss, p@/ss) is masked whole, not cut
# at the first, while an @ in a query value (?sslcert=/u@h.crt) is not taken for one
_USERINFO_PASSWORD = re.compile(r"(?P<head>[A-Za-z][A-Za-z0-9+.-]*://[^\s:/@?#]*:)"
                                r"(?P<secret>[^\s@]*(?:@[^\s?]*)?)(?=@)")
# key=value in a URL's query or a libpq keyword string, at the start of a parameter
_PARAMETER = re.compile(r"(?<![^\s?&;'\"])(?P<key>[A-Za-z_][A-Za-z0-9_.]*)="
                        r"(?P<secret>'(?:[^'\\]|\\.)*'|[^\s&;'\"]*)")


def _holds_secret(key: str, value: str) -> bool:
    """password, sslpassword, passfile (and any *pass* key); options naming one."""
    key = key.lower()
    return "pass" in key or (key == "options" and "pass" in unquote(value).lower())


def _secret_spans(text: str) -> list[tuple[int, int]]:
    spans = [m.span("secret") for m in _USERINFO_PASSWORD.finditer(text) if m["secret"]]
    spans += [m.span("secret") for m in _PARAMETER.finditer(text)
              if m["secret"] and _holds_secret(m["key"], m["secret"])]
    return sorted(spans)


def mask_secrets(text: str, url: str | None = None) -> str:
    """text with every secret a URL can carry replaced by ***, wherever in
    text it stands as part of a URL or a key=value; and each secret of `url`
    (the store's, as given) replaced wherever else it appears, raw or
    percent-decoded (a driver's message may quote it as password="...")."""
    known = _secrets_of(url) if url else set()
    out, last = [], 0
    for start, end in _secret_spans(text):
        if start >= last:
            out += [text[last:start], MASK]
            last = end
    text = "".join(out) + text[last:]
    for secret in sorted(known - {""}, key=len, reverse=True):
        text = text.replace(secret, MASK)
    return text


def _secrets_of(text: str, depth: int = 2) -> set[str]:
    """The secret values in text, raw and percent-decoded, and those inside
    them (options=-c x.password=PW holds PW, which a server's error quotes)."""
    found = set()
    for start, end in _secret_spans(text):
        value = text[start:end].strip("'")
        found |= {value, unquote(value)}
        if depth:
            found |= _secrets_of(unquote(value), depth - 1)
    return found


def public_url(url: str) -> str:
    """The URL as it may be shown: every secret replaced by ***."""
    database = sqlite_file(url)
    if database is not None:
        return render(database)   # a plain file: no secret, and rendered as SQLAlchemy renders it
    return mask_secrets(url)


def raw_at_in_password(url: str) -> bool:
    """A password holding a raw @ (user:p@ss@host): every URL parser takes
    the first @ as the end of the user part, so the rest of the password
    would be read as the host name and quoted in the driver's errors."""
    m = _USERINFO_PASSWORD.match(url)
    return bool(m and "@" in m["secret"].partition("?")[0])
