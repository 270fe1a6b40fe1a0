"""The dashboard state and chart with the study's chosen measures (and Judged@k beside them)."""

from pathlib import Path

import plotly.graph_objects as go
from test_live_dashboard import STUDY, _store

from evalcore.compute.evaluate import evaluate
from evalcore.contract.measures import Measure, parse_measure
from evalcore.live.charts import per_query_figure
from evalcore.live.dashboard import LiveDashboard
from evalcore.store.connection import open_store
from evalcore.store.labels import record_label
from evalcore.store.observations import observations_for_run
from evalcore.store.runs import add_run
from evalcore.store.studies import QueryIn, StudyIn
from evalcore.store.study_handle import open_study
from evalcore.store.study_measures import set_study_measures
from evalcore.store.study_setup import add_queries, create_study

CHOSEN = "P@3, nDCG@4, RR, AP@5, R@9"


def _expected(db, run: str, measure: Measure):
    observations = observations_for_run(open_study(db, STUDY, None), run)
    return evaluate(observations, db_protocol(db), measures=[measure])


def db_protocol(db):
    from evalcore.store.studies import get_study

    return get_study(db, STUDY).protocol()


def _assert_measures_match_evaluate(state: LiveDashboard, db) -> None:
    for run in state.run_names:
        for m in state.measures:
            if m.k is not None and m.k > state.k(run):
                assert state.measure_aggregate(run, m) is None
                assert state.measure_values(run, m) == []
                continue
            report = _expected(db, run, m)
            assert state.measure_aggregate(run, m) == report.aggregates[m.canonical], (run, m)
            got = dict(state.measure_values(run, m))
            assert got == {q.query_id: q.metrics[m.canonical] for q in report.queries}, (run, m)


def test_chosen_measures_and_judged_match_evaluate_and_follow_labels(tmp_path: Path, new_store_target) -> None:
    db, qids = _store(new_store_target)
    set_study_measures(db, study_id=STUDY, measures=CHOSEN.split(","), actor=None)
    state = LiveDashboard.build(open_study(db, STUDY, None))
    assert [str(m) for m in state.measures] == [
        "P@3", "nDCG@4", "RR", "AP@5", "R@9", "Judged@3", "Judged@4", "Judged", "Judged@5",
        "Judged@9"]
    # nDCG@4 is the section-7 ndcg of r3 (stored to k=4), an extra measure of r1 and r2
    assert state.measure_key("r3", parse_measure("nDCG@4")) == "ndcg"
    assert state.measure_key("r1", parse_measure("nDCG@4")) == "nDCG@4"
    assert state.measure_key("r1", parse_measure("R@9")) is None  # r1 was stored to k=5
    _assert_measures_match_evaluate(state, db)
    for q in qids[6:9]:
        for j in range(6):
            record_label(db, study_id=STUDY, query_id=q, unit_id=f"{q}-u{j}", gain=j % 3,
                         annotator="bob")
    outcome = state.refresh(open_study(db, state.study_id, None))
    assert outcome.changed and not outcome.full
    _assert_measures_match_evaluate(state, db)


def test_a_new_choice_is_seen_at_the_next_refresh(tmp_path: Path, new_store_target) -> None:
    db, _ = _store(new_store_target)
    state = LiveDashboard.build(open_study(db, STUDY, None))
    assert [str(m) for m in state.measures] == ["P", "R", "nDCG", "RR", "Judged"]
    assert state.measure_key("r1", Measure("P")) == "precision"
    set_study_measures(db, study_id=STUDY, measures=["Success@2"], actor=None)
    assert state.refresh(open_study(db, state.study_id, None)).full
    assert [str(m) for m in state.measures] == ["Success@2", "Judged@2"]
    _assert_measures_match_evaluate(state, db)
    assert not state.refresh(open_study(db, state.study_id, None)).changed


def test_the_chart_draws_bounded_unavailable_values_as_ranges_never_points(tmp_path, new_store_target) -> None:
    db = open_store(new_store_target("c.sqlite"))
    create_study(db, StudyIn(study_id="s", name="s", corpus_id="c"))
    add_queries(db, "s", [QueryIn(query_id=q, text=q) for q in ("a", "b", "c")])
    add_run(db, study_id="s", name="run", source="imported", k=2,
            results=[("a", 1, "x", 1.0), ("a", 2, "x2", 0.5), ("b", 1, "y", 1.0),
                     ("b", 2, "y2", 0.5), ("c", 1, "z", 1.0)])
    record_label(db, study_id="s", query_id="a", unit_id="x", gain=1, annotator="ann")
    record_label(db, study_id="s", query_id="a", unit_id="x2", gain=0, annotator="ann")
    record_label(db, study_id="s", query_id="b", unit_id="y", gain=2, annotator="ann")
    state = LiveDashboard.build(open_study(db, "s", None))
    fig = go.Figure(per_query_figure(state, Measure("P"), "P@2"))
    points, ranges, strip = fig.data
    # a is available (0.5); b has y2 unlabeled: P@2 lies in [0.5, 1.0]; c has no label at all
    assert list(points.x) == [0] and list(points.y) == [0.5]
    assert ranges.mode == "lines" and ranges.yaxis == "y"
    assert list(ranges.x) == [1, 1, None] and list(ranges.y) == [0.5, 1.0, None]
    assert ranges.text[0] == "b: unavailable · 0.50 to 1.00, 1 unlabeled"
    assert 1 not in list(points.x)
    assert sorted(strip.x) == [1, 2]
    judged = go.Figure(per_query_figure(state, Measure("Judged"), "Judged@2"))
    assert len(judged.data) == 2  # Judged@2 is available wherever the observation is valid
    assert list(judged.data[0].y) == [1.0, 0.5]
