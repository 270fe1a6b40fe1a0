"""search_corpus: the interactive BM25 search box over a corpus."""

from datetime import UTC, datetime

import pytest
from lexical_builders import BEFORE, CUTOFF, lexical_store

from evalcore.retrieval.search import SearchHit, search_corpus
from evalcore.store.corpus import DocumentIn, add_documents


@pytest.fixture
def db(tmp_path, store_target):
    return lexical_store(store_target)


def ids(hits):
    return [h.doc_id for h in hits]


def test_ranks_matching_documents_best_first(db):
    hits = search_corpus(db, "c", "solar panels", viewer=None)
    assert all(isinstance(h, SearchHit) for h in hits)
    assert set(ids(hits)) == {"a1", "a3", "b1", "b2", "late"}
    scores = [h.score for h in hits]
    assert scores == sorted(scores, reverse=True) and all(s > 0 for s in scores)
    top = hits[0]
    assert top.title and top.text and top.created_at.endswith("Z")


def test_stemming_matches_word_forms(db):
    assert "a2" in ids(search_corpus(db, "c", "turbine producing", viewer=None))


def test_filters_by_organisation_and_cutoff(db):
    assert set(ids(search_corpus(db, "c", "solar", organisations=["globex"], viewer=None))) == {"b1", "b2"}
    assert "late" not in ids(search_corpus(db, "c", "solar", cutoff=CUTOFF, viewer=None))
    assert "late" in ids(search_corpus(db, "c", "solar", cutoff=datetime(2027, 1, 1, tzinfo=UTC), viewer=None))
    assert search_corpus(db, "c", "solar", organisations=[], viewer=None) == []
    assert search_corpus(db, "other-corpus", "solar", viewer=None) == []


def test_limit_bounds_and_tie_order(db):
    add_documents(db, "c", [DocumentIn(doc_id=d, title="zeta", text="zeta", owner_org="acme",
                                       created_at=BEFORE) for d in ("z3", "z1", "z2")])
    assert ids(search_corpus(db, "c", "zeta", limit=2, viewer=None)) == ["z3", "z2"]  # ties: doc id desc
    for bad in (0, 1001):
        with pytest.raises(ValueError, match="limit"):
            search_corpus(db, "c", "zeta", limit=bad, viewer=None)


def test_title_weight_changes_the_order(db):
    add_documents(db, "c", [
        DocumentIn(doc_id="t", title="quasar", text="filler words here", owner_org="x",
                   created_at=BEFORE),
        DocumentIn(doc_id="x", title="filler", text="quasar quasar words here", owner_org="x",
                   created_at=BEFORE),
    ])
    plain = ids(search_corpus(db, "c", "quasar", organisations=["x"], viewer=None))
    titled = ids(search_corpus(db, "c", "quasar", organisations=["x"], title_weight=10.0, viewer=None))
    assert plain == ["x", "t"] and titled == ["t", "x"]


def test_a_kept_index_follows_every_write_of_the_corpus(db, monkeypatch):
    """The scope's index is kept between searches, and a write of the corpus (its
    generation moves) is seen by the next search: added, changed and deleted texts."""
    from evalcore.retrieval import search

    assert "new" not in ids(search_corpus(db, "c", "quasar solar", viewer=None))
    builds = []
    real_build = search.ImpactIndex.build
    monkeypatch.setattr(search.ImpactIndex, "build",
                        lambda *a, **k: builds.append(1) or real_build(*a, **k))
    search_corpus(db, "c", "solar", viewer=None)
    assert builds == []  # kept from the first search
    add_documents(db, "c", [DocumentIn(doc_id="new", title="quasar", text="quasar",
                                       owner_org="acme", created_at=BEFORE)])
    assert ids(search_corpus(db, "c", "quasar", viewer=None)) == ["new"] and builds == [1]
    db.execute("UPDATE documents SET text = 'pulsar' WHERE doc_id = 'new'")
    db.execute("UPDATE documents SET title = 'pulsar' WHERE doc_id = 'new'")
    assert search_corpus(db, "c", "quasar", viewer=None) == []
    assert [(h.doc_id, h.text) for h in search_corpus(db, "c", "pulsar", viewer=None)] == [
        ("new", "pulsar")]
    db.execute("DELETE FROM documents WHERE doc_id = 'new'")
    assert search_corpus(db, "c", "pulsar", viewer=None) == []


def test_another_process_maps_the_saved_index_and_ranks_the_same(db, monkeypatch):
    """The scope's index is saved in the cache folder: with nothing kept in memory, the next
    search loads it instead of building it, and ranks exactly as the built one."""
    from evalcore.retrieval import index_cache, search

    before = search_corpus(db, "c", "solar panels power", viewer=None)
    search._kept.clear()
    index_cache._load.cache_clear()
    monkeypatch.setattr(search.ImpactIndex, "build", lambda *a, **k: pytest.fail("rebuilt"))
    assert search_corpus(db, "c", "solar panels power", viewer=None) == before


def test_scores_depend_only_on_the_searched_documents(db):
    """BM25's statistics are the scope's: documents outside it (another owner) change
    neither which documents rank nor their scores."""
    before = search_corpus(db, "c", "solar wind", organisations=["acme"], viewer=None)
    add_documents(db, "c", [DocumentIn(doc_id=f"o{i}", title="solar", text="solar wind",
                                       owner_org="other", created_at=BEFORE) for i in range(5)])
    assert search_corpus(db, "c", "solar wind", organisations=["acme"], viewer=None) == before
    assert search_corpus(db, "c", "solar wind", viewer=None) != before


@pytest.mark.sqlite_only
def test_the_demo_corpus_ranks_as_fts5_for_every_demo_query(tmp_path):
    """On the demo's knowledge base, each demo query (and a phrase) returns FTS5's documents
    in FTS5's order with FTS5's scores, FTS5 ranking the same documents."""
    from fts5_oracle import Fts5Oracle, match_expression
    from store_fixtures import built_demo

    from evalcore.demo.study import DEMO_CORPUS_ID
    from evalcore.retrieval.search import search_corpus_unscoped
    from evalcore.store.connection import open_store

    db = open_store(built_demo(tmp_path / "demo.sqlite"))
    texts = [t for (t,) in db.execute("SELECT text FROM queries")] + ["backup\u0903restore"]
    fts = Fts5Oracle(db.execute("SELECT doc_id, title, text FROM documents WHERE corpus_id = ?",
                                [DEMO_CORPUS_ID]).fetchall(), (1.0, 1.0))
    ranked = 0
    for text in texts:
        want = fts.search_expression(match_expression(text), 20)
        got = search_corpus_unscoped(db, DEMO_CORPUS_ID, text, limit=20)
        assert [(h.doc_id, h.score) for h in got] == want, text
        ranked += len(want)
    assert len(texts) > 5 and ranked > 50


def test_no_full_text_sql_runs_on_the_store(db):
    """Searching and executing a pin read only documents' texts from the store: tokenizing
    and ranking happen in evalcore (the tokenizer on its own in-memory SQLite), so any
    engine holding the store ranks the same."""
    from lexical_builders import pinned

    from evalcore.retrieval.workflow import execute_protocol

    pinned(db)
    statements: list[str] = []
    db.conn.set_trace_callback(statements.append)
    try:
        assert search_corpus(db, "c", "solar panels", viewer=None)
        execute_protocol(db, study_id="s", protocol_name="p1", run_name="r", actor="tester")
    finally:
        db.conn.set_trace_callback(None)
    assert any("SELECT pd.doc_id" in s for s in statements)  # the pinned texts were read
    for word in ("VIRTUAL TABLE", "fts5(", "fts5vocab", " MATCH ", "bm25(", "temp."):
        assert not [s for s in statements if word.lower() in s.lower()], word
