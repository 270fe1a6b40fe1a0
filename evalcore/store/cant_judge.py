""""Can't judge": an annotator's note that a unit could not be judged. Not a label (the unit
stays unknown, no metric changes), but kept with who and when in the audit log (action
``cant_judge``), so the queue puts those units last and a reviewer sees the hard ones."""

import sqlite_utils

from evalcore.access.decisions import viewer_id
from evalcore.access.identity import normalise_user_id
from evalcore.store.audit import record_audit
from evalcore.store.study_handle import Study
from evalcore.store.transaction import write_transaction

ACTION = "cant_judge"


def record_cant_judge(
    db: sqlite_utils.Database,
    *,
    study_id: str,
    query_id: str,
    unit_id: str,
    annotator: str,
    note: str = "",
) -> int:
    """Append a can't-judge mark; returns its audit entry id."""
    if not annotator.strip():
        raise ValueError("annotator is required: say who could not judge the unit")
    annotator = normalise_user_id(annotator)
    with write_transaction(db):
        mark = {"query_id": query_id, "unit_id": unit_id, "note": note}
        return record_audit(db, annotator, ACTION, study_id=study_id, detail=mark)


def cant_judge_units(study: Study, query_id: str, annotator: str) -> list[str]:
    """The units the annotator marked can't-judge on the query, oldest first, each once."""
    rows = study.db.execute(
        "SELECT json_extract(detail_json, '$.unit_id') FROM audit_log "
        "WHERE study_id = ? AND actor = ? AND action = ? "
        "AND json_extract(detail_json, '$.query_id') = ? ORDER BY entry_id",
        [study.study_id, viewer_id(annotator) or annotator, ACTION, query_id],
    )
    return list(dict.fromkeys(r[0] for r in rows if r[0] is not None))
