"""Staged studies: a study archive import written in short transactions, visible all at once.

:func:`evalcore.store.study_archive.import_study` creates the study with ``staged_by`` =
``"host:pid"``: every read of studies ignores it until one small final commit clears it (a
staged study needs one short statement to publish, staging tables a copy as long as the
history). Its append-only rows may be deleted only while it is staged, when nobody but the
import has seen them: a failed import discards it here, a dead process's the next
``open_store`` (:func:`evalcore.store.staging.discard_abandoned`). The rows it creates
outside the study (organisations, the importer's user and memberships, the corpus) are
recorded in the same transaction (:func:`record_created`), so a discard removes them unless
something published refers to them by then."""

import json
from typing import Any

import sqlite_utils

from evalcore.store import dialect
from evalcore.store.audit import record_audit
from evalcore.store.document_imports import published
from evalcore.store.staging import delete_in_chunks, discard_staged_run
from evalcore.store.transaction import write_transaction

#: The audit action of a staged study's record of what its import created outside it.
CREATED_ACTION = "study.import.created"

#: Tables referring to others go first (foreign keys).
_FIRST = ("reference_seals", "reference_labels", "reference_completeness", "protocol_documents",
          "retrieval_refusals")


def _study_tables(db: sqlite_utils.Database) -> list[str]:
    tables = [t for t in dialect.store_tables(db, "study_id") if t not in ("studies", "runs")]
    return [t for t in _FIRST if t in tables] + [t for t in tables if t not in _FIRST]


def record_created(db: sqlite_utils.Database, *, study_id: str, actor: str,
                   organisations: list[str], users: list[str],
                   memberships: list[tuple[str, str]], corpus: str | None) -> None:
    """Write down (inside the transaction that created them) the rows outside the staged
    study its import created: organisation ids, user ids, (user, organisation) memberships,
    and the corpus id when its row is new."""
    created = {"organisations": organisations, "users": users,
               "memberships": [list(m) for m in memberships], "corpus": corpus}
    record_audit(db, actor, CREATED_ACTION, study_id=study_id, detail=created)


def forget_created(db: sqlite_utils.Database, study_id: str) -> None:
    """Publishing: the rows written down by :func:`record_created` are the study's for good
    (inside the publishing transaction, while the study is still staged)."""
    db.execute("DELETE FROM audit_log WHERE study_id = ? AND action = ?",
               [study_id, CREATED_ACTION])


def _created(db: sqlite_utils.Database, study_id: str) -> dict[str, Any] | None:
    row = db.execute("SELECT detail_json FROM audit_log WHERE study_id = ? AND action = ?",
                     [study_id, CREATED_ACTION]).fetchone()
    return None if row is None else json.loads(row[0])


def _remove_created(db: sqlite_utils.Database, created: dict[str, Any]) -> None:
    """Inside a write transaction, after the study's rows are gone: remove what the import
    created outside it, each row only while nothing published refers to it."""
    db.conn.executemany(
        "DELETE FROM user_organisations WHERE user_id = ? AND org_id = ?",
        [tuple(m) for m in created["memberships"]])
    db.conn.executemany(
        "DELETE FROM users WHERE user_id = ? "
        "AND NOT EXISTS (SELECT 1 FROM study_members WHERE user_id = users.user_id) "
        "AND NOT EXISTS (SELECT 1 FROM user_organisations WHERE user_id = users.user_id)",
        [(u,) for u in created["users"]])
    if created["corpus"] is not None:
        db.execute(
            "DELETE FROM corpora WHERE corpus_id = ? "
            "AND NOT EXISTS (SELECT 1 FROM studies WHERE corpus_id = corpora.corpus_id) "
            f"AND NOT EXISTS (SELECT 1 FROM documents d WHERE d.corpus_id = corpora.corpus_id "
            f"AND {published('d')})", [created["corpus"]])
    db.conn.executemany(
        "DELETE FROM organisations WHERE org_id = ? "
        "AND NOT EXISTS (SELECT 1 FROM studies WHERE org_id = organisations.org_id) "
        "AND NOT EXISTS (SELECT 1 FROM user_organisations WHERE org_id = organisations.org_id) "
        "AND NOT EXISTS (SELECT 1 FROM corpora WHERE owner_org = organisations.org_id)",
        [(o,) for o in created["organisations"]])


def discard_staged_study(db: sqlite_utils.Database, study_id: str) -> None:
    """Delete a staged study's rows, a chunk per short transaction, then the study row and
    what its import created outside it (:func:`record_created`)."""
    if db.execute("SELECT 1 FROM studies WHERE study_id = ? AND staged_by IS NOT NULL",
                  [study_id]).fetchone() is None:
        return
    created = _created(db, study_id)
    for (run_id,) in db.execute("SELECT run_id FROM runs WHERE study_id = ?",
                                [study_id]).fetchall():
        discard_staged_run(db, run_id)
    for (import_id,) in db.execute("SELECT import_id FROM automatic_imports WHERE study_id = ?",
                                   [study_id]).fetchall():  # its labels have no study_id
        delete_in_chunks(db, "automatic_labels", "import_id, query_id, unit_id", "import_id",
                         import_id)
    for table in _study_tables(db):
        delete_in_chunks(db, table, dialect.row_key(db, table), "study_id", study_id)
    with write_transaction(db):
        db.execute("DELETE FROM studies WHERE study_id = ? AND staged_by IS NOT NULL", [study_id])
        if created is not None:
            _remove_created(db, created)

