"""The impact index ranks exactly as FTS5's bm25() over the pinned documents.

Random corpora and queries (frequent and rare words, stems, case, diacritics,
combining marks, punctuation, digits, CJK, repeated words, empty titles) and
column weights (integer, fractional, zero), words FTS5 reads as phrases of several
tokens: every query must return the same doc ids in the same order with the same
scores as FTS5's own bm25() over the same documents (:class:`Fts5Oracle`, on a private
in-memory SQLite). Then the cache: a second execution loads the saved index, a
changed pin never reads it.
"""

import random
from datetime import UTC, datetime

import pytest
from fts5_oracle import Fts5Oracle, match_expression
from store_fixtures import new_store

from evalcore.retrieval import index_cache
from evalcore.retrieval.lexical_protocol import LexicalProtocol
from evalcore.retrieval.pin import pin_protocol
from evalcore.retrieval.snapshot import SnapshotIndex
from evalcore.store.corpus import DocumentIn, add_documents
from evalcore.store.lexical_index import pinned_document_texts
from evalcore.store.study_handle import open_study
from evalcore.store.transaction import read_snapshot

WORDS = [
    "the", "solar", "Solar", "panels", "panel", "paneling", "running", "runs", "run", "café",
    "cafe", "CAFÉ", "naïve", "e\u0301te\u0301", "2026", "x86", "東京", "données", "don't",
    "state-of-the-art", "a.b", "wind", "power", "powers", "powered", "heat", "pumps",
    "ﬁle", "file", "straße", "STRASSE", "\u0301", "x\u200by", "ʼn", "İstanbul", "ǅemal",
    # read by FTS5 as two or three tokens (a spacing or enclosing mark separates them): a
    # query holding one is a phrase, "wind" repeated makes overlapping occurrences
    "wind\u0903power", "wind\u0903wind\u0903wind", "heat\u20ddpumps", "solar\u0903x86",
]
PUNCT = ["", ",", ".", "!", " - ", "(", ")", "\u00a0", "\t", "\n"]
WEIGHTS = [(2.0, 1.0), (1.0, 1.0), (0.3, 1.7), (0.0, 1.0), (7.0, 0.0), (1000, 0.1)]


def sentence(rng: random.Random, n: int) -> str:
    zipf = [1.0 / (i + 1) for i in range(len(WORDS))]
    words = rng.choices(WORDS, weights=zipf, k=n)
    return "".join(w + rng.choice(PUNCT) + " " for w in words).strip()


def build(new_store_target, rng: random.Random, n_docs: int, weights: tuple[float, float]):
    db = new_store(new_store_target("store.db"))
    created = datetime(2026, 1, 1, tzinfo=UTC)
    add_documents(db, "c", [
        DocumentIn(doc_id=f"d{rng.randrange(10**6):06d}-{i}",
                   title=sentence(rng, rng.randrange(0, 6)) or "t",
                   text=sentence(rng, rng.randrange(1, 40)),
                   owner_org="acme", created_at=created)
        for i in range(n_docs)
    ])
    protocol = LexicalProtocol.model_validate({
        "method": "lexical", "top_k": 10, "cutoff": "2026-06-30T00:00:00Z",
        "organisations": ["acme"], "weights": {"title": weights[0], "text": weights[1]},
    })
    pin = pin_protocol(db, study_id="s", name="p", protocol=protocol, actor="tester")
    return db, pin


def oracle(db, protocol: str, weights: tuple[float, float]) -> Fts5Oracle:
    """FTS5's ranking of the pin's documents (read inside the caller's snapshot)."""
    return Fts5Oracle(pinned_document_texts(open_study(db, "s", None), protocol_name=protocol,
                                            corpus_id="c"), weights)


@pytest.mark.parametrize("seed", range(6))
def test_impact_index_ranks_exactly_as_fts5_bm25(tmp_path, seed, new_store_target):
    rng = random.Random(seed)
    weights = WEIGHTS[seed % len(WEIGHTS)]
    db, pin = build(new_store_target, rng, rng.randrange(30, 160), weights)
    queries = [sentence(rng, rng.randrange(1, 5)) for _ in range(60)]
    queries += ["the", "the solar the", "SOLAR Solar solar", "+++", "", "zzz unknown", "東京 x86"]
    queries += ["wind\u0903power", "wind\u0903wind", "heat\u20ddpumps solar", "x86\u0903solar"]
    compared = phrases = 0
    with read_snapshot(db):
        with (
            SnapshotIndex(open_study(db, "s", None), pin) as fast,
        ):
            fts = oracle(db, pin.name, weights)
            assert fast.document_count == fts.document_count == pin.document_count
            for q in queries:
                for limit in (1, 3, 10, 1000):
                    expression = match_expression(q)
                    want = [] if expression is None else fts.search_expression(expression, limit)
                    got = fast.search(q, limit)
                    assert [d for d, _ in got] == [d for d, _ in want], (q, limit)
                    for (_, a), (_, b) in zip(got, want, strict=True):
                        assert a == pytest.approx(b, abs=1e-9, rel=0)
                    compared += len(want)
                    phrases += len(want) if "\u0903" in q or "\u20dd" in q else 0
    assert compared > 100  # the corpora are dense enough to rank something
    assert phrases > 0


def test_second_execution_loads_the_saved_index_and_a_new_pin_does_not(tmp_path, monkeypatch, new_store_target):
    rng = random.Random(42)
    db, pin = build(new_store_target, rng, 50, (2.0, 1.0))
    with read_snapshot(db), SnapshotIndex(open_study(db, "s", None), pin) as first:
        assert not first.loaded_from_cache
        before = first.search("solar panels the", 10)
    path = index_cache.cache_path(db, pin)
    assert path is not None and path.is_file()
    with read_snapshot(db), SnapshotIndex(open_study(db, "s", None), pin) as second:
        assert second.loaded_from_cache
        assert second.search("solar panels the", 10) == before
    # The corpus changes and a new pin follows it: its key differs, the old file is not read.
    add_documents(db, "c", [DocumentIn(doc_id="zz", title="solar", text="solar solar",
                                       owner_org="acme",
                                       created_at=datetime(2026, 1, 2, tzinfo=UTC))])
    protocol = pin.protocol.model_copy(update={"corpus_id": None, "corpus_fingerprint": None})
    other = pin_protocol(db, study_id="s", name="p2", protocol=protocol, actor="tester")
    assert index_cache.cache_path(db, other) != path
    with read_snapshot(db), SnapshotIndex(open_study(db, "s", None), other) as third:
        assert not third.loaded_from_cache
        assert third.document_count == pin.document_count + 1


def test_a_damaged_cache_file_is_rebuilt_not_trusted(tmp_path, new_store_target):
    rng = random.Random(7)
    db, pin = build(new_store_target, rng, 40, (2.0, 1.0))
    with read_snapshot(db), SnapshotIndex(open_study(db, "s", None), pin) as first:
        want = first.search("solar the wind", 5)
    path = index_cache.cache_path(db, pin)
    assert path is not None
    whole = path.read_bytes()
    old_format = path.with_name(path.name.split("-", 1)[0] + "-0123.npz")
    old_format.write_bytes(b"an index of the previous format")
    # Foreign bytes, a truncated file, a cut header, a header that is not the index's.
    for damaged in (b"not an npz file", whole[: len(whole) // 2], whole[:40],
                    b"{}" + whole[2:]):
        path.write_bytes(damaged)
        with read_snapshot(db), SnapshotIndex(open_study(db, "s", None), pin) as again:
            assert not again.loaded_from_cache
            assert again.search("solar the wind", 5) == want
        assert path.read_bytes() != b"not an npz file"
        assert path.read_bytes() == whole  # rebuilt the same, byte for byte
    assert not old_format.exists()  # a file of the older format is removed



@pytest.mark.parametrize("weights", [(2.0, 1.0), (0.3, 1.7)])
def test_words_repeated_many_times_in_few_documents_rank_as_fts5(tmp_path, weights, store_target):
    """Occurrence counts so large for so few postings that the index sorts the distinct
    (title, text) count pairs instead of tabling them all; the scores stay FTS5's."""
    rng = random.Random(3)
    db = new_store(store_target)
    created = datetime(2026, 1, 1, tzinfo=UTC)
    add_documents(db, "c", [
        DocumentIn(doc_id=f"d{i:03d}", owner_org="acme", created_at=created,
                   title=" ".join(["echo"] * rng.randrange(0, 90) + ["wind"] * (i % 3)),
                   text=" ".join(["echo"] * rng.randrange(1, 120) + ["solar"] * (i % 5 + 1)))
        for i in range(4)
    ] + [DocumentIn(doc_id=f"e{i:03d}", title="solar", text=sentence(rng, 20),
                    owner_org="acme", created_at=created) for i in range(40)])
    protocol = LexicalProtocol.model_validate({
        "method": "lexical", "top_k": 10, "cutoff": "2026-06-30T00:00:00Z",
        "organisations": ["acme"], "weights": {"title": weights[0], "text": weights[1]},
    })
    pin = pin_protocol(db, study_id="s", name="p", protocol=protocol, actor="tester")
    with read_snapshot(db), SnapshotIndex(open_study(db, "s", None), pin) as fast:
        fts = oracle(db, "p", weights)
        for q in ("echo", "echo solar", "wind echo", "solar"):
            want = fts.search_expression(match_expression(q), 50)
            got = fast.search(q, 50)
            assert [d for d, _ in got] == [d for d, _ in want] and want, q
            for (_, a), (_, b) in zip(got, want, strict=True):
                assert a == pytest.approx(b, abs=1e-9, rel=0)


# SQLite's query planner (EXPLAIN QUERY PLAN); PostgreSQL plans the join by its statistics.
@pytest.mark.sqlite_only
def test_the_pinned_texts_are_read_by_the_documents_key(tmp_path, new_store_target):
    """The statement reading the pinned documents' texts joins the pinned ids and the
    documents by key, never by scanning one table once per row of the other (after v14
    widened the key, the planner chose that quadratic order: 100,000 documents took 639 s)."""
    db, pin = build(new_store_target, random.Random(1), 40, WEIGHTS[0])
    statements: list[str] = []
    db.conn.set_trace_callback(statements.append)
    params = {"corpus": "c", "study": "s", "protocol": "p"}
    with read_snapshot(db):
        rows = list(pinned_document_texts(open_study(db, "s", None), protocol_name="p",
                                          corpus_id="c"))
    db.conn.set_trace_callback(None)
    assert len(rows) == 40
    reads = [s for s in statements if "protocol_documents" in s and "documents d" in s]
    assert len(reads) == 1
    plan = [row[3] for row in db.conn.execute("EXPLAIN QUERY PLAN " + reads[0], params)]
    # one loop over one side, the other side found by its key; no table scanned
    assert any(step.startswith("SEARCH d") and "(corpus_id=? AND doc_id=?" in step
               or step.startswith("SEARCH pd") and "protocol=? AND doc_id=?" in step
               for step in plan), plan
    assert not any(step.startswith("SCAN") for step in plan), plan


@pytest.mark.parametrize("ids", [["d1", "d10", "d2", "x" * 300, ""],
                                 ["d1", "café", "東京-7", "d\u0301", ""]])
def test_a_saved_index_loads_back_the_same_ids_and_tokens(tmp_path, ids):
    """Doc ids and tokens come back from the file as they were, ASCII (read by slicing the
    decoded text) or not (decoded piece by piece)."""
    from evalcore.retrieval.impact_index import ImpactIndex

    ids = sorted(ids)
    docs = [(doc_id, f"t{i}", f"{doc_id} w{i} shared") for i, doc_id in enumerate(ids)]
    index = ImpactIndex.build(docs, lambda texts: [text.split() for text in texts])
    path = tmp_path / "i.index"
    with path.open("wb") as stream:
        index.save(stream)
    loaded = ImpactIndex.load(path)
    assert loaded.doc_ids == index.doc_ids == ids
    assert loaded.tokens == index.tokens


def test_an_index_read_again_comes_from_memory(tmp_path, monkeypatch, new_store_target):
    """The last indexes read stay in memory, keyed by their file's size and modification time:
    reading one again does not open the file."""
    db, pin = build(new_store_target, random.Random(3), 30, (2.0, 1.0))
    with read_snapshot(db), SnapshotIndex(open_study(db, "s", None), pin):
        pass
    path = index_cache.cache_path(db, pin)
    first = index_cache.load_cached(path)
    assert first is not None

    def unread(*_args):
        raise AssertionError("the file was read again")

    monkeypatch.setattr(index_cache.ImpactIndex, "load", unread)
    assert index_cache.load_cached(path) is first
