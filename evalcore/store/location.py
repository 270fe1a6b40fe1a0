"""Where a store lives: a SQLite file path or a PostgreSQL URL.

``--db``, ``RELEVANCE_LEDGER_DB`` and :func:`evalcore.store.connection.open_store`
take either. The checks that only mean something for a file (does it exist, is its
folder there) go through these helpers, so a URL passes them unchanged.
"""

from pathlib import Path

#: The URL schemes that name a PostgreSQL store.
POSTGRES_SCHEMES = ("postgresql://", "postgres://")


def is_postgres_url(target: object) -> bool:
    """Does ``target`` (a path or a string) name a PostgreSQL database?"""
    return isinstance(target, str) and target.lower().startswith(POSTGRES_SCHEMES)


def store_target(value: str | Path) -> str | Path:
    """A ``--db`` / ``RELEVANCE_LEDGER_DB`` value as :func:`open_store` takes it: a URL
    unchanged, anything else a path (``~`` expanded)."""
    text = str(value)
    if is_postgres_url(text):
        return text
    return Path(text).expanduser()


def store_exists(target: str | Path) -> bool:
    """Is there a store at ``target``? A PostgreSQL URL is taken to exist (the server says
    otherwise when it is opened); a path must be an existing file."""
    return is_postgres_url(str(target)) or Path(target).exists()


def describe_store(target: str | Path) -> str:
    """A store location for messages: a path as given, a URL without its password."""
    text = str(target)
    if is_postgres_url(text) and "@" in text:
        scheme, rest = text.split("://", 1)
        credentials, host = rest.rsplit("@", 1)
        return f"{scheme}://{credentials.split(':', 1)[0]}@{host}"
    return text
