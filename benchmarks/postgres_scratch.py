"""A throwaway PostgreSQL database for a benchmark: created on a server, dropped after.

A benchmark given a server's URL (``--postgres-url`` or
``RELEVANCE_LEDGER_BENCH_POSTGRES_URL``; any database of the server the user may
connect to, e.g. ``postgresql://ledger@/postgres?host=/tmp/pgt``) creates a fresh
database there named ``<prefix>_<random>`` and drops it when done, so a run never
reads or leaves a store of someone else's.
"""

import argparse
import contextlib
import os
import secrets
from collections.abc import Iterator
from urllib.parse import urlsplit, urlunsplit

#: The environment variable naming the server a benchmark may create its databases on.
URL_ENV = "RELEVANCE_LEDGER_BENCH_POSTGRES_URL"


def add_engine_options(parser: argparse.ArgumentParser) -> None:
    """``--engines``, ``--postgres-url`` and ``--postgres-prefix``, as every benchmark of the
    store engines takes them."""
    parser.add_argument("--engines", default=None,
                        help="sqlite,postgres (default: both when a PostgreSQL server is named "
                             "and answers, else sqlite)")
    parser.add_argument("--postgres-url", default=None,
                        help="a PostgreSQL server to create throwaway databases on (default: "
                             f"${URL_ENV})")
    parser.add_argument("--postgres-prefix", default="bench",
                        help="the name prefix of those databases (dropped after the run)")


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

