"""Annotation drafts: an annotator's unsaved work on one pooled item.

A draft holds the note typed for an item but not yet saved with a label, and whether the
item was skipped. It lives in the store (per study, annotator, query and item), so it
survives a reload or a new tab; it is not evidence: replaced as the annotator types,
deleted when the label it was typed for is saved."""

from contextlib import nullcontext

import sqlite_utils

from evalcore.access.decisions import viewer_id
from evalcore.access.identity import normalise_user_id
from evalcore.contract.frozen import FrozenModel
from evalcore.contract.limits import MAX_NOTE_CHARS
from evalcore.io.clock import utc_now_iso
from evalcore.store.study_handle import Study
from evalcore.store.transaction import in_transaction, write_transaction


class Draft(FrozenModel):
    """One item's unsaved note and skip mark."""

    unit_id: str
    note: str = ""
    skipped: bool = False


def drafts(study: Study, query_id: str, annotator: str) -> dict[str, Draft]:
    """unit -> the annotator's draft on the query."""
    rows = study.db.execute(
        "SELECT unit_id, note, skipped FROM annotation_drafts "
        "WHERE study_id = ? AND annotator = ? AND query_id = ? ORDER BY unit_id",
        [study.study_id, viewer_id(annotator) or annotator, query_id],
    )
    return {u: Draft(unit_id=u, note=n, skipped=bool(s)) for u, n, s in rows}


def save_draft(
    db: sqlite_utils.Database,
    *,
    study_id: str,
    query_id: str,
    unit_id: str,
    annotator: str,
    note: str | None = None,
    skipped: bool | None = None,
) -> Draft:
    """Set the note and/or the skip mark of one item (None keeps the stored value); a draft with
    neither is deleted. ValueError for an empty annotator or a note over :data:`MAX_NOTE_CHARS`."""
    if not annotator.strip():
        raise ValueError("annotator is required to keep a draft")
    annotator = normalise_user_id(annotator)
    if note is not None and len(note) > MAX_NOTE_CHARS:
        raise ValueError(f"a note holds at most {MAX_NOTE_CHARS} characters, got {len(note)}")
    key = [study_id, annotator, query_id, unit_id]
    with write_transaction(db):
        row = db.execute(
            "SELECT note, skipped FROM annotation_drafts "
            "WHERE study_id = ? AND annotator = ? AND query_id = ? AND unit_id = ?",
            key,
        ).fetchone()
        old_note, old_skipped = (row[0], bool(row[1])) if row else ("", False)
        draft = Draft(
            unit_id=unit_id,
            note=old_note if note is None else note,
            skipped=old_skipped if skipped is None else skipped,
        )
        if not draft.note and not draft.skipped:
            _delete(db, key)
        else:
            db.execute(
                "INSERT INTO annotation_drafts (study_id, annotator, query_id, "
                "unit_id, note, skipped, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (study_id, annotator, query_id, unit_id) DO UPDATE SET "
                "note = excluded.note, skipped = excluded.skipped, "
                "updated_at = excluded.updated_at",
                [*key, draft.note, int(draft.skipped), utc_now_iso()],
            )
    return draft


def clear_draft(
    db: sqlite_utils.Database, *, study_id: str, query_id: str, unit_id: str, annotator: str
) -> None:
    """Forget the item's draft (its note was saved with a label); inside a caller's write
    transaction, one statement of it."""
    annotator = viewer_id(annotator) or annotator
    with nullcontext() if in_transaction(db) else write_transaction(db):
        _delete(db, [study_id, annotator, query_id, unit_id])


def _delete(db: sqlite_utils.Database, key: list[str]) -> None:
    db.execute(
        "DELETE FROM annotation_drafts "
        "WHERE study_id = ? AND annotator = ? AND query_id = ? AND unit_id = ?",
        key,
    )
