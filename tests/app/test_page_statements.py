"""The store statements a page run executes do not grow with the number of studies or runs.

On PostgreSQL each statement is a client round trip, so a page that reads a study's runs
one at a time (or lists the studies one by one, or re-reads the reference once per run)
is slower there in proportion to the study; these tests count the statements the
session's connection executes for one page run, on a small study and again once it holds
more studies and runs.
"""

from collections import Counter

from app_harness import RESULTS, STUDY

from evalcore.store.runs import add_run
from evalcore.store.studies import StudyIn
from evalcore.store.study_setup import create_study

PAGES = ["home", "annotate", "data", "compare", "dashboard", "agreement", "inspector",
         "reports", "members"]


def _statements(at, page: str) -> list[str]:
    """Statements the session's store connection executes for one run of ``page`` (after
    a first run of it, which builds what the app keeps between runs)."""
    at.switch_page(f"views/{page}.py").run()
    db = at.session_state["_rl_db"]
    seen: list[str] = []
    db.conn.set_trace_callback(seen.append)
    try:
        at.switch_page(f"views/{page}.py").run()
    finally:
        db.conn.set_trace_callback(None)
    assert not at.exception, at.exception
    return seen


def _grow(db, runs: int, studies: int) -> None:
    for n in range(runs):
        add_run(db, study_id=STUDY, name=f"extra{n}", source="imported", k=3,
                results=[(q, r, u, 10.0 - r) for q, r, u in RESULTS["r1"]])
    for n in range(studies):
        create_study(db, StudyIn(study_id=f"other{n}", name=f"Other {n}", corpus_id="c1"))


def test_page_statements_do_not_grow_with_studies_or_runs(small_store, new_app):
    _, db = small_store
    at = new_app("alice")
    before = {page: len(_statements(at, page)) for page in PAGES}
    _grow(db, runs=4, studies=4)
    after = {page: len(_statements(at, page)) for page in PAGES}
    # a run's rankings are its own read: the annotate page's per-query results read each
    # run's ranking and permitted units, nothing else per run
    allowed = {page: 0 for page in PAGES} | {"annotate": 2 * 4}
    grown = {page: after[page] - before[page] for page in PAGES}
    assert all(grown[p] <= allowed[p] for p in PAGES), (before, after)


def test_the_sidebar_reads_the_studies_once_per_page_run(small_store, new_app):
    """The identity gate and the study picker both need the studies and their modes: one
    statement reads them for both (each a round trip on PostgreSQL)."""
    _, db = small_store
    create_study(db, StudyIn(study_id="other", name="Other", corpus_id="c1"))
    at = new_app("alice")
    db_seen: list[str] = []
    handle = at.session_state["_rl_db"]
    handle.conn.set_trace_callback(db_seen.append)
    try:
        at.switch_page("views/home.py").run()
    finally:
        handle.conn.set_trace_callback(None)
    assert not at.exception, at.exception
    listings = [s for s in db_seen if "FROM studies" in s and "ORDER BY study_id" in s]
    assert len(listings) == 1, listings
    assert not any("FROM study_members" in s and "WHERE" not in s for s in db_seen), db_seen


def test_the_sidebar_says_how_many_team_mode_studies_it_leaves_out(small_store, new_app):
    from evalcore.store.members import add_member

    _, db = small_store
    at = new_app("alice")
    assert not any("not shown" in c.value for c in at.sidebar.caption)
    for n in (1, 2):
        create_study(db, StudyIn(study_id=f"team{n}", name=f"Team {n}", corpus_id="c1"))
    for n in (1, 2):
        add_member(db, study_id=f"team{n}", user="lead@example.org", role="lead",
                   actor="lead@example.org")
    at.run()
    assert not at.exception, at.exception
    shown = [c.value for c in at.sidebar.caption if "not shown" in c.value]
    assert shown == ["2 team-mode studies are not shown: they need sign-in (see the README, "
                     "Team sign-in)."]
    assert [o for o in at.sidebar.selectbox(key="rl_study_select").options] == ["Small study"]


def test_the_inspector_reads_each_thing_once(small_store, new_app):
    """One run of the inspector (one run, one query) reads the run, its pinned set, the
    query's labels and completeness once, for the list and its measures alike, and checks
    its documents' scoping once for the whole list, not once per document."""
    at = new_app("alice")
    seen = _statements(at, "inspector")
    frame = at.dataframe[0].value
    assert list(frame["unit"]) == ["d1", "d2", "d3"]  # three documents shown
    scoping = [s for s in seen if "JOIN study_members" in s and "corpus_id" in s]
    assert len(scoping) == 1, scoping
    again = {s: n for s, n in Counter(seen).items() if n > 1}
    assert not again, again


#: The statement that reads the store's marks (evalcore.store.marks.store_marks).
_MARKS = "SELECT (SELECT coalesce(max(event_id), 0) FROM label_events)"


def test_an_annotate_run_reads_the_progress_queries_and_document_once(small_store, new_app):
    """The query selector, the work area's progress bar and the next-query button share one
    read of the study's progress (and of its queries); the item shown is read once, for
    its title, text and provenance alike."""
    at = new_app("alice")
    seen = _statements(at, "annotate")
    assert any(b.key and b.key.startswith("grade_") for b in at.button)  # an item is shown
    documents = [s for s in seen if "FROM documents WHERE corpus_id" in s and "doc_id IN" in s]
    assert len(documents) == 1, documents
    queries = [s for s in seen if s.startswith("SELECT query_id, text FROM queries")]
    assert len(queries) == 1, queries
    # the progress's snapshot and the pool's cache each ask for the store's marks once
    assert sum(s.startswith(_MARKS) for s in seen) == 2, seen


def test_a_compare_run_reads_the_store_marks_once(small_store, new_app):
    """Every shared result of a Compare run (the live state, the query set, the verdicts,
    the results table) is keyed on one read of the store's marks, on the run that computes
    them and on the next that reuses them (each read is a round trip on PostgreSQL)."""
    at = new_app("alice")
    db = at.session_state["_rl_db"]
    for _ in range(2):
        seen: list[str] = []
        db.conn.set_trace_callback(seen.append)
        try:
            at.switch_page("views/compare.py").run()
        finally:
            db.conn.set_trace_callback(None)
        assert not at.exception, at.exception
        assert sum(s.startswith(_MARKS) for s in seen) == 1, [
            s[:60] for s in seen if s.startswith(_MARKS)]
