"""A throwaway PostgreSQL database for a benchmark: created on a server, dropped after.

A benchmark given a server's URL (``--postgres-url`` or
``RELEVANCE_LEDGER_BENCH_POSTGRES_URL``; any database of the server the user may
connect to, e.g. ``postgresql://ledger@/postgres?host=/tmp/pgt``) creates a fresh
database there named ``<prefix>_<random>`` and drops it when done, so a run never
reads or leaves a store of someone else's.
"""

import contextlib
import os
import secrets
from collections.abc import Iterator
from urllib.parse import urlsplit, urlunsplit

#: The environment variable naming the server a benchmark may create its databases on.
URL_ENV = "RELEVANCE_LEDGER_BENCH_POSTGRES_URL"


def server_url(given: str | None) -> str | None:
    """The server URL from ``--postgres-url`` or the environment (None: no server named)."""
    return given or os.environ.get(URL_ENV) or None


def reachable(url: str) -> str | None:
    """None when ``url`` answers; otherwise why not (one line)."""
    import psycopg

    try:
        with psycopg.connect(url, connect_timeout=5) as conn:
            conn.execute("SELECT 1")
    except psycopg.Error as error:
        return str(error).strip().splitlines()[0]
    return None


def database_url(url: str, name: str) -> str:
    """``url`` with its database replaced by ``name`` (host, user and options kept)."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, "/" + name, parts.query, parts.fragment))


@contextlib.contextmanager
def scratch_database(url: str, prefix: str = "bench") -> Iterator[str]:
    """A new empty database on ``url``'s server; yields its URL and drops it afterwards
    (closing any connection left to it)."""
    import psycopg

    name = f"{prefix}_{secrets.token_hex(6)}"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield database_url(url, name)
    finally:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def copy_sqlite_store(sqlite_path: str, url: str) -> dict[str, int]:
    """Copy every table a SQLite store shares with the (migrated, empty) PostgreSQL store at
    ``url``, row for row (``rowid`` and integer keys kept, identity counters moved past
    them); returns rows copied per table.

    For a study only SQLite can build yet (the demo's lexical runs need FTS5): the same
    content on both engines, so their pages can be timed side by side. Triggers and
    foreign keys are off during the copy (``session_replication_role = replica``: the
    rows are already consistent), which needs a superuser on the dev server.
    """
    import sqlite3

    import psycopg

    source = sqlite3.connect(sqlite_path)
    copied: dict[str, int] = {}
    with psycopg.connect(url, autocommit=False) as conn:
        conn.execute("SET session_replication_role = replica")
        columns: dict[str, list[str]] = {}
        for table, column in conn.execute(
                "SELECT table_name, column_name FROM information_schema.columns "
                "WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position"):
            columns.setdefault(table, []).append(column)
        for (table,) in source.execute("SELECT name FROM sqlite_master WHERE type = 'table'"):
            if table not in columns or table == "schema_version":
                continue
            have = {r[1] for r in source.execute(f'PRAGMA table_info("{table}")')} | {"rowid"}
            shared = [c for c in columns[table] if c in have]
            names = ", ".join(f'"{c}"' for c in shared)
            rows = source.execute(f'SELECT {names} FROM "{table}"').fetchall()
            conn.execute(f'DELETE FROM "{table}"')
            with conn.cursor() as cursor:
                cursor.executemany(
                    f'INSERT INTO "{table}" ({names}) OVERRIDING SYSTEM VALUE VALUES '
                    f'({", ".join(["%s"] * len(shared))})', rows)
            copied[table] = len(rows)
        for table, column in conn.execute(
                "SELECT table_name, column_name FROM information_schema.columns "
                "WHERE table_schema = current_schema() AND is_identity = 'YES'").fetchall():
            conn.execute(f"SELECT setval(pg_get_serial_sequence('\"{table}\"', '{column}'), "
                         f'coalesce((SELECT max("{column}") FROM "{table}"), 0) + 1, false)')
    source.close()
    return copied
