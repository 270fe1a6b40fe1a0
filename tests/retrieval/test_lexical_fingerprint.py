"""The corpus fingerprint covers exactly the documents a protocol may see."""

import hashlib
import random
from datetime import UTC, datetime

from store_fixtures import new_store

from evalcore.retrieval.fingerprint import corpus_fingerprint, fingerprint_pairs
from evalcore.store.corpus import DocumentIn, add_documents
from evalcore.store.hashing import content_hash
from evalcore.store.visibility import Visibility, cutoff_key

T0 = datetime(2026, 1, 1, tzinfo=UTC)
CUT = datetime(2026, 6, 30, tzinfo=UTC)


def reference_fingerprint(pairs):
    """An independent restatement of the documented encoding."""
    h = hashlib.sha256()
    for doc_id, chash in sorted(pairs):
        raw = doc_id.encode()
        h.update(len(raw).to_bytes(8, "big") + raw + chash.encode() + b"\n")
    return "sha256:" + h.hexdigest()


def doc(doc_id, text="t", owner="acme", created=T0):
    return DocumentIn(doc_id=doc_id, title="", text=text, owner_org=owner, created_at=created)


def test_fingerprint_matches_the_documented_encoding_and_ignores_insert_order(tmp_path):
    ids = [f"d{i}" for i in range(50)] + ["é", "z", "Z", "a b", "ß", "日本"]
    shuffled = ids[:]
    random.Random(3).shuffle(shuffled)
    (tmp_path / "1").mkdir()
    (tmp_path / "2").mkdir()
    db1, db2 = new_store(tmp_path / "1"), new_store(tmp_path / "2")
    add_documents(db1, "c", [doc(i, text=i) for i in ids])
    add_documents(db2, "c", [doc(i, text=i) for i in shuffled])
    vis = Visibility.of("c", ["acme"], CUT)
    expected = reference_fingerprint([(i, content_hash("", i)) for i in ids])
    assert corpus_fingerprint(db1, vis) == expected == corpus_fingerprint(db2, vis)


def test_only_visible_documents_count(tmp_path, store_target):
    db = new_store(store_target)
    add_documents(db, "c", [doc("a"), doc("b")])
    vis = Visibility.of("c", ["acme"], CUT)
    before = corpus_fingerprint(db, vis)
    add_documents(db, "c", [doc("other-org", owner="globex"), doc("no-owner", owner=None),
                            doc("late", created=datetime(2026, 7, 1, tzinfo=UTC))])
    add_documents(db, "other-corpus", [doc("x")])
    assert corpus_fingerprint(db, vis) == before
    add_documents(db, "c", [doc("b", text="edited")])
    assert corpus_fingerprint(db, vis) != before


def test_cutoff_compares_instants_not_strings(tmp_path, store_target):
    db = new_store(store_target)
    half_second_late = datetime(2026, 6, 30, 0, 0, 0, 500000, tzinfo=UTC)
    add_documents(db, "c", [doc("on-time", created=CUT), doc("late", created=half_second_late),
                            doc("early", created=datetime(2026, 6, 29, 23, 59, 59, 999999,
                                                          tzinfo=UTC))])
    rows = db.conn.execute(
        "SELECT d.doc_id FROM documents d WHERE " + Visibility.of("c", ["acme"], CUT).where
        + " ORDER BY d.doc_id", Visibility.of("c", ["acme"], CUT).params
    ).fetchall()
    assert [r[0] for r in rows] == ["early", "on-time"]
    assert cutoff_key(CUT) == "2026-06-30T00:00:00.000000Z"


def test_empty_set_has_the_fingerprint_of_nothing():
    assert fingerprint_pairs([]) == "sha256:" + hashlib.sha256().hexdigest()
    # Lengths make the encoding unambiguous: ("ab", h) differs from ("a", "b" + h).
    assert fingerprint_pairs([("ab", "sha256:0")]) != fingerprint_pairs([("a", "bsha256:0")])
