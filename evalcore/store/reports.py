"""Reports in the evidence store: saved once, never changed.

A report is stored whole as canonical JSON in ``reports`` with ``content_hash =
sha256:<hex of the body's UTF-8>``; a trigger refuses any UPDATE and :func:`load_report_body`
refuses a body that no longer matches its hash. Names are unique within a study.
:mod:`evalcore.report.stored` turns a :class:`~evalcore.report.model.Report` into the body
and back."""

import hashlib

import sqlite_utils

from evalcore.access.roles import Permission
from evalcore.contract.frozen import FrozenModel
from evalcore.contract.limits import MAX_NAME_CHARS, require_fits
from evalcore.store.authorize import authorize
from evalcore.store.lookup import exists, not_found
from evalcore.store.studies import study_exists
from evalcore.store.study_handle import Study
from evalcore.store.transaction import write_transaction


class ReportNotFoundError(LookupError):
    """No stored report matches."""


class ReportIntegrityError(RuntimeError):
    """A stored report's body does not match its content hash."""


def body_hash(body: str) -> str:
    """``sha256:<hex>`` of a stored report's body text."""
    return "sha256:" + hashlib.sha256(body.encode("utf-8")).hexdigest()


class ReportRecord(FrozenModel):
    """What is stored of a report besides its body: the columns it is found by."""

    study_id: str
    name: str
    reference_version: str | None
    created_at: str
    created_by: str
    evalcore_version: str


class StoredReport(ReportRecord):
    """A stored report's row, without its body."""

    report_id: int
    content_hash: str


_KEYS = ("report_id", "study_id", "name", "reference_version", "created_at", "created_by",
         "evalcore_version", "content_hash")


def _reports(db: sqlite_utils.Database, where: str, params: list) -> list[StoredReport]:
    """The stored reports matching ``where``, by id."""
    rows = db.execute(f"SELECT {', '.join(_KEYS)} FROM reports WHERE {where} "  # noqa: S608
                      "ORDER BY report_id", params)
    return [StoredReport(**dict(zip(_KEYS, row, strict=True))) for row in rows]


def save_report_body(db: sqlite_utils.Database, report: ReportRecord, body: str) -> StoredReport:
    """Store a report's ``body`` once; refuse a second report of the same name in the study."""
    require_fits(report.name, MAX_NAME_CHARS, "a report name", "choose a shorter one")
    digest = body_hash(body)
    with write_transaction(db):
        if not study_exists(db, report.study_id):
            raise ValueError(f"no study {report.study_id!r} in this store; create it first")
        authorize(db, study_id=report.study_id, actor=report.created_by,
                  permission=Permission.CREATE_REPORT)
        if exists(
            db, "SELECT 1 FROM reports WHERE study_id = ? AND name = ?", [report.study_id, report.name]
        ):
            raise ValueError(
                f"a report named {report.name!r} already exists in study {report.study_id!r}; "
                "stored reports are immutable, choose another name"
            )
        cursor = db.execute(
            "INSERT INTO reports (study_id, name, reference_version, created_at, created_by, "
            "evalcore_version, body_json, content_hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [*(getattr(report, field) for field in ReportRecord.model_fields), body, digest],
        )
        report_id = int(cursor.lastrowid)
    return _reports(db, "report_id = ?", [report_id])[0]


def list_reports(study: Study) -> list[StoredReport]:
    """The study's stored reports."""
    return _reports(study.db, "study_id = ?", [study.study_id])


def find_report(study: Study, name: str) -> StoredReport:
    """The stored report named ``name`` in the study."""
    found = _reports(study.db, "study_id = ? AND name = ?", [study.study_id, name])
    if not found:
        raise not_found(
            ReportNotFoundError,
            f"no report {name!r} in study {study.study_id!r}",
            [r.name for r in list_reports(study)],
            listing="stored reports",
            none_yet="none is stored yet",
        )
    return found[0]


def load_report_body(study: Study, report_id: int) -> str:
    """The body of the study's stored report ``report_id``, after checking it against its
    content hash (a report of another study is not found: its id gives no way around the
    handle's check)."""
    row = study.db.execute(
        "SELECT body_json, content_hash FROM reports WHERE report_id = ? AND study_id = ?",
        [report_id, study.study_id],
    ).fetchone()
    if row is None:
        raise ReportNotFoundError(f"no stored report with id {report_id} in study "
                                  f"{study.study_id!r}")
    body, digest = row
    if body_hash(body) != digest:
        raise ReportIntegrityError(
            f"stored report {report_id} does not match its content hash {digest}; "
            "the store was altered outside evalcore"
        )
    return body
