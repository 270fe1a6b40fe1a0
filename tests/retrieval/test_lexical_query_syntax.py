"""User query text can never break or inject FTS5 syntax."""

import sqlite3

import pytest
from fts5_oracle import Fts5Oracle, match_expression, quote_term
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lexical_builders import lexical_store, pinned

from evalcore.retrieval.query_syntax import query_terms
from evalcore.retrieval.search import search_corpus
from evalcore.retrieval.snapshot import SnapshotIndex
from evalcore.store.study_handle import open_study

HOSTILE = [
    '"',
    '""',
    '"solar',
    "AND(",
    "solar AND(",
    "NEAR(solar panels, 2)",
    "NEAR(",
    "*",
    "sol*",
    "^solar",
    "title:solar",
    "{title text}: solar",
    "- solar",
    "solar -panels",
    "(",
    ")",
    "solar OR",
    "OR",
    "AND NOT",
    "NOT solar",
    ":",
    "+",
    "\x00",
    "solar\x00panels",
    "العربية solar",  # RTL
    "\u202esolar\u202c",  # RTL override around a word
    "😀 solar 🌞",
    "ＳＯＬＡＲ",  # full-width
    "Ｓolar\u0301",  # combining mark
    "\ue000",  # private use
    "\u0301",  # lone combining mark
    "\ud800 solar",  # lone surrogate (cannot even be encoded as UTF-8)
    "x" * 10_000,
    "solar " * 2_000,
    " ".join(f"w{i}" for i in range(2_000)),
    '"' * 10_000,
    "",
    "   \t\n",
]


def test_terms_are_words_deduplicated_case_insensitively():
    assert query_terms("Solar, solar panels! SOLAR") == ["Solar", "panels"]
    assert query_terms('NEAR(a b) AND "c" title:d *e ^f') == [
        "NEAR", "a", "b", "AND", "c", "title", "d", "e", "f"
    ]
    assert query_terms("solar\x00panels") == ["solar", "panels"]
    assert query_terms("😀 +++ ---") == []


def test_expression_quotes_every_term_and_joins_with_or():
    assert match_expression("solar AND panels") == '"solar" OR "AND" OR "panels"'
    assert match_expression("...") is None
    assert quote_term('a"b') == '"a""b"'


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    db = lexical_store(tmp_path_factory.mktemp("syntax"))
    pinned(db)
    return db


@pytest.mark.parametrize("text", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_text_never_raises_in_search_or_snapshot(store, text):
    hits = search_corpus(store, "c", text, limit=5, viewer=None)
    assert len(hits) <= 5
    from evalcore.retrieval.pin import get_pinned_protocol

    store.conn.execute("BEGIN")
    try:
        with SnapshotIndex(
            open_study(store, "s", None), get_pinned_protocol(open_study(store, "s", None), "p1")
        ) as index:
            ranked = index.search(text, 5)
    finally:
        store.conn.execute("COMMIT")
    assert len(ranked) <= 5


def test_operators_are_words_not_syntax(store):
    # "solar AND(" would be a syntax error in raw FTS5; here it is the words solar and AND.
    plain = [h.doc_id for h in search_corpus(store, "c", "solar", viewer=None)]
    assert [h.doc_id for h in search_corpus(store, "c", "solar AND(", viewer=None)] == plain
    assert [h.doc_id for h in search_corpus(store, "c", "title:solar", viewer=None)] != []
    # NOT does not exclude: it is a term like any other.
    assert {h.doc_id for h in search_corpus(store, "c", "NOT solar", viewer=None)} >= set(plain)
    raw = sqlite3.connect(":memory:")
    raw.execute("CREATE VIRTUAL TABLE f USING fts5(title, text, tokenize='porter unicode61')")
    with pytest.raises(sqlite3.OperationalError):
        raw.execute("SELECT * FROM f WHERE f MATCH 'solar AND('")


def _oracle(store) -> Fts5Oracle:
    """FTS5's ranking of the corpus (the search's scope: every document of "c", no reader's
    filter in a local-mode corpus)."""
    rows = store.execute("SELECT doc_id, title, text FROM documents WHERE corpus_id = 'c'")
    return Fts5Oracle(rows.fetchall(), (1.0, 1.0))


@pytest.mark.parametrize("text", HOSTILE + ["solar panels", "Solar wind turbine", "producing"],
                         ids=range(len(HOSTILE) + 3))
def test_search_finds_what_fts5_finds_with_its_scores(store, text):
    expression = match_expression(text)
    want = [] if expression is None else _oracle(store).search_expression(expression, 10)
    assert [(h.doc_id, h.score) for h in search_corpus(store, "c", text, limit=10,
                                                       viewer=None)] == want


def test_no_term_means_no_result(store):
    assert search_corpus(store, "c", "+++ 😀 ---", viewer=None) == []
    assert search_corpus(store, "c", "", viewer=None) == []


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(max_size=300))
def test_any_text_never_raises(store, text):
    expression = match_expression(text)
    hits = search_corpus(store, "c", text, limit=3, viewer=None)
    if expression is not None:  # FTS5 parses the expression, and finds what the search finds
        want = _oracle(store).search_expression(expression, 3)
        assert [(h.doc_id, h.score) for h in hits] == want
    else:
        assert hits == []


@settings(max_examples=100, deadline=None)
@given(st.lists(st.text(alphabet=st.characters(codec="utf-8"), min_size=1), max_size=8))
def test_any_terms_list_round_trips_through_fts5_parser(terms):
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE f USING fts5(title, text, tokenize='porter unicode61')")
    conn.execute("INSERT INTO f VALUES ('solar', 'panels')")
    expression = match_expression(" ".join(terms))
    if expression is not None:
        conn.execute("SELECT rowid FROM f WHERE f MATCH ?", [expression]).fetchall()
