"""The study's progress counted once and kept up to date from the store's marks
(:func:`evalcore.annotation.progress.progress_now`) is exactly what the counting
before it gave (kept here as the oracle), after any labels, undos, adjudications,
completeness claims and withdrawals, can't-judge marks and new runs."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from store_fixtures import apply_label_steps, new_store

import evalcore.annotation.progress as progress_module
from evalcore.annotation.progress import StudyProgress, progress_now
from evalcore.contract.query_order import natural_key
from evalcore.store.cant_judge import record_cant_judge
from evalcore.store.completeness import completeness_states, mark_complete, reopen
from evalcore.store.labels import record_label
from evalcore.store.pools import pool_sizes, pooled_units, study_pools
from evalcore.store.resolution import annotator_units, resolved_gains
from evalcore.store.runs import add_run
from evalcore.store.study_handle import open_study

ANNOTATORS = ["", "ann", "Cy@X.org", "nobody"]


def _oracle(db, annotator: str) -> list[tuple]:
    """The study's progress as ``study_progress`` counted it before (every pool size
    by one aggregate, the pools of the labeled queries, the resolved gains, the annotator's
    current units): per query in the study's order (query, pooled, labeled, conflicts, mine,
    outside_pool, complete)."""
    sizes = pool_sizes(open_study(db, "s", None))
    states = completeness_states(open_study(db, "s", None))
    resolved = resolved_gains(open_study(db, "s", None), conflicts=True)
    mine = annotator_units(open_study(db, "s", None), annotator) if annotator else {}
    pools = pooled_units(open_study(db, "s", None), [q for q in resolved if q in sizes])
    out = {}
    for q in sorted(set(sizes) | set(states) | set(resolved), key=natural_key):
        units = resolved.get(q, {})
        if not units:
            out[q] = (sizes.get(q, 0), 0, 0, 0, 0, states.get(q, False))
            continue
        pooled = pools.get(q, set())
        inside = [g for u, g in units.items() if u in pooled]
        out[q] = (len(pooled), sum(isinstance(g, int) for g in inside),
                  sum(isinstance(g, tuple) for g in inside), len(mine.get(q, set()) & pooled),
                  sum(isinstance(g, int) for u, g in units.items() if u not in pooled),
                  states.get(q, False))
    return [(q, *row) for q, row in out.items()]


def _rows(progress: StudyProgress) -> list[tuple]:
    assert all(q == p.query_id for q, p in progress.queries.items())
    return [(q, p.pooled, p.labeled, p.conflicts, p.mine, p.outside_pool, p.complete)
            for q, p in progress.queries.items()]


def _shown(counts, share) -> StudyProgress:
    return counts.progress if share is None else share.progress


#: (kind, query, unit, who, gain): labels by annotators whose names differ only in case (so
#: the same annotator overwrites their own label), undos, adjudications, completeness claims
#: and withdrawals, can't-judge marks (not labels: they count for nothing).
_steps = st.lists(
    st.tuples(st.sampled_from(["label", "label", "label", "undo", "adjudicate", "complete",
                               "reopen", "cant"]),
              st.sampled_from(["q1", "q2", "q3", "q10"]), st.sampled_from(["x", "y", "w", "o"]),
              st.sampled_from(["ann", "bob", "cy@x.org", "Cy@X.org"]), st.integers(0, 3)),
    max_size=20,
)


def _apply(db, steps) -> None:
    for kind, q, u, who, gain in steps:
        if kind == "complete":
            mark_complete(db, study_id="s", query_id=q, actor="lead")
        elif kind == "reopen":
            reopen(db, study_id="s", query_id=q, actor="lead", reason="a relevant one was missed")
        elif kind == "cant":
            record_cant_judge(db, study_id="s", query_id=q, unit_id=u, annotator=who)
        else:
            apply_label_steps(db, [(kind, q, u, who, gain)])


def _store(tmp_path_factory):
    db = new_store(tmp_path_factory.mktemp("counts"))
    add_run(db, study_id="s", name="A", source="imported", k=2,
            results=[("q1", 1, "x", 3.0), ("q1", 2, "y", 2.0), ("q1", 3, "w", 1.0),
                     ("q2", 1, "x", 1.0), ("q10", 1, "w", 1.0)])
    return db


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(before=_steps, after=_steps, annotator=st.sampled_from(ANNOTATORS),
       new_run=st.booleans())
def test_counts_kept_up_to_date_are_the_full_count(tmp_path_factory, monkeypatch, before,
                                                   after, annotator: str, new_run: bool) -> None:
    db = _store(tmp_path_factory)
    _apply(db, before)
    counts, share = progress_now(open_study(db, "s", None), annotator)
    assert _rows(_shown(counts, share)) == _oracle(db, annotator)
    _apply(db, after)
    if new_run:  # a new run: every pool changes, so everything is counted again
        add_run(db, study_id="s", name="B", source="imported", k=3,
                results=[("q1", 1, "o", 1.0), ("q3", 1, "y", 1.0), ("q3", 2, "x", 0.5)])
    else:  # only the touched queries are counted again: no pool of the whole study is read
        def whole_study(*args):
            raise AssertionError("counted in full")

        monkeypatch.setattr(progress_module, "study_pools", whole_study)
        monkeypatch.setattr(
            progress_module, "resolved_gains", _only_some(progress_module.resolved_gains)
        )
    now = progress_now(open_study(db, "s", None), annotator, counts, share)
    monkeypatch.undo()
    assert now is not None
    assert _rows(_shown(*now)) == _oracle(db, annotator)
    # and counted from scratch, the same
    assert _rows(_shown(*progress_now(open_study(db, "s", None), annotator))) == _oracle(db, annotator)


def _only_some(resolve):
    def resolved(study, query_ids=None, **kwargs):
        assert query_ids is not None, "every label resolved"
        return resolve(study, query_ids, **kwargs)
    return resolved


def test_a_full_count_is_refused_when_not_allowed(tmp_path_factory) -> None:
    db = _store(tmp_path_factory)
    assert progress_now(open_study(db, "s", None), "ann", full=False) is None  # nothing known
    counts, share = progress_now(open_study(db, "s", None), "ann")
    # bob's share was never counted: all of his units would be read
    assert progress_now(open_study(db, "s", None), "bob", counts, share, full=False) is None
    record_label(db, study_id="s", query_id="q1", unit_id="x", gain=2, annotator="ann")
    now = progress_now(open_study(db, "s", None), "ann", counts, share, full=False)  # incremental
    assert now is not None and now[1].progress.queries["q1"].mine == 1
    add_run(db, study_id="s", name="B", source="imported", k=1, results=[("q1", 1, "o", 1.0)])
    assert progress_now(open_study(db, "s", None), "ann", *now, full=False) is None  # new pools
    assert progress_now(open_study(db, "s", None), "", now[0], full=False) is None


def test_another_annotators_share_is_counted_from_the_same_counts(tmp_path_factory) -> None:
    db = _store(tmp_path_factory)
    record_label(db, study_id="s", query_id="q1", unit_id="x", gain=2, annotator="ann")
    record_label(db, study_id="s", query_id="q1", unit_id="x", gain=1, annotator="bob")
    record_label(db, study_id="s", query_id="q1", unit_id="o", gain=1, annotator="bob")
    counts, ann = progress_now(open_study(db, "s", None), "ann")
    again, bob = progress_now(open_study(db, "s", None), "bob", counts, ann)
    assert again is counts  # nothing changed: the counts are reused as they are
    assert (ann.progress.queries["q1"].mine, bob.progress.queries["q1"].mine) == (1, 1)
    assert counts.progress.queries["q1"].conflicts == 1  # ann and bob disagree on x
    assert counts.progress.queries["q1"].outside_pool == 1  # o: bob's, outside the pool


@pytest.mark.parametrize("unit", ["a\x1fb", "a b", 'a"b', "a\\b", 'a", "b', "é", ""])
def test_every_pool_is_read_as_one_query_at_a_time(tmp_path_factory, unit: str) -> None:
    """Unit ids with the separators or escapes of either read, ranks with gaps (the top k by
    rank, not the first k listed), k below and above the ranking's length."""
    db = new_store(tmp_path_factory.mktemp("sep"))
    add_run(db, study_id="s", name="A", source="imported", k=3,
            results=[("q1", 1, unit, 2.0), ("q1", 2, "c", 1.0), ("q2", 1, "d", 1.0)])
    expected = {"q1": {unit, "c"}, "q2": {"d"}}
    assert study_pools(open_study(db, "s", None)) == expected
    add_run(db, study_id="s", name="gaps", source="imported", k=3,
            results=[("q1", 1, "g1", 3.0), ("q1", 3, "g3", 2.0), ("q1", 5, "g5", 1.0),
                     ("q3", 2, unit, 1.0)])
    add_run(db, study_id="s", name="short", source="imported", k=1,
            results=[("q2", 1, "s1", 3.0), ("q2", 2, "s2", 2.0)])
    expected = {"q1": {unit, "c", "g1", "g3"}, "q2": {"d", "s1"}, "q3": {unit}}
    assert study_pools(open_study(db, "s", None)) == expected
    assert pooled_units(open_study(db, "s", None), ["q1", "q2", "q3"]) == expected


def test_an_annotators_last_label_undone_on_a_query_leaves_none_of_theirs(tmp_path_factory
                                                                          ) -> None:
    from evalcore.store.labels import undo_last_label

    db = _store(tmp_path_factory)
    record_label(db, study_id="s", query_id="q1", unit_id="x", gain=2, annotator="ann")
    counts, share = progress_now(open_study(db, "s", None), "ann")
    assert share.progress.queries["q1"].mine == 1
    undo_last_label(db, study_id="s", query_id="q1", annotator="ann")
    counts, share = progress_now(open_study(db, "s", None), "ann", counts, share)
    assert share.progress.queries["q1"].mine == 0 and share.mine == {}
    assert _rows(share.progress) == _oracle(db, "ann")


def test_events_that_do_not_add_up_are_counted_in_full(tmp_path_factory, monkeypatch) -> None:
    """An event removed since (a discarded staged study's ids reused): the queries touched
    since the marks do not tell every change, so everything is counted again."""
    from dataclasses import replace

    db = _store(tmp_path_factory)
    counts, _ = progress_now(open_study(db, "s", None))
    record_label(db, study_id="s", query_id="q1", unit_id="x", gain=2, annotator="ann")
    calls = []
    whole = progress_module.study_pools
    monkeypatch.setattr(
        progress_module, "study_pools", lambda *args: calls.append(args) or whole(*args)
    )
    progress_now(open_study(db, "s", None), "", counts)
    assert calls == []
    progress_now(open_study(db, "s", None), "", replace(counts, events=counts.events + 1))
    assert len(calls) == 1
