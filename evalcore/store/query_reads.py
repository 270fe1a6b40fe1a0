"""A study's query texts and registered ids, read through a :class:`~evalcore.store.study_handle.Study`."""

from collections.abc import Iterable

from evalcore.contract.query_order import natural_key
from evalcore.store.dialect import in_chunks
from evalcore.store.lookup import exists
from evalcore.store.study_handle import Study


def query_texts(study: Study, query_ids: Iterable[str] | None = None) -> dict[str, str]:
    """query_id -> text, for every query of the study or only ``query_ids`` (when given)."""
    if query_ids is None:
        rows = study.db.execute(
            "SELECT query_id, text FROM queries WHERE study_id = ?", [study.study_id]
        ).fetchall()
        return dict(sorted(rows, key=lambda row: natural_key(row[0])))
    out: dict[str, str] = {}
    for marks, chunk in in_chunks(query_ids):
        out.update(
            study.db.execute(
                f"SELECT query_id, text FROM queries WHERE study_id = ? AND query_id IN ({marks})",
                [study.study_id, *chunk],
            ).fetchall()
        )
    return out


def query_text(study: Study, query_id: str) -> str:
    """One query's text ('' when the query has no text or is not registered)."""
    row = study.db.execute(
        "SELECT text FROM queries WHERE study_id = ? AND query_id = ?", [study.study_id, query_id]
    ).fetchone()
    return row[0] if row else ""


def query_registered(study: Study, query_id: str) -> bool:
    """Is ``query_id`` a registered query of the study?"""
    return exists(study.db, "SELECT 1 FROM queries WHERE study_id = ? AND query_id = ?",
                  [study.study_id, query_id])
