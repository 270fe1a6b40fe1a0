"""Frozen reference versions: snapshot, hash, immutability, names never reused."""

import sqlite3

import pytest
from store_fixtures import new_store

from evalcore.store.audit import audit_entries
from evalcore.store.completeness import mark_complete
from evalcore.store.dialect import integrity_errors
from evalcore.store.labels import record_label
from evalcore.store.references import (
    ReferenceExistsError,
    ReferenceNotFoundError,
    freeze_reference,
    get_reference,
    list_references,
    reference_completeness,
    reference_hash,
    reference_labels,
    verify_reference,
)
from evalcore.store.study_handle import open_study


@pytest.fixture
def db(tmp_path, store_target):
    db = new_store(store_target)
    for unit, gain, who in [("A", 2, "a"), ("B", 0, "a"), ("C", 1, "a"), ("C", 3, "b")]:
        record_label(db, study_id="s", query_id="q1", unit_id=unit, gain=gain, annotator=who)
    record_label(db, study_id="s", query_id="q2", unit_id="A", gain=1, annotator="a")
    mark_complete(db, study_id="s", query_id="q1", actor="lead")
    return db


def test_freeze_snapshots_resolved_labels_without_conflicts(db):
    v1 = freeze_reference(db, study_id="s", name="v1", actor="lead")
    assert reference_labels(open_study(db, "s", None), "v1") == {
        "q1": {"A": 2, "B": 0},
        "q2": {"A": 1},
    }
    assert reference_completeness(open_study(db, "s", None), "v1") == {"q1": True, "q2": False}
    assert (v1.n_queries, v1.n_labels, v1.n_complete) == (2, 3, 1)
    assert v1.content_hash == reference_hash(
        {"q1": {"A": 2, "B": 0}, "q2": {"A": 1}}, {"q1": True, "q2": False}
    )
    assert get_reference(open_study(db, "s", None), "v1") == v1
    assert verify_reference(open_study(db, "s", None), "v1")
    assert audit_entries(open_study(db, "s", None))[0].action == "reference.freeze"


def test_later_labels_do_not_change_a_frozen_version(db):
    v1 = freeze_reference(db, study_id="s", name="v1", actor="lead")
    record_label(db, study_id="s", query_id="q1", unit_id="D", gain=4, annotator="a")
    v2 = freeze_reference(db, study_id="s", name="v2", actor="lead")
    assert reference_labels(open_study(db, "s", None), "v1")["q1"] == {"A": 2, "B": 0}
    assert reference_labels(open_study(db, "s", None), "v2")["q1"] == {"A": 2, "B": 0, "D": 4}
    assert reference_completeness(open_study(db, "s", None), "v2")["q1"] is False  # auto-reopened
    assert v1.content_hash != v2.content_hash
    assert [v.name for v in list_references(open_study(db, "s", None))] == ["v1", "v2"]


def test_names_are_never_reused(db):
    freeze_reference(db, study_id="s", name="v1", actor="lead")
    with pytest.raises(ReferenceExistsError, match="never reused"):
        freeze_reference(db, study_id="s", name="v1", actor="lead")


def test_frozen_rows_are_immutable(db):
    freeze_reference(db, study_id="s", name="v1", actor="lead")
    for sql in (
        "UPDATE reference_labels SET gain = 4",
        "DELETE FROM reference_labels",
        "UPDATE reference_completeness SET population_complete = 0",
        "DELETE FROM reference_versions",
        "UPDATE reference_versions SET content_hash = 'x'",
    ):
        with pytest.raises(integrity_errors(), match="immutable"):
            db.execute(sql)
    assert verify_reference(open_study(db, "s", None), "v1")


def test_no_row_can_be_added_to_a_sealed_version(db):
    freeze_reference(db, study_id="s", name="v1", actor="lead")
    for sql in (
        "INSERT INTO reference_labels VALUES ('s', 'v1', 'q9', 'Z', 1)",
        "INSERT INTO reference_completeness VALUES ('s', 'v1', 'q9', 1)",
        "DELETE FROM reference_seals",
    ):
        with pytest.raises(integrity_errors(), match="immutable"):
            db.execute(sql)


def test_tampering_behind_the_triggers_is_detected_by_hash(db):
    freeze_reference(db, study_id="s", name="v1", actor="lead")
    db.execute("DROP TRIGGER reference_labels_sealed")
    db.execute("INSERT INTO reference_labels VALUES ('s', 'v1', 'q9', 'Z', 1)")
    assert not verify_reference(open_study(db, "s", None), "v1")


def test_unknown_version_names_the_known_ones(db):
    freeze_reference(db, study_id="s", name="v1", actor="lead")
    with pytest.raises(ReferenceNotFoundError, match="frozen versions: v1"):
        get_reference(open_study(db, "s", None), "v7")


@pytest.mark.sqlite_only
def test_migration_seals_versions_frozen_before_it(tmp_path):
    from store_fixtures import store_at_version

    from evalcore.store import schema
    from evalcore.store.connection import open_store

    path = tmp_path / "old.db"
    store_at_version(path, 5, "INSERT INTO reference_versions VALUES ('s', 'v0', "
                     "'2026-01-01T00:00:00Z', 'lead', 'sha256:x')")
    db = open_store(path)
    assert db.execute("PRAGMA user_version").fetchone()[0] == schema.SCHEMA_VERSION
    with pytest.raises(sqlite3.IntegrityError, match="immutable"):
        db.execute("INSERT INTO reference_labels VALUES ('s', 'v0', 'q', 'A', 1)")
