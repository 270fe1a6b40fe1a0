"""Staged studies: a study archive import written in short transactions, visible all at once.

:func:`evalcore.store.study_archive.import_study` creates the study with
``studies.staged_by`` = ``"host:pid"`` of the importing process: every read of
studies (:func:`evalcore.store.studies.get_study`, ``study_ids``,
``list_studies``) ignores it, so its data (runs, history, members) cannot be
reached. Its history is appended in paced chunks and one small final commit
clears ``staged_by`` (and publishes its staged runs and documents).

Why a staged study and not staging tables: moving rows out of staging tables
is itself a write as long as the history, and the publish must hold the lock
briefly. Why deletion is allowed: label, completeness and audit rows, references,
pins and reports are append-only, and their DELETE triggers (schema v12) let a
row go only while its study is staged, the one state in which nobody but the
import has seen it. A failed import discards the study here; one whose process
died is discarded by the next ``open_store`` (:func:`discard_abandoned_studies`).
The organisations, users and corpus row a killed import created stay (small
rows, harmless); a failure inside the process removes them too.
"""

import sqlite_utils

from evalcore.store.staging import delete_in_chunks, discard_abandoned, discard_staged_run
from evalcore.store.transaction import write_transaction

#: Tables referring to others go first (foreign keys).
_FIRST = ("reference_seals", "reference_labels", "reference_completeness", "protocol_documents",
          "retrieval_refusals")


def _study_tables(db: sqlite_utils.Database) -> list[str]:
    tables = [name for (name,) in db.execute(
        "SELECT m.name FROM sqlite_master m WHERE m.type = 'table' AND m.name NOT IN "
        "('studies', 'runs') AND m.name NOT LIKE 'sqlite_%' AND m.name NOT LIKE '%_fts%' "
        "AND EXISTS (SELECT 1 FROM pragma_table_info(m.name) c WHERE c.name = 'study_id') "
        "ORDER BY m.name")]
    return [t for t in _FIRST if t in tables] + [t for t in tables if t not in _FIRST]


def _key(db: sqlite_utils.Database, table: str) -> str:
    """``rowid``, or the primary key columns of a WITHOUT ROWID table."""
    without_rowid = "WITHOUT ROWID" in db.execute(
        "SELECT sql FROM sqlite_master WHERE name = ?", [table]).fetchone()[0].upper()
    if not without_rowid:
        return "rowid"
    return ", ".join(name for name, in db.execute(
        "SELECT name FROM pragma_table_info(?) WHERE pk > 0 ORDER BY pk", [table]))


def discard_staged_study(db: sqlite_utils.Database, study_id: str) -> None:
    """Delete a staged study's rows, a chunk per short transaction, then the study row."""
    if db.execute("SELECT 1 FROM studies WHERE study_id = ? AND staged_by IS NOT NULL",
                  [study_id]).fetchone() is None:
        return
    for (run_id,) in db.execute("SELECT run_id FROM runs WHERE study_id = ?",
                                [study_id]).fetchall():
        discard_staged_run(db, run_id)
    for table in _study_tables(db):
        delete_in_chunks(db, table, _key(db, table), "study_id", study_id)
    with write_transaction(db):
        db.execute("DELETE FROM studies WHERE study_id = ? AND staged_by IS NOT NULL", [study_id])


def discard_abandoned_studies(db: sqlite_utils.Database) -> int:
    """Discard staged studies whose importing process is gone; return how many."""
    return discard_abandoned(
        db, "SELECT study_id, staged_by FROM studies WHERE staged_by IS NOT NULL",
        discard_staged_study)
