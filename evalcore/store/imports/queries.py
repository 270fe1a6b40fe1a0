"""Import queries (JSONL, TSV, CSV or TREC topics) with their information need.

Parsing: :mod:`evalcore.io.queries`. With a query map the ids are renamed
first (every query must be in the map). In one transaction each query is
added or updated: its text and, when the file gives one, its description and
narrative (a query file without them leaves a stored information need as it
is). One audit entry (``import.queries``).
"""

from __future__ import annotations

from os import PathLike
from pathlib import Path

import sqlite_utils

from evalcore.access.roles import Permission
from evalcore.contract.limits import DEFAULT_LIMITS, ReadLimits
from evalcore.io.queries import (
    QueryFields,
    apply_query_map,
    parse_queries,
    read_queries,
    read_query_map,
)
from evalcore.io.records import AUTO, Layout
from evalcore.io.text_lines import SourceText
from evalcore.store.authorize import authorize
from evalcore.store.imports.common import ImportSummary
from evalcore.store.studies import get_study
from evalcore.store.transaction import write_transaction


def import_queries(
    db: sqlite_utils.Database,
    source: str | PathLike[str] | SourceText,
    *,
    study_id: str,
    fmt: str = "auto",
    fields: QueryFields | None = None,
    query_map: str | PathLike[str] | dict[str, str] | None = None,
    actor: str = "import",
    layout: Layout = AUTO,
    limits: ReadLimits = DEFAULT_LIMITS,
) -> ImportSummary:
    """Import a query file into the study (all or nothing); see the module docstring."""
    get_study(db, study_id)
    notes: list[str] = []
    if isinstance(source, SourceText):
        name = source.name
        queries = parse_queries(source, fmt, fields, layout=layout, notes=notes)
    else:
        name, queries = read_queries(source, fmt, fields, layout=layout,  # type: ignore[arg-type]
                                     limits=limits, notes=notes)
    if query_map is not None:
        mapping = query_map if isinstance(query_map, dict) else read_query_map(query_map)
        map_name = "(given)" if isinstance(query_map, dict) else Path(query_map).name
        queries = apply_query_map(queries, mapping, file=name, map_file=map_name)
    summary = ImportSummary(kind="queries", study_id=study_id, source=name, rows=len(queries),
                            notes=notes)
    with write_transaction(db):
        authorize(db, study_id=study_id, actor=actor, permission=Permission.IMPORT)
        db.conn.executemany(
            "INSERT INTO queries (study_id, query_id, text, description, narrative) "
            "VALUES (?, ?, ?, ?, ?) ON CONFLICT (study_id, query_id) DO UPDATE SET "
            "text = excluded.text, "
            "description = CASE WHEN excluded.description = '' AND excluded.narrative = '' "
            "THEN description ELSE excluded.description END, "
            "narrative = CASE WHEN excluded.description = '' AND excluded.narrative = '' "
            "THEN narrative ELSE excluded.narrative END",
            [(study_id, q.query_id, q.text, q.description, q.narrative) for q in queries],
        )
        summary.queries = len(queries)
        shown_map = ("given" if isinstance(query_map, dict)
                     else None if query_map is None else str(query_map))
        summary.audit(db, actor, query_map=shown_map)
    return summary
