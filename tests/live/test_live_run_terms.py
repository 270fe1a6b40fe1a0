"""The live state's run terms (no per-query objects) equal ``RunTerms.of`` its evaluation."""

from pathlib import Path

from evalcore.analysis.comparability import RunTerms
from evalcore.live.dashboard import LiveDashboard
from evalcore.store.connection import open_store
from evalcore.store.labels import record_label
from evalcore.store.runs import add_run, list_runs
from evalcore.store.studies import QueryIn, StudyIn
from evalcore.store.study_handle import open_study
from evalcore.store.study_setup import add_queries, create_study


def test_terms_from_the_state_are_those_of_its_evaluation(tmp_path: Path, new_store_target) -> None:
    db = open_store(new_store_target("terms.sqlite"))
    create_study(db, StudyIn(study_id="s", corpus_id="c"))
    add_run(db, study_id="s", name="deep", source="imported", k=5,
            results=[("q1", 1, "u1", 2.0), ("q2", 1, "u2", 1.0)], corpus_fingerprint="fp")
    add_run(db, study_id="s", name="shallow", source="imported", k=2,
            results=[("q1", 1, "u3", 1.0)])
    add_run(db, study_id="s", name="empty", source="imported", k=3, results=[])
    state = LiveDashboard.build(open_study(db, "s", None))
    runs = list_runs(open_study(db, "s", None))
    assert {r.name for r in runs} == {"deep", "shallow", "empty"}

    def check() -> None:
        for run in runs:
            expected = RunTerms.of(run.name, state.evaluation(run.name), run.corpus_fingerprint)
            assert state.run_terms(run) == expected

    check()
    by_name = {r.name: state.run_terms(r) for r in runs}
    assert (by_name["deep"].k, by_name["shallow"].k) == (5, 2)
    assert by_name["empty"].k is None  # no query: no cutoff ("mixed"), as RunTerms.of says
    # A label on a new query brings it into every run's set (an empty run included).
    add_queries(db, "s", [QueryIn(query_id="q3", text="q3")])
    record_label(db, study_id="s", query_id="q3", unit_id="u9", gain=1, annotator="a")
    state.refresh(open_study(db, state.study_id, None))
    check()
    assert state.run_terms(next(r for r in runs if r.name == "empty")).k == 3
