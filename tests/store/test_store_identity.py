"""The store's identity (schema v22): one random id per store, never changed; the shared
FTS5 index is gone from a migrated store, its documents and searches kept."""

import sqlite3

import pytest
from store_fixtures import new_store, store_at_version

from evalcore.retrieval.search import search_corpus_unscoped
from evalcore.store import schema
from evalcore.store.connection import open_store
from evalcore.store.store_identity import store_identity, store_place

#: The version of the migration that added the identity and dropped documents_fts.
IDENTITY_VERSION = schema.MIGRATIONS.index(schema._STORE_IDENTITY_NO_FTS) + 1


@pytest.mark.sqlite_only
def test_each_store_has_its_own_identity_that_never_changes(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    one, two = new_store(tmp_path / "a"), new_store(tmp_path / "b")
    memory = open_store(":memory:")
    ids = {store_identity(one), store_identity(two), store_identity(memory)}
    assert len(ids) == 3
    assert store_identity(one) == store_identity(one)
    assert str(tmp_path / "a") in store_identity(one)
    with pytest.raises(sqlite3.IntegrityError, match="never changes"):
        one.execute("UPDATE store_identity SET store_id = 'x'")


@pytest.mark.sqlite_only
def test_a_copy_of_the_file_is_another_store_to_a_cache(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    db = new_store(tmp_path / "a")
    db.conn.close()
    (tmp_path / "b" / "store.db").write_bytes((tmp_path / "a" / "store.db").read_bytes())
    a, b = open_store(tmp_path / "a" / "store.db"), open_store(tmp_path / "b" / "store.db")
    assert a.execute("SELECT store_id FROM store_identity").fetchall() == b.execute(
        "SELECT store_id FROM store_identity").fetchall()
    assert store_identity(a) != store_identity(b)


def _identity_store(target) -> None:
    new_store(target).conn.close()


def test_a_copy_of_a_store_is_another_store_to_a_cache_on_either_engine(built_store_target):
    """Two copies of one built store (files at two paths; on PostgreSQL two databases made
    from one template) hold the same id, yet a cache keeps them apart; reopening one is
    the same store."""
    target = built_store_target("identity", _identity_store, "a.db")
    a = open_store(target)
    b = open_store(built_store_target("identity", _identity_store, "b.db"))
    assert a.execute("SELECT store_id FROM store_identity").fetchall() == b.execute(
        "SELECT store_id FROM store_identity").fetchall()
    assert store_identity(a) != store_identity(b)
    assert store_place(a) != store_place(b) and store_place(a) is not None
    assert store_identity(open_store(target)) == store_identity(a)


@pytest.mark.sqlite_only
def test_migrating_drops_the_shared_fts_index_and_keeps_the_documents(tmp_path):
    path = tmp_path / "old.db"
    store_at_version(
        path, IDENTITY_VERSION - 1,
        "INSERT INTO documents (corpus_id, doc_id, title, text, created_at, content_hash) "
        "VALUES ('c', 'd1', 'Solar', 'solar panels', '2026-01-01T00:00:00Z', 'h1')")
    raw = sqlite3.connect(path)
    assert raw.execute("SELECT count(*) FROM documents_fts WHERE documents_fts MATCH 'solar'"
                       ).fetchone()[0] == 1
    raw.close()
    db = open_store(path)
    assert schema.schema_version(db) == schema.SCHEMA_VERSION >= IDENTITY_VERSION
    names = {r[0] for r in db.execute("SELECT name FROM sqlite_master")}
    assert not {n for n in names if n.startswith("documents_fts")}
    assert db.execute("SELECT count(*) FROM store_identity").fetchone()[0] == 1
    assert [h.doc_id for h in search_corpus_unscoped(db, "c", "panel")] == ["d1"]


@pytest.mark.sqlite_only
def test_an_unmigrated_older_store_has_no_identity_and_says_so(tmp_path):
    path = tmp_path / "old.db"
    store_at_version(path, IDENTITY_VERSION - 1)
    with pytest.raises(LookupError, match="older than this evalcore's.*open_store"):
        store_identity(open_store(path, migrate=False))


def test_a_store_is_opened_again_at_its_location(store_target) -> None:
    """Background work opens its own connection at store_location (a file's path or the
    URL): the same store, on either engine."""
    from evalcore.store.store_identity import store_location

    db = open_store(store_target)
    try:
        again = open_store(store_location(db))
        assert store_identity(again) == store_identity(db)
        again.close()
    finally:
        db.close()


def test_asking_an_unmigrated_store_for_its_identity_leaves_the_transaction_usable(
        store_target) -> None:
    """On PostgreSQL a failed statement aborts the open transaction: asking a store without
    the identity table (opened without migrating) must not fail a statement, so a read
    snapshot around it goes on (on either engine)."""
    from evalcore.store.transaction import read_snapshot

    db = open_store(store_target, migrate=False)
    try:
        with read_snapshot(db):
            with pytest.raises(LookupError, match="older than this evalcore's"):
                store_identity(db)
            assert db.execute("SELECT 1").fetchone()[0] == 1
    finally:
        db.close()
