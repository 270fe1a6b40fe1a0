"""Reports in the evidence store: saved once, never changed.

A report is stored whole (internal data included) as canonical JSON in the
``reports`` table with ``content_hash = sha256:<hex of the body's UTF-8>``.
A trigger refuses any UPDATE of a stored report; :func:`load_report`
recomputes the hash and refuses a body that no longer matches it. Report
names are unique within a study: a new report needs a new name.
"""

import hashlib

import sqlite_utils
from pydantic import BaseModel, ConfigDict

from evalcore.access.roles import Permission
from evalcore.compute.gc_pause import gc_paused
from evalcore.report.model import Report
from evalcore.store.authorize import authorize
from evalcore.store.lookup import not_found
from evalcore.store.transaction import write_transaction


class StoredReport(BaseModel):
    """A stored report's row, without its body."""

    model_config = ConfigDict(frozen=True)

    report_id: int
    study_id: str
    name: str
    reference_version: str | None
    created_at: str
    created_by: str
    evalcore_version: str
    content_hash: str


class ReportNotFoundError(LookupError):
    """No stored report matches."""


class ReportIntegrityError(RuntimeError):
    """A stored report's body does not match its content hash."""


def canonical_json(report: Report) -> str:
    """The report's JSON text as stored and hashed (compact, fields in model order).

    The hash is of this exact text; a loaded report re-serializes to the same text.
    """
    with gc_paused():
        return report.model_dump_json()


def _hash(body: str) -> str:
    return "sha256:" + hashlib.sha256(body.encode("utf-8")).hexdigest()


def report_hash(report: Report) -> str:
    """``sha256:<hex>`` of :func:`canonical_json` of the full report."""
    return _hash(canonical_json(report))


_COLUMNS = (
    "report_id, study_id, name, reference_version, created_at, created_by, evalcore_version, "
    "content_hash"
)


def _row(row: tuple) -> StoredReport:
    return StoredReport(**dict(zip([c.strip() for c in _COLUMNS.split(",")], row, strict=True)))


def save_report(db: sqlite_utils.Database, report: Report) -> StoredReport:
    """Store ``report`` once; refuse a second report of the same name in the study."""
    body = canonical_json(report)
    digest = _hash(body)
    with write_transaction(db):
        if not db.execute(
            "SELECT 1 FROM studies WHERE study_id = ?", [report.study_id]
        ).fetchone():
            raise ValueError(f"no study {report.study_id!r} in this store; create it first")
        authorize(db, study_id=report.study_id, actor=report.created_by,
                  permission=Permission.CREATE_REPORT)
        if db.execute(
            "SELECT 1 FROM reports WHERE study_id = ? AND name = ?", [report.study_id, report.name]
        ).fetchone():
            raise ValueError(
                f"a report named {report.name!r} already exists in study {report.study_id!r}; "
                "stored reports are immutable, choose another name"
            )
        cursor = db.execute(
            "INSERT INTO reports (study_id, name, reference_version, created_at, created_by, "
            "evalcore_version, body_json, content_hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [
                report.study_id,
                report.name,
                report.reference_version,
                report.created_at,
                report.created_by,
                report.evalcore_version,
                body,
                digest,
            ],
        )
        report_id = int(cursor.lastrowid)
    return get_stored_report(db, report_id)


def get_stored_report(db: sqlite_utils.Database, report_id: int) -> StoredReport:
    row = db.execute(
        f"SELECT {_COLUMNS} FROM reports WHERE report_id = ?", [report_id]  # noqa: S608
    ).fetchone()
    if row is None:
        raise ReportNotFoundError(f"no stored report with id {report_id}")
    return _row(row)


def list_reports(db: sqlite_utils.Database, study_id: str) -> list[StoredReport]:
    """The study's stored reports, oldest first."""
    rows = db.execute(
        f"SELECT {_COLUMNS} FROM reports WHERE study_id = ? ORDER BY report_id",  # noqa: S608
        [study_id],
    ).fetchall()
    return [_row(r) for r in rows]


def find_report(db: sqlite_utils.Database, study_id: str, name: str) -> StoredReport:
    """The stored report named ``name`` in the study."""
    row = db.execute(
        f"SELECT {_COLUMNS} FROM reports WHERE study_id = ? AND name = ?",  # noqa: S608
        [study_id, name],
    ).fetchone()
    if row is None:
        known = [r.name for r in list_reports(db, study_id)]
        raise not_found(ReportNotFoundError, f"no report {name!r} in study {study_id!r}", known,
                        listing="stored reports", none_yet="none is stored yet")
    return _row(row)


def load_report(db: sqlite_utils.Database, report_id: int) -> Report:
    """The stored report, after checking its body against its content hash."""
    row = db.execute(
        "SELECT body_json, content_hash FROM reports WHERE report_id = ?", [report_id]
    ).fetchone()
    if row is None:
        raise ReportNotFoundError(f"no stored report with id {report_id}")
    body, digest = row
    if _hash(body) != digest:
        raise ReportIntegrityError(
            f"stored report {report_id} does not match its content hash {digest}; "
            "the store was altered outside evalcore"
        )
    return Report.model_validate_json(body)
