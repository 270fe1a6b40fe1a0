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
from evalcore.store.runs import get_run
from evalcore.store.scoping import require_study_view
from evalcore.store.tool_label_exports import export_tool_labels

#: Every character Python's ``\s`` matches (the exports' rule), as a GLOB class.
_SPACES = "".join(c for c in map(chr, range(0x3001)) if re.match(r"\s", c))
_SUSPECT_ID = f"(%s = '' OR %s GLOB '*[{_SPACES}]*')"


def _suspect(column: str) -> str:
    return _SUSPECT_ID.replace("%s", column)


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
    table, extra, params = (
        ("label_events", "", [study_id]) if reference is None
        else ("reference_labels", " AND version = ?", [study_id, reference]))
    suspect = db.execute(
        f"SELECT 1 FROM {table} WHERE study_id = ?{extra} AND ({_suspect('query_id')} OR "
        f"{_suspect('unit_id')} OR query_id GLOB '#*') LIMIT 1", params).fetchone()
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
    run = get_run(db, study_id, run_name)
    suspect = db.execute(
        f"SELECT 1 FROM results WHERE run_id = ? AND ({_suspect('query_id')} OR "
        f"{_suspect('unit_id')} OR query_id GLOB '#*') LIMIT 1", [run.run_id]).fetchone()
    if suspect is None:
        return None
    return _refusal(lambda out: export_run(db, study_id, run_name, out, viewer=viewer))
