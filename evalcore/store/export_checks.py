"""Cheap checks of whether an export would be refused, before anyone asks for the file.

The app offers downloads whose files are built only when clicked; a refusal
(:class:`~evalcore.store.exports.ExportRefusedError`, e.g. an id with whitespace
that TREC files cannot hold) must still be said up front. Each check is one
indexed SQL pass for *suspects* (a superset of what the export refuses); only
when there is a suspect is the export itself run, so the message is the
export's own and each rule stays in :mod:`evalcore.store.exports`.
"""

import io
import re

import sqlite_utils

from evalcore.store.exports import ExportRefusedError, export_qrels, export_run
from evalcore.store.runs import get_run_unchecked
from evalcore.store.scoping import require_study_view
from evalcore.store.tool_label_exports import export_tool_labels

#: Every character Python's ``\s`` matches (the exports' rule), as a GLOB class.
_SPACES = "".join(c for c in map(chr, range(0x3001)) if re.match(r"\s", c))


def _suspects(table: str, where: str) -> str:
    """SQL for a row of ``table`` (``where``) whose ids a TREC export may refuse: a cheap
    first test (a character outside printable ASCII; '' or '#...'), the whitespace class
    only on the rows it lets through."""
    return (
        f"SELECT 1 FROM {table} WHERE {where} AND (query_id = '' OR unit_id = '' "
        "OR query_id GLOB '#*' OR (query_id || unit_id GLOB '*[^!-~]*' "
        f"AND query_id || unit_id GLOB '*[{_SPACES}]*')) LIMIT 1"
    )


def _refusal(export) -> str | None:
    try:
        export(io.StringIO())
    except ExportRefusedError as error:
        return str(error)
    return None


def qrels_refusal(
    db: sqlite_utils.Database, study_id: str, reference: str | None, *, viewer: str | None
) -> str | None:
    """Why :func:`export_qrels` would refuse these qrels, or None (it would not)."""
    require_study_view(db, viewer, study_id)
    suspect = db.execute(
        _suspects("label_events", "study_id = ?") if reference is None
        else _suspects("reference_labels", "study_id = ? AND version = ?"),
        [study_id] if reference is None else [study_id, reference]).fetchone()
    if suspect is None:
        return None
    return _refusal(lambda out: export_qrels(db, study_id, out, reference=reference,
                                             viewer=viewer))


def tool_labels_refusal(
    db: sqlite_utils.Database, study_id: str, fmt: str, reference: str | None, *,
    viewer: str | None,
) -> str | None:
    """Why :func:`export_tool_labels` would refuse, or None (only Quepid refuses: two rated
    queries shown with the same text)."""
    require_study_view(db, viewer, study_id)
    if fmt != "quepid":
        return None
    suspect = db.execute(
        "SELECT 1 FROM queries WHERE study_id = ? GROUP BY coalesce(nullif(text, ''), query_id) "
        "HAVING count(*) > 1 LIMIT 1", [study_id]).fetchone()
    if suspect is None:
        return None
    return _refusal(lambda out: export_tool_labels(db, study_id, out, fmt, reference=reference,
                                                   viewer=viewer))


def run_refusal(
    db: sqlite_utils.Database, study_id: str, run_name: str, *, viewer: str | None
) -> str | None:
    """Why :func:`export_run` would refuse this run, or None (it would not)."""
    require_study_view(db, viewer, study_id)
    run = get_run_unchecked(db, study_id, run_name)
    suspect = db.execute(_suspects("results", "run_id = ?"), [run.run_id]).fetchone()
    if suspect is None:
        return None
    return _refusal(lambda out: export_run(db, study_id, run_name, out, viewer=viewer))
