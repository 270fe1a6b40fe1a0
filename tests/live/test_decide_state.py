"""The annotate page's to-decide queue in the library (evalcore.live.decide_state)."""

from pathlib import Path

import pytest
from store_fixtures import built_demo, shallow_demo_runs

from evalcore.analysis.decision import decide, stored_pair
from evalcore.analysis.decision_queue import decide_queue
from evalcore.demo.study import DEMO_STUDY_ID, RUN_PROTOCOLS
from evalcore.live.decide_state import (
    DECIDE_MEASURES,
    TargetError,
    decide_state,
    decide_target,
    next_queue_item,
)
from evalcore.store.connection import open_store
from evalcore.store.labels import record_label
from evalcore.store.study_handle import open_study

A, B = RUN_PROTOCOLS


@pytest.fixture
def db(built_store_target, tmp_path: Path):
    store = open_store(built_store_target("demo", built_demo, "d.sqlite"))
    yield store
    store.conn.close()


@pytest.mark.parametrize(("run_a", "run_b", "measure", "parameter", "valid"), [
    ("nope", B, "P@10", "run_a", [A, B]),
    (A, "", "P@10", "run_b", [A, B]),
    (A, A, "P@10", "run_b", [B]),
    (A, B, "Q@10", "measure", list(DECIDE_MEASURES)),
    (A, B, "P@-1", "measure", list(DECIDE_MEASURES)),
])
def test_a_bad_target_names_its_parameter_and_the_valid_values(db, run_a, run_b, measure,
                                                               parameter, valid) -> None:
    with pytest.raises(TargetError) as caught:
        decide_target(open_study(db, DEMO_STUDY_ID, None), run_a, run_b, measure)
    assert caught.value.parameter == parameter and caught.value.valid == valid
    assert str(caught.value).startswith(f"{parameter}=") and ", ".join(valid) in str(caught.value)


def test_a_target_names_the_measure_canonically(db) -> None:
    assert decide_target(open_study(db, DEMO_STUDY_ID, None), A, B, "ndcg@10").measure == "nDCG@10"
    assert decide_target(open_study(db, DEMO_STUDY_ID, None), B, A, "mrr@10").measure == "RR@10"


def test_the_state_is_the_library_verdict_and_queue(db) -> None:
    state = decide_state(
        open_study(db, DEMO_STUDY_ID, None),
        decide_target(open_study(db, DEMO_STUDY_ID, None), A, B, "P@10"),
    )
    expected = decide(open_study(db, DEMO_STUDY_ID, None), A, B, list(DECIDE_MEASURES))
    assert [d.model_dump() for d in state.decisions] == [d.model_dump() for d in expected]
    assert state.decision.measure == "P@10" and state.decision.verdict == "undecided"
    queue = decide_queue(
        stored_pair(open_study(db, DEMO_STUDY_ID, None), A, B, ["P@10"]).pair,
        "P@10",
        limit=None,
    )
    assert [(i.query_id, i.unit_id) for i in state.items] == [
        (i.query_id, i.unit_id) for i in queue.items]
    assert state.labels_to_decide == queue.labels_to_decide and not state.settled
    # the next undecided measure after P@10 in the offered order (Success@10 is tied)
    assert state.next_undecided() == "RR@10"


def test_a_settled_measure_has_no_queue_and_offers_the_next(db) -> None:
    state = decide_state(open_study(db, DEMO_STUDY_ID, None), decide_target(open_study(db, DEMO_STUDY_ID, None), A, B, "Success@10"))
    assert state.settled and state.decision.verdict == "tied"
    assert state.items == [] and state.n_candidates == 0
    assert state.next_undecided() == "P@5"  # after Success@10, cyclically
    # Section 12: the demo's open populations bound nDCG@10; undecided, with a queue
    open_ = decide_state(open_study(db, DEMO_STUDY_ID, None), decide_target(open_study(db, DEMO_STUDY_ID, None), A, B, "nDCG@10"))
    assert open_.decision.verdict == "undecided" and open_.items and not open_.settled
    assert open_.decision.lower is not None and open_.decision.lower <= 0 <= open_.decision.upper


def test_next_item_puts_passed_items_last_and_skips_a_conflict_the_annotator_voted_on(db) -> None:
    target = decide_target(open_study(db, DEMO_STUDY_ID, None), A, B, "P@10")
    head = decide_state(open_study(db, DEMO_STUDY_ID, None), target).items[0]
    for who, gain in (("x", 0), ("y", 2)):  # disagree across the threshold: a conflict
        record_label(db, study_id=DEMO_STUDY_ID, query_id=head.query_id, unit_id=head.unit_id,
                     gain=gain, annotator=who)
    items = decide_state(open_study(db, DEMO_STUDY_ID, None), target).items
    conflict = next(i for i in items if (i.query_id, i.unit_id) == (head.query_id, head.unit_id))
    assert conflict.kind == "conflict"
    assert (
        next_queue_item(open_study(db, DEMO_STUDY_ID, None), [conflict, *items[:2]], "z")
        == conflict
    )
    other = next_queue_item(open_study(db, DEMO_STUDY_ID, None), [conflict, *items[:2]], "x")
    assert other is not None and other != conflict
    first, second = [i for i in items if i.kind == "unlabeled"][:2]
    passed = {(first.query_id, first.unit_id)}
    assert (
        next_queue_item(open_study(db, DEMO_STUDY_ID, None), [first, second], "z", passed) == second
    )
    assert (
        next_queue_item(open_study(db, DEMO_STUDY_ID, None), [first], "z", passed) == first
    )  # comes back
    assert next_queue_item(open_study(db, DEMO_STUDY_ID, None), [], "z") is None


def test_runs_stored_to_depth_3_are_decided_at_cutoffs_up_to_3(db) -> None:
    """Ranks past a run's stored depth were never retrieved: the offered measures are taken
    at that depth, a deeper target is refused naming each run's depth, and the state's
    verdicts are at the capped cutoffs (never @10 or @5 on ranks that do not exist)."""
    from evalcore.live.decide_state import decide_depth_note, decide_measures

    a, b = shallow_demo_runs(db, 3)
    study = open_study(db, DEMO_STUDY_ID, None)
    offered = decide_measures(study, a, b)
    assert offered == ["P@3", "RR@3", "Success@3", "nDCG@3", "R@3"]
    assert decide_measures(study, A, B) == list(DECIDE_MEASURES)  # the demo's runs are deep
    assert decide_depth_note(study, A, B) is None
    note = decide_depth_note(study, a, b)
    assert note == (f"Cutoffs up to @3 only: {a} and {b} are stored to depth 3. Ranks past a "
                    "run's depth were never retrieved, so a deeper cutoff would count them as "
                    "empty.")
    with pytest.raises(TargetError) as caught:
        decide_target(study, a, b, "P@10")
    assert caught.value.parameter == "measure" and caught.value.valid == offered
    assert f"run {a!r} was stored to depth 3; P@10 would need ranks" in str(caught.value)
    with pytest.raises(ValueError, match="stored to depth 3; P@5"):
        stored_pair(study, a, b, ["P@5"])
    state = decide_state(study, decide_target(study, a, b, "P@3"))
    assert [d.measure for d in state.decisions] == offered
    expected = decide(study, a, b, offered)
    assert [d.model_dump() for d in state.decisions] == [d.model_dump() for d in expected]


def test_a_stored_run_is_not_evaluated_past_its_depth(db) -> None:
    """The library read behind reports and the Dashboard refuses a cutoff past the stored
    depth rather than taking the ranks never retrieved as empty."""
    from evalcore.analysis.run_evaluation import evaluate_run_measures
    from evalcore.contract.measures import parse_measure

    a, _ = shallow_demo_runs(db, 3)
    study = open_study(db, DEMO_STUDY_ID, None)
    with pytest.raises(ValueError, match=f"run '{a}' was stored to depth 3; P@10 would need"):
        evaluate_run_measures(study, a, measures=[parse_measure("P@10")])
    _, chosen = evaluate_run_measures(study, a, measures=[parse_measure("P@3")])
    assert chosen is not None


def test_a_measure_past_new_runs_depth_is_carried_to_it(db) -> None:
    """The decide panel's choice follows a switch to shallower runs: the same family at their
    depth when offered, else the first offered measure; a measure that fits stays."""
    from evalcore.live.decide_state import decide_carried, decide_depth_note

    study = open_study(db, DEMO_STUDY_ID, None)
    a, b = shallow_demo_runs(db, 3)
    assert decide_carried(study, A, B, "P@10") is None
    assert decide_carried(study, a, b, "P@3") is None
    measure, note = decide_carried(study, a, b, "P@10")
    assert (measure, note) == ("P@3", f"P@10 changed to P@3. {decide_depth_note(study, a, b)}")
    assert decide_carried(study, a, b, "nDCG@5")[0] == "nDCG@3"
    assert decide_carried(study, a, b, "AP@10")[:1] == ("P@3",)  # AP is not offered


def test_carried_names_only_the_measures_past_the_depth() -> None:
    from evalcore.analysis.decision import carried, carried_note

    moved = carried(["P@10", "nDCG@3", "RBP@10", "AP"], 5, ["P@5", "nDCG@3"])
    assert moved == {"P@10": "P@5", "RBP@10": None}  # AP without a cutoff reads what is stored
    assert carried_note(moved) == "P@10 changed to P@5; RBP@10 left out"
