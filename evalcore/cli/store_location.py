"""The ``--db`` option's type: a store file path or a PostgreSQL URL.

``click.Path`` would turn ``postgresql://user@/db?host=/run`` into a path (and
refuse it as missing); :class:`StoreLocation` is a ``click.Path`` that passes a
URL through unchanged and checks a path exactly as ``click.Path`` does. Every
command's ``--db`` uses it, so each takes a URL wherever it takes a file.
"""

from pathlib import Path

import click


class StoreLocation(click.Path):
    """A ``--db`` value: a ``postgresql://`` URL (a ``str``) or a file path (a ``Path``)."""

    name = "store"

    def __init__(self, *, exists: bool) -> None:
        super().__init__(exists=exists, dir_okay=False, path_type=Path)

    def convert(self, value: object, param: click.Parameter | None,
                ctx: click.Context | None) -> str | Path:
        # imported here: evaluate from files (no --db) loads nothing of the store
        from evalcore.store.location import is_postgres_url

        if is_postgres_url(str(value)):
            return str(value)
        return super().convert(value, param, ctx)


#: A store that must exist (a file that exists, or any PostgreSQL URL).
EXISTING_STORE = StoreLocation(exists=True)
#: A store that may be created.
NEW_OR_EXISTING_STORE = StoreLocation(exists=False)
