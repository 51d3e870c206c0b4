"""A store URL may carry a password (postgresql+psycopg://user:PW@host/db).
It is needed to connect and nowhere else: whatever is printed, stored with
a run (its command line) or put in an error message goes through here."""
from __future__ import annotations

import re

from clusterbench.store.sqlite_url import render, sqlite_file

MASK = "***"
# scheme://user:PASSWORD@ inside any text (a whole command line, a --db=URL word)
_USERINFO_PASSWORD = re.compile(r"(?P<head>[A-Za-z][A-Za-z0-9+.-]*://[^\s:/@]*:)(?P<pw>[^\s@/]*)(?=@)")


def public_url(url: str) -> str:
    """The URL as it may be shown: the password replaced by ***."""
    database = sqlite_file(url)
    if database is not None:
        return render(database)   # no password to hide, and no SQLAlchemy import for a run
    import sqlalchemy as sa

    try:
        return sa.engine.make_url(url).render_as_string(hide_password=True)
    except (sa.exc.ArgumentError, ValueError):
        return mask_passwords(url)


def mask_passwords(text: str, url: str | None = None) -> str:
    """text with every URL password masked, and the password of `url` masked
    wherever else it appears (a driver's message may quote it as password=...)."""
    text = _USERINFO_PASSWORD.sub(lambda m: m["head"] + (MASK if m["pw"] else ""), text)
    if url and "@" in url:   # no userinfo, no password
        import sqlalchemy as sa

        try:
            password = sa.engine.make_url(url).password
        except (sa.exc.ArgumentError, ValueError):
            password = None
        if password:
            text = text.replace(str(password), MASK)
    return text
