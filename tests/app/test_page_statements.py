"""The store statements a page run executes do not grow with the number of studies or runs.

On PostgreSQL each statement is a client round trip, so a page that reads a study's runs
one at a time (or lists the studies one by one, or re-reads the reference once per run)
is slower there in proportion to the study; these tests count the statements the
session's connection executes for one page run, on a small study and again once it holds
more studies and runs.
"""

from app_harness import RESULTS, STUDY

from evalcore.store.runs import add_run
from evalcore.store.studies import StudyIn
from evalcore.store.study_setup import create_study

PAGES = ["home", "annotate", "data", "compare", "dashboard", "agreement", "inspector",
         "reports", "members"]


def _statements(at, page: str) -> int:
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
    return len(seen)


def _grow(db, runs: int, studies: int) -> None:
    for n in range(runs):
        add_run(db, study_id=STUDY, name=f"extra{n}", source="imported", k=3,
                results=[(q, r, u, 10.0 - r) for q, r, u in RESULTS["r1"]])
    for n in range(studies):
        create_study(db, StudyIn(study_id=f"other{n}", name=f"Other {n}", corpus_id="c1"))


def test_page_statements_do_not_grow_with_studies_or_runs(small_store, new_app):
    _, db = small_store
    at = new_app("alice")
    before = {page: _statements(at, page) for page in PAGES}
    _grow(db, runs=4, studies=4)
    after = {page: _statements(at, page) for page in PAGES}
    # a run's rankings are its own read: the annotate page's per-query results read each
    # run's ranking and permitted units, nothing else per run
    allowed = {page: 0 for page in PAGES} | {"annotate": 2 * 4}
    grown = {page: after[page] - before[page] for page in PAGES}
    assert all(grown[p] <= allowed[p] for p in PAGES), (before, after)
