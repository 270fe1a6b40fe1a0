"""Pinning a protocol: the visible set, its fingerprint, immutability."""

import sqlite3

import pytest
from lexical_builders import lexical_store, pinned, protocol

from evalcore.retrieval.errors import ProtocolNotFoundError, RetrievalRefused
from evalcore.retrieval.fingerprint import corpus_fingerprint
from evalcore.retrieval.pin import get_pinned_protocol, list_pinned_protocols, pin_protocol
from evalcore.store.audit import audit_entries
from evalcore.store.lexical_index import pinned_document_texts
from evalcore.store.study_handle import open_study


def test_pin_records_the_visible_set_and_its_fingerprint(tmp_path, store_target):
    db = lexical_store(store_target)
    pin = pinned(db)
    assert pin.document_count == 4
    assert pin.documents_by_organisation == {"acme": 4}
    texts = pinned_document_texts(open_study(db, "s", None), protocol_name="p1", corpus_id="c")
    assert [doc_id for doc_id, _, _ in texts] == ["a1", "a2", "a3", "a4"]  # not "late", not b*
    assert pin.corpus_fingerprint == corpus_fingerprint(db, pin.visibility)
    assert pin.protocol.corpus_id == "c"
    assert pin.protocol.corpus_fingerprint == pin.corpus_fingerprint
    again = get_pinned_protocol(open_study(db, "s", None), "p1")
    assert again.model_dump(exclude={"pinned_at"}) == pin.model_dump(exclude={"pinned_at"})
    two = pinned(db, "p2", organisations=["acme", "globex"])
    assert two.documents_by_organisation == {"acme": 4, "globex": 2}
    assert [p.name for p in list_pinned_protocols(open_study(db, "s", None))] == ["p1", "p2"]
    assert audit_entries(open_study(db, "s", None))[0].action == "lexical.pin"


@pytest.mark.sqlite_only
def test_pin_name_is_unique_and_pins_are_immutable(tmp_path):
    db = lexical_store(tmp_path)
    pinned(db)
    with pytest.raises(ValueError, match="already pinned"):
        pinned(db, top_k=5)
    with pytest.raises(sqlite3.IntegrityError, match="immutable"):
        db.execute("UPDATE protocols SET corpus_fingerprint = 'x'")
    with pytest.raises(sqlite3.IntegrityError, match="immutable"):
        db.execute("DELETE FROM protocol_documents")
    with pytest.raises(ValueError, match="invalid"):
        pinned(db, name="")


def test_pin_refuses_an_empty_visible_set_and_stores_nothing(tmp_path, store_target):
    db = lexical_store(store_target)
    with pytest.raises(ValueError, match="sees no document"):
        pinned(db, organisations=["nobody"])
    with pytest.raises(ValueError, match="sees no document"):
        pinned(db, cutoff="2020-01-01T00:00:00Z")
    assert db.execute("SELECT count(*) FROM protocols").fetchone()[0] == 0


def test_pin_with_a_stale_fingerprint_is_refused(tmp_path, store_target):
    db = lexical_store(store_target)
    stale = "sha256:" + "0" * 64
    with pytest.raises(RetrievalRefused, match="corpus changed since that fingerprint"):
        pinned(db, corpus_fingerprint=stale)
    assert db.execute("SELECT count(*) FROM protocol_documents").fetchone()[0] == 0
    good = pinned(db, "p-good")
    same = pinned(db, "p-same", corpus_fingerprint=good.corpus_fingerprint)
    assert same.corpus_fingerprint == good.corpus_fingerprint


def test_pin_checks_corpus_and_reference_version(tmp_path, store_target):
    db = lexical_store(store_target)
    with pytest.raises(ValueError, match="uses corpus 'c'"):
        pinned(db, corpus_id="other")
    with pytest.raises(ValueError, match="no reference version .v9."):
        pinned(db, reference_version="v9")


def test_unknown_protocol_names_the_pins_that_exist(tmp_path, store_target):
    db = lexical_store(store_target)
    pinned(db)
    with pytest.raises(ProtocolNotFoundError, match="pinned protocols: p1"):
        get_pinned_protocol(open_study(db, "s", None), "nope")
    with pytest.raises(LookupError, match="no study"):
        pin_protocol(db, study_id="x", name="p", protocol=protocol(), actor="t")


def test_pin_records_an_existing_reference_version(tmp_path, store_target):
    from evalcore.store.references import freeze_reference

    db = lexical_store(store_target)
    freeze_reference(db, study_id="s", name="v1", actor="t")
    assert pinned(db, reference_version="v1").protocol.reference_version == "v1"
