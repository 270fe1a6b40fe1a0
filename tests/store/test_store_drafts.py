"""Annotation drafts: an unsaved note and a skip mark per annotator, query and item."""

import pytest
from store_fixtures import new_store

from evalcore.store.drafts import MAX_NOTE_CHARS, Draft, clear_draft, drafts, save_draft
from evalcore.store.schema import SCHEMA_VERSION, schema_version
from evalcore.store.study_handle import open_study


@pytest.fixture
def db(tmp_path, store_target):
    return new_store(store_target)


def _save(db, unit="A", who="kim", query="q1", **changes) -> Draft:
    return save_draft(db, study_id="s", query_id=query, unit_id=unit, annotator=who, **changes)


def test_note_and_skip_are_kept_separately_per_annotator_query_and_item(db):
    _save(db, note="half outdated")
    _save(db, skipped=True)
    _save(db, unit="B", skipped=True)
    _save(db, who="bob", note="bob's")
    _save(db, query="q2", note="other query")
    assert drafts(open_study(db, "s", None), "q1", "kim") == {
        "A": Draft(unit_id="A", note="half outdated", skipped=True),
        "B": Draft(unit_id="B", skipped=True),
    }
    assert drafts(open_study(db, "s", None), "q1", "bob") == {"A": Draft(unit_id="A", note="bob's")}


def test_an_empty_draft_is_deleted_and_clear_forgets_it(db):
    _save(db, note="x")
    _save(db, note="")
    assert drafts(open_study(db, "s", None), "q1", "kim") == {}
    _save(db, note="y", skipped=True)
    clear_draft(db, study_id="s", query_id="q1", unit_id="A", annotator="kim")
    assert drafts(open_study(db, "s", None), "q1", "kim") == {}


@pytest.mark.parametrize(("who", "note", "match"), [
    (" ", "x", "annotator"), ("kim", "x" * (MAX_NOTE_CHARS + 1), "at most"),
])
def test_bad_drafts_are_refused_and_nothing_is_written(db, who, note, match):
    with pytest.raises(ValueError, match=match):
        _save(db, who=who, note=note)
    assert db.execute("SELECT count(*) FROM annotation_drafts").fetchone()[0] == 0


def test_the_drafts_table_arrives_by_migration(db):
    assert schema_version(db) == SCHEMA_VERSION
    assert "annotation_drafts" in db.table_names()
