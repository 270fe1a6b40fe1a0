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
