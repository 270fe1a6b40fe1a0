"""The pinned retrieval workflow's rows: an immutable pin is one ``protocols`` row (the
protocol JSON with its corpus fingerprint) and one ``protocol_documents`` row per visible
document (id, content hash, owner), selected by a :class:`~evalcore.store.visibility.Visibility`.
:mod:`evalcore.retrieval.pin` builds and checks pins."""

from collections.abc import Iterable, Iterator

import sqlite_utils

from evalcore.store.document_imports import published
from evalcore.store.lookup import column
from evalcore.store.study_handle import Study
from evalcore.store.visibility import Visibility

#: Rows fetched per round trip when streaming the visible set.
_BATCH = 5000


def pin_exists(study: Study, name: str) -> bool:
    return pin_row(study, name) is not None


def visible_documents(
    db: sqlite_utils.Database, visibility: Visibility
) -> Iterator[tuple[str, str, str | None]]:
    """Stream ``(doc_id, content_hash, owner_org)`` of the visible documents in ``doc_id``
    order."""
    cursor = db.conn.execute(
        "SELECT d.doc_id, d.content_hash, d.owner_org FROM documents d "
        f"WHERE {visibility.where} ORDER BY d.doc_id",
        visibility.params,
    )
    for rows in iter(lambda: cursor.fetchmany(_BATCH), []):
        yield from rows


def insert_pin(
    db: sqlite_utils.Database,
    *,
    study_id: str,
    name: str,
    protocol_json: str,
    fingerprint: str,
    pinned_at: str,
    pinned_by: str,
    documents: Iterable[tuple[str, str, str | None]],
    corpus_generation: int,
) -> None:
    """Write a pin and its document set (call inside the pin's write transaction, which
    read ``documents`` and the corpus's ``corpus_generation``)."""
    db.execute(
        "INSERT INTO protocols (study_id, name, protocol_json, corpus_fingerprint, "
        "pinned_at, pinned_by, corpus_generation) VALUES (?, ?, ?, ?, ?, ?, ?)",
        [study_id, name, protocol_json, fingerprint, pinned_at, pinned_by, corpus_generation],
    )
    db.conn.executemany(
        "INSERT INTO protocol_documents (study_id, protocol, doc_id, content_hash, owner_org) "
        "VALUES (?, ?, ?, ?, ?)",
        ((study_id, name, doc_id, chash, owner) for doc_id, chash, owner in documents),
    )


def pin_row(study: Study, name: str) -> tuple[str, str, str, str] | None:
    """``(protocol_json, corpus_fingerprint, pinned_at, pinned_by)`` of the pin, or None."""
    return study.db.execute(
        "SELECT protocol_json, corpus_fingerprint, pinned_at, pinned_by FROM protocols "
        "WHERE study_id = ? AND name = ?",
        [study.study_id, name],
    ).fetchone()


def pin_generation(study: Study, name: str) -> int | None:
    """The corpus generation the pin was taken at (:mod:`evalcore.store.corpus_generations`);
    None for a pin taken before schema v13 or imported from an archive."""
    row = study.db.execute(
        "SELECT corpus_generation FROM protocols WHERE study_id = ? AND name = ?",
        [study.study_id, name],
    ).fetchone()
    return None if row is None or row[0] is None else int(row[0])


def pin_names(study: Study) -> list[str]:
    """The study's pins, oldest first."""
    return column(study.db, "SELECT name FROM protocols WHERE study_id = ? ORDER BY pinned_at, "
                  "name", [study.study_id])


def pin_owner_counts(study: Study, name: str) -> dict[str, int]:
    """How many pinned documents each owner organisation holds ('' for no owner)."""
    return {
        (org if org is not None else ""): count
        for org, count in study.db.execute(
            "SELECT owner_org, count(*) FROM protocol_documents WHERE study_id = ? AND "
            "protocol = ? GROUP BY owner_org ORDER BY owner_org",
            [study.study_id, name],
        )
    }


def pin_discrepancies(
    study: Study, name: str, visibility: Visibility
) -> Iterator[tuple[str, bool, bool, str | None, str | None, bool]]:
    """Pinned documents not as pinned now, in ``doc_id`` order: ``(doc_id, gone,
    content_changed, owner_then, owner_now, visible_now)``."""
    params = {**visibility.params, "study": study.study_id, "protocol": name}
    yield from study.db.conn.execute(
        "SELECT pd.doc_id, d.doc_id IS NULL, d.content_hash IS NOT pd.content_hash, "
        "pd.owner_org, d.owner_org, "
        f"d.doc_id IS NOT NULL AND ({visibility.where}) "
        "FROM protocol_documents pd "
        "LEFT JOIN documents d ON d.corpus_id = :vis_corpus AND d.doc_id = pd.doc_id "
        f"AND {published('d')} "
        "WHERE pd.study_id = :study AND pd.protocol = :protocol AND ("
        "  d.doc_id IS NULL OR d.content_hash IS NOT pd.content_hash "
        f"  OR d.owner_org IS NOT pd.owner_org OR NOT ({visibility.where})) "
        "ORDER BY pd.doc_id",
        params,
    )


def unpinned_visible_ids(study: Study, name: str, visibility: Visibility) -> Iterator[str]:
    """Visible documents that are not in the pin, in ``doc_id`` order."""
    params = {**visibility.params, "study": study.study_id, "protocol": name}
    for (doc_id,) in study.db.conn.execute(
        f"SELECT d.doc_id FROM documents d WHERE {visibility.where} AND NOT EXISTS ("
        "  SELECT 1 FROM protocol_documents pd WHERE pd.study_id = :study "
        "  AND pd.protocol = :protocol AND pd.doc_id = d.doc_id) "
        "ORDER BY d.doc_id",
        params,
    ):
        yield doc_id
