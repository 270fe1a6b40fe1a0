"""Automatic judgments: labels from a model, an LLM judge or a heuristic, never evidence.

Contract section 13: automatic labels are stored apart from the human label events
(``automatic_imports``, ``automatic_labels``) with their source's name, who imported them
and when. No value, bound, verdict or completeness reads them; they are read here to be
shown beside human labels, compared with them (:mod:`evalcore.analysis.automatic_agreement`),
to order the to-decide queue and as predictors in estimates (:mod:`evalcore.estimation`).

An import (:func:`write_automatic_import`, permission ``IMPORT``) is written staged, its
labels in short transactions, and published with its audit entry by one final
transaction; every read ignores staged imports, so a failed or killed import shows nothing
(the next ``open_store`` removes a dead process's: :func:`discard_automatic_import`).
A judge writes each batch as one small published import (:func:`write_automatic_import`
inside one short write transaction: its staging never shows), so an interrupted run keeps
what it wrote. A source's current label of a unit is the one of
its latest published import holding the unit.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import sqlite_utils

from evalcore.access.roles import Permission
from evalcore.contract.frozen import FrozenModel
from evalcore.io.clock import utc_now_iso
from evalcore.store.audit import record_audit
from evalcore.store.authorize import authorize
from evalcore.store.document_imports import published
from evalcore.store.lookup import models
from evalcore.store.scoping import readable_filter
from evalcore.store.staging import delete_in_chunks, staging_owner
from evalcore.store.study_handle import Study
from evalcore.store.transaction import write_transaction

#: Labels written per short write transaction while an import is staged.
CHUNK = 5_000

#: (query id, unit id) -> gain, of one source.
SourceLabels = dict[tuple[str, str], int]


class AutomaticSource(FrozenModel):
    """One automatic source of a study: its current labels and its latest import."""

    source: str
    #: Units with a current label of this source.
    n_labels: int
    n_imports: int
    last_imported_at: str
    last_imported_by: str
    last_file: str


def write_automatic_import(
    db: sqlite_utils.Database,
    *,
    study_id: str,
    source: str,
    file: str,
    format: str,
    labels: Sequence[tuple[str, str, int]],
    actor: str,
    detail: dict[str, object] | None = None,
) -> int:
    """Store ``labels`` ((query id, unit id, gain), each unit once) as one import of the automatic
    ``source``, staged then published with its audit entry; return its id. PermissionDenied
    before any write when ``actor`` may not import into the study."""
    with write_transaction(db):
        authorize(db, study_id=study_id, actor=actor, permission=Permission.IMPORT)
        cursor = db.execute(
            "INSERT INTO automatic_imports (study_id, source, file, format, imported_by, "
            "imported_at, n_labels, staged_by) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [study_id, source, file, format, actor, utc_now_iso(), len(labels), staging_owner()],
        )
        import_id = int(cursor.lastrowid)
    try:
        for start in range(0, len(labels), CHUNK):
            with write_transaction(db):
                db.conn.executemany(
                    "INSERT INTO automatic_labels (import_id, query_id, unit_id, gain) "
                    "VALUES (?, ?, ?, ?)",
                    ((import_id, q, u, g) for q, u, g in labels[start : start + CHUNK]))
        with write_transaction(db):
            authorize(db, study_id=study_id, actor=actor, permission=Permission.IMPORT)
            db.execute(
                "UPDATE automatic_imports SET staged_by = NULL, imported_at = ? "
                "WHERE import_id = ?",
                [utc_now_iso(), import_id],
            )
            what = {"source": source, "file": file, "format": format, "labels": len(labels),
                    "imported_by": actor, **(detail or {})}
            record_audit(db, actor, "import.automatic-labels", study_id=study_id, detail=what)
    except BaseException:
        discard_automatic_import(db, import_id)
        raise
    return import_id


def judgeable_documents(study: Study, corpus_id: str, doc_ids: Iterable[str]) -> dict[str, str]:
    """Doc id -> why its text may not be sent to a judge for the study's actor, for each of
    ``doc_ids`` that may not: ``no document``, ``text withheld`` (the actor may not read it:
    :func:`evalcore.store.scoping.readable_filter`) or ``empty document``. One query per 500 ids."""
    db = study.db
    wanted = list(dict.fromkeys(doc_ids))
    allowed = readable_filter(db, study.actor, corpus_id)
    found: dict[str, tuple[bool, bool]] = {}
    for start in range(0, len(wanted), 500):
        chunk = wanted[start : start + 500]
        params: dict[str, object] = {f"i{n}": doc for n, doc in enumerate(chunk)}
        marks = ", ".join(f":i{n}" for n in range(len(chunk)))
        rows = db.execute(
            f"SELECT d.doc_id, {allowed.where}, "
            "(trim(d.title) != '' OR trim(d.text) != '') FROM documents d "
            f"WHERE d.corpus_id = :corpus AND d.doc_id IN ({marks}) AND {published('d')}",
            {**params, **allowed.params, "corpus": corpus_id},
        )
        for doc, readable, nonempty in rows:
            found[doc] = (bool(readable), bool(nonempty))
    out: dict[str, str] = {}
    for doc in wanted:
        readable, nonempty = found.get(doc, (False, False))
        if doc not in found:
            out[doc] = "no document"
        elif not readable:
            out[doc] = "text withheld"
        elif not nonempty:
            out[doc] = "empty document"
    return out


def discard_automatic_import(db: sqlite_utils.Database, import_id: int) -> None:
    """Delete a staged import's labels (in short transactions), then its row."""
    delete_in_chunks(db, "automatic_labels", "import_id, query_id, unit_id", "import_id", import_id)
    with write_transaction(db):
        db.execute(
            "DELETE FROM automatic_imports WHERE import_id = ? AND staged_by IS NOT NULL",
            [import_id],
        )


def automatic_labels(
    study: Study, query_ids: Iterable[str] | None = None, *, sources: Iterable[str] | None = None
) -> dict[str, SourceLabels]:
    """Source -> (query id, unit id) -> its current gain, of the published imports (the
    queries ``query_ids`` only, when given; the ``sources`` only, when given)."""
    sql = (
        "SELECT i.source, l.query_id, l.unit_id, l.gain FROM automatic_labels l "
        "JOIN automatic_imports i ON i.import_id = l.import_id "
        "WHERE i.study_id = ? AND i.staged_by IS NULL"
    )
    params: list[object] = [study.study_id]
    if sources is not None:
        wanted_sources = list(dict.fromkeys(sources))
        if not wanted_sources:
            return {}
        sql += f" AND i.source IN ({', '.join('?' * len(wanted_sources))})"
        params += wanted_sources
    wanted = None if query_ids is None else set(query_ids)
    out: dict[str, SourceLabels] = {}
    for source, q, u, g in study.db.execute(sql + " ORDER BY i.import_id", params):
        if wanted is None or q in wanted:
            out.setdefault(source, {})[(q, u)] = int(g)  # a later import replaces
    return out


def unit_automatic_labels(study: Study, query_id: str) -> dict[str, dict[str, int]]:
    """Unit id -> source -> current gain, for one query (what a page shows beside the
    human labels)."""
    out: dict[str, dict[str, int]] = {}
    by_source = automatic_labels(study, [query_id])
    for source in sorted(by_source):  # source names, in name order
        for (_, unit), gain in by_source[source].items():
            out.setdefault(unit, {})[source] = gain
    return out


def automatic_sources(study: Study) -> list[AutomaticSource]:
    """The study's automatic sources (published imports), by name."""
    current = automatic_labels(study)
    rows = study.db.execute(
        "SELECT i.source, count(*), l.imported_at, l.imported_by, l.file FROM automatic_imports i "
        "JOIN automatic_imports l ON l.import_id = (SELECT max(import_id) FROM automatic_imports "
        "WHERE study_id = i.study_id AND source = i.source AND staged_by IS NULL) "
        "WHERE i.study_id = ? AND i.staged_by IS NULL "
        "GROUP BY i.source, l.imported_at, l.imported_by, l.file ORDER BY i.source",
        [study.study_id],
    )
    return models(AutomaticSource, [(source, len(current.get(source, {})), *rest)
                                    for source, *rest in rows])
