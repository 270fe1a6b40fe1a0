"""Judging pools, blind order, labeling progress and the completeness precondition."""

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from store_fixtures import apply_label_steps, new_store

from evalcore.annotation.pool import PoolItem, blind_order, query_pool
from evalcore.annotation.progress import (
    PoolNotFullyLabeledError,
    mark_pool_complete,
    query_progress,
    study_progress,
)
from evalcore.store.completeness import is_complete
from evalcore.store.labels import record_label
from evalcore.store.pools import pool_sizes, pooled_units
from evalcore.store.runs import add_run
from evalcore.store.study_handle import open_study


@pytest.fixture
def db(tmp_path: Path, store_target):
    db = new_store(store_target)
    # run A (k=2): q1 -> x, y, z ; run B (k=3): q1 -> y, w, x, v ; q2 only in A
    add_run(db, study_id="s", name="A", source="imported", k=2,
            results=[("q1", 1, "x", 3.0), ("q1", 2, "y", 2.0), ("q1", 3, "z", 1.0),
                     ("q2", 1, "u", 1.0)])
    add_run(db, study_id="s", name="B", source="imported", k=3,
            results=[("q1", 1, "y", 3.0), ("q1", 2, "w", 2.0), ("q1", 3, "x", 1.0),
                     ("q1", 4, "v", 0.5)])
    return db


def test_pool_is_the_union_of_each_runs_top_k(db) -> None:
    pool = query_pool(open_study(db, "s", None), "q1")
    assert [p.unit_id for p in pool] == ["x", "y", "w"]  # z and v are below k
    assert pool[0].ranks == {"A": 1, "B": 3} and pool[1].ranks == {"A": 2, "B": 1}
    assert pool_sizes(open_study(db, "s", None)) == {"q1": 3, "q2": 1}
    assert pooled_units(open_study(db, "s", None), ["q1", "q9"]) == {"q1": {"x", "y", "w"}, "q9": set()}


def test_blind_order_is_stable_per_annotator_and_query() -> None:
    items = [PoolItem(unit_id=f"d{i}", ranks={"A": i + 1}) for i in range(30)]
    a1 = blind_order(items, annotator="ann", query_id="q1")
    assert a1 == blind_order(list(reversed(items)), annotator="ann", query_id="q1")
    assert a1 != blind_order(items, annotator="bob", query_id="q1")
    assert a1 != blind_order(items, annotator="ann", query_id="q2")
    assert a1 != items  # not the rank order


@given(st.lists(st.text(min_size=1, max_size=5), unique=True, max_size=20), st.text(max_size=5))
def test_blind_order_is_a_permutation(units: list[str], who: str) -> None:
    items = [PoolItem(unit_id=u) for u in units]
    assert sorted(i.unit_id for i in blind_order(items, annotator=who, query_id="q")) == sorted(units)


def test_progress_counts_conflicts_as_unlabeled(db) -> None:
    record_label(db, study_id="s", query_id="q1", unit_id="x", gain=2, annotator="ann")
    record_label(db, study_id="s", query_id="q1", unit_id="y", gain=1, annotator="ann")
    record_label(db, study_id="s", query_id="q1", unit_id="y", gain=3, annotator="bob")
    record_label(db, study_id="s", query_id="q1", unit_id="far", gain=4, annotator="bob")
    p = query_progress(open_study(db, "s", None), "q1", "ann")
    assert (p.pooled, p.labeled, p.conflicts, p.mine, p.outside_pool) == (3, 1, 1, 2, 1)
    assert p.remaining == 2
    study = study_progress(open_study(db, "s", None), "bob")
    assert study.queries["q1"].mine == 1 and study.queries["q2"].pooled == 1
    assert (study.pooled, study.labeled, study.conflicts) == (4, 1, 1)
    assert study.replace(p).queries["q1"].mine == 2


def test_mark_pool_complete_refuses_until_every_pooled_unit_is_labeled(db) -> None:
    with pytest.raises(PoolNotFullyLabeledError, match="3 of 3 pooled units"):
        mark_pool_complete(db, study_id="s", query_id="q1", actor="ann")
    for unit in ("x", "y"):
        record_label(db, study_id="s", query_id="q1", unit_id=unit, gain=1, annotator="ann")
    record_label(db, study_id="s", query_id="q1", unit_id="w", gain=0, annotator="ann")
    record_label(db, study_id="s", query_id="q1", unit_id="w", gain=2, annotator="bob")
    with pytest.raises(PoolNotFullyLabeledError, match="1 of 3"):
        mark_pool_complete(db, study_id="s", query_id="q1", actor="ann")
    assert not is_complete(open_study(db, "s", None), "q1")
    record_label(db, study_id="s", query_id="q1", unit_id="w", gain=0, annotator="bob")
    event = mark_pool_complete(db, study_id="s", query_id="q1", actor="ann")
    assert event is not None and event.actor == "ann"
    assert is_complete(open_study(db, "s", None), "q1")


#: (kind, query, unit, who, gain): labels by annotators whose names differ only in case,
#: undos (refused when there is nothing to undo, as in the app) and adjudications.
_steps = st.lists(
    st.tuples(st.sampled_from(["label", "label", "label", "undo", "adjudicate"]),
              st.sampled_from(["q1", "q2", "q3"]), st.sampled_from(["x", "y", "w", "o"]),
              st.sampled_from(["ann", "bob", "cy@x.org", "Cy@X.org"]), st.integers(0, 3)),
    max_size=25,
)


def _progress_from_resolved_labels(db, annotator: str) -> dict:
    """The counting the study progress did before (from every resolved label model): the
    answer the faster reading must keep."""
    from evalcore.store.completeness import completeness_states
    from evalcore.store.pools import pool_sizes, pooled_units
    from evalcore.store.resolution import resolve_study

    sizes, states = (
        pool_sizes(open_study(db, "s", None)),
        completeness_states(open_study(db, "s", None)),
    )
    resolved = resolve_study(open_study(db, "s", None))
    pools = pooled_units(open_study(db, "s", None), list(resolved))
    out = {}
    for q in set(sizes) | set(states) | set(resolved):
        units, pooled = resolved.get(q, {}), pools.get(q, set())
        inside = [label for u, label in units.items() if u in pooled]
        out[q] = (len(pooled) if units else sizes.get(q, 0),
                  sum(label.gain is not None for label in inside),
                  sum(label.state == "conflict" for label in inside),
                  sum(annotator in label.annotators for label in inside),
                  sum(label.gain is not None for u, label in units.items() if u not in pooled),
                  states.get(q, False))
    return out


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=_steps, annotator=st.sampled_from(["", "ann", "cy@x.org", "nobody"]))
def test_study_progress_is_the_count_of_the_resolved_labels(tmp_path_factory, steps,
                                                            annotator: str) -> None:
    """Counted from the resolved gains and the annotator's own current units, every query's
    progress (study-wide and one query at a time) is what the resolved labels give."""
    from evalcore.annotation.progress import query_progress, study_progress

    db = new_store(tmp_path_factory.mktemp("progress"))
    add_run(db, study_id="s", name="A", source="imported", k=2,
            results=[("q1", 1, "x", 3.0), ("q1", 2, "y", 2.0), ("q2", 1, "x", 1.0)])
    apply_label_steps(db, steps)
    expected = _progress_from_resolved_labels(db, annotator)
    progress = study_progress(open_study(db, "s", None), annotator)
    counted = {q: (p.pooled, p.labeled, p.conflicts, p.mine, p.outside_pool, p.complete)
               for q, p in progress.queries.items()}
    assert counted == expected
    for q in expected:
        assert query_progress(open_study(db, "s", None), q, annotator) == progress.queries[q]


def test_an_undone_label_is_not_the_annotators_and_a_relabel_after_undo_is(db) -> None:
    """Rule 1 for "mine": undo cancels the latest label only; labeling again after an undo
    holds a label again (units with an undo are replayed event by event)."""
    from evalcore.annotation.progress import query_progress, study_progress
    from evalcore.store.labels import undo_last_label

    record_label(db, study_id="s", query_id="q1", unit_id="x", gain=1, annotator="ann")
    record_label(db, study_id="s", query_id="q1", unit_id="x", gain=2, annotator="ann")
    undo_last_label(db, study_id="s", query_id="q1", annotator="ann")  # x keeps gain 1
    record_label(db, study_id="s", query_id="q1", unit_id="y", gain=1, annotator="ann")
    undo_last_label(db, study_id="s", query_id="q1", annotator="ann")  # y: none of ann's
    record_label(db, study_id="s", query_id="q1", unit_id="w", gain=3, annotator="ann")
    undo_last_label(db, study_id="s", query_id="q1", annotator="ann")  # w: none
    record_label(db, study_id="s", query_id="q1", unit_id="w", gain=0, annotator="ann")
    for progress in (
        study_progress(open_study(db, "s", None), "ann").queries["q1"],
        query_progress(open_study(db, "s", None), "q1", "ann"),
    ):
        assert (progress.mine, progress.labeled, progress.pooled) == (2, 2, 3)
