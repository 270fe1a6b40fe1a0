""""Can't judge" marks: kept with who and when, never a label."""

from pathlib import Path

import pytest
from store_fixtures import new_store

from evalcore.store.cant_judge import cant_judge_units, record_cant_judge
from evalcore.store.resolution import resolve_query
from evalcore.store.study_handle import open_study


def test_marks_are_kept_per_annotator_and_query_and_are_not_labels(tmp_path: Path, store_target) -> None:
    db = new_store(store_target)
    record_cant_judge(db, study_id="s", query_id="q1", unit_id="b", annotator="ann",
                      note="needs legal")
    record_cant_judge(db, study_id="s", query_id="q1", unit_id="a", annotator="ann")
    record_cant_judge(db, study_id="s", query_id="q1", unit_id="b", annotator="ann")
    record_cant_judge(db, study_id="s", query_id="q2", unit_id="c", annotator="ann")
    record_cant_judge(db, study_id="s", query_id="q1", unit_id="d", annotator="bob")
    assert cant_judge_units(open_study(db, "s", None), "q1", "ann") == ["b", "a"]
    assert cant_judge_units(open_study(db, "s", None), "q1", "bob") == ["d"]
    assert cant_judge_units(open_study(db, "s", None), "q9", "ann") == []
    assert resolve_query(open_study(db, "s", None), "q1") == {}
    assert db.execute("SELECT count(*) FROM label_events").fetchone()[0] == 0
    note = db.execute("SELECT json_extract(detail_json, '$.note') FROM audit_log "
                      "ORDER BY entry_id LIMIT 1").fetchone()[0]
    assert note == "needs legal"


def test_an_annotator_is_required(tmp_path: Path, store_target) -> None:
    db = new_store(store_target)
    with pytest.raises(ValueError, match="annotator is required"):
        record_cant_judge(db, study_id="s", query_id="q1", unit_id="a", annotator=" ")
