"""A read snapshot is one consistent view and writes nothing, on both engines.

A write made inside it from reads of an older view could undo another writer's
work; SQLite would refuse it only when another writer had committed in between,
PostgreSQL never. Both engines now refuse every write inside a snapshot, and the
connection writes again as soon as the snapshot ends.
"""

import pytest

from evalcore.store.connection import open_store
from evalcore.store.labels import record_label
from evalcore.store.transaction import read_snapshot
from tests.store_fixtures import new_store


def _events(db) -> int:
    return db.execute("SELECT COUNT(*) FROM label_events").fetchone()[0]


def test_a_label_written_inside_a_snapshot_is_refused_and_leaves_nothing(store_target):
    db = new_store(store_target)
    with pytest.raises(Exception, match="(?i)read.?only"), read_snapshot(db):
        record_label(db, study_id="s", query_id="q1", unit_id="d1", gain=2, annotator="ann")
    assert _events(db) == 0
    assert not db.conn.in_transaction
    # the snapshot is over: the same connection writes again
    record_label(db, study_id="s", query_id="q1", unit_id="d1", gain=2, annotator="ann")
    assert _events(db) == 1


def test_a_snapshot_does_not_see_a_write_committed_during_it(store_target):
    db = new_store(store_target)
    other = open_store(store_target)
    with read_snapshot(db):
        before = _events(db)
        record_label(other, study_id="s", query_id="q1", unit_id="d1", gain=1, annotator="b")
        assert _events(db) == before
    assert _events(db) == before + 1
    other.conn.close()


def test_a_snapshot_ends_when_its_reads_fail(store_target):
    db = new_store(store_target)
    with pytest.raises(ZeroDivisionError), read_snapshot(db):
        _events(db)
        raise ZeroDivisionError
    assert not db.conn.in_transaction
    record_label(db, study_id="s", query_id="q1", unit_id="d1", gain=3, annotator="ann")
    assert _events(db) == 1
