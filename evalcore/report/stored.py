"""Saving and loading a :class:`~evalcore.report.model.Report` in the evidence store.

The store keeps a report's canonical JSON and its hash
(:mod:`evalcore.store.reports`: saved once, never changed, checked on load);
this module is the report side of that: the canonical text and the model.
"""

import sqlite_utils

from evalcore.report.model import Report
from evalcore.store.reports import (
    ReportRecord,
    StoredReport,
    body_hash,
    load_report_body,
    save_report_body,
)
from evalcore.store.study_handle import Study


def canonical_json(report: Report) -> str:
    """The report's JSON text as stored and hashed (compact, fields in model order).

    The hash is of this exact text; a loaded report re-serializes to the same text.
    """
    return report.model_dump_json()


def report_hash(report: Report) -> str:
    """``sha256:<hex>`` of :func:`canonical_json` of the full report."""
    return body_hash(canonical_json(report))


def save_report(db: sqlite_utils.Database, report: Report) -> StoredReport:
    """Store ``report`` once; refuse a second report of the same name in the study."""
    record = ReportRecord.model_validate(report, from_attributes=True)
    return save_report_body(db, record, canonical_json(report))


def load_report(study: Study, report_id: int) -> Report:
    """The study's stored report ``report_id``, after checking its body against its content
    hash."""
    return Report.model_validate_json(load_report_body(study, report_id))
