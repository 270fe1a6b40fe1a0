"""Opening the evidence store (a SQLite file or a ``postgresql://`` URL): connected
(:mod:`evalcore.store.location`), migrated to the current schema and rid of the imports a
killed process left, the same way on both engines."""

from pathlib import Path

import sqlite_utils

from evalcore.store.automatic_labels import discard_automatic_import
from evalcore.store.document_replacements import settle_abandoned_imports
from evalcore.store.location import connect_read_write
from evalcore.store.schema import migrate as run_migrations
from evalcore.store.staged_studies import discard_staged_study
from evalcore.store.staging import discard_abandoned, discard_staged_run

#: (table, key, discard) of each import written staged: a run import killed mid-way, a study
#: import, an import of automatic judgments; their dead processes' rows are discarded.
_STAGED = [("runs", "run_id", discard_staged_run), ("studies", "study_id", discard_staged_study),
           ("automatic_imports", "import_id", discard_automatic_import)]


def open_store(path: str | Path, *, migrate: bool = True) -> sqlite_utils.Database:
    """Open (creating if needed) the store at ``path``, migrated to the current schema. A
    PostgreSQL database must exist (its tables are created). The connection may be used from
    several threads; a Streamlit session keeps one of its own."""
    return _prepared(connect_read_write(path), migrate=migrate)


def _prepared(db: sqlite_utils.Database, *, migrate: bool) -> sqlite_utils.Database:
    """``db`` migrated and rid of the imports a killed process abandoned."""
    if migrate:
        run_migrations(db)
        for table, key, discard in _STAGED:  # a killed import leaves nothing visible
            discard_abandoned(db, table, key, discard)
        settle_abandoned_imports(db)  # and a document import (finished if it had published)
    return db
