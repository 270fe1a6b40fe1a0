"""Samples in the store (contract section 13): a named sample keeps its design and its
units in draw order, grows by appending, is drawn by a lead only, and is audited; skips
and "can't judge" on sampled units are non-responses."""

from __future__ import annotations

import pytest
from access_fixtures import ANNOTATOR, LEAD, team_store
from click.testing import CliRunner
from store_fixtures import store_at_version

from evalcore.access.decisions import PermissionDenied
from evalcore.cli import main
from evalcore.estimation.stored import (
    draw_stored_sample,
    estimate_stored,
    grow_stored_sample,
    sample_queue,
    show_sample,
)
from evalcore.store.audit import audit_entries
from evalcore.store.connection import open_store
from evalcore.store.dialect import integrity_errors
from evalcore.store.labels import record_label
from evalcore.store.runs import add_run
from evalcore.store.samples import (
    SampleNotFoundError,
    get_sample,
    list_samples,
    nonresponses,
    record_nonresponse,
    sample_units,
)
from evalcore.store.schema import SCHEMA_VERSION, schema_version
from evalcore.store.study_handle import open_study

RUNS = ("bm25-plain", "bm25-title-boost")  # baseline, candidate


@pytest.fixture
def demo(tmp_path, new_store_target):
    path = new_store_target("demo.db")
    result = CliRunner().invoke(main, ["demo", "--db", str(path)])
    assert result.exit_code == 0, result.output
    db = open_store(path)
    yield db
    db.conn.close()


def _draw(db, name="s1", size=20, seed=7, measures=("P@10", "nDCG@10")):
    return draw_stored_sample(
        db,
        study_id="demo",
        name=name,
        candidate=RUNS[1],
        baseline=RUNS[0],
        measures=list(measures),
        size=size,
        seed=seed,
        actor="lead",
    )


def test_a_drawn_sample_keeps_its_design_and_its_units_in_order(demo) -> None:
    view = _draw(demo)
    stored = get_sample(open_study(demo, "demo", None), "s1")
    assert (stored.run_a, stored.run_b) == (RUNS[1], RUNS[0])
    assert stored.measures == ["P@10", "nDCG@10"] and stored.seed == 7 and stored.size == 20
    units = sample_units(open_study(demo, "demo", None), "s1")
    assert [(u.query_id, u.unit_id) for u in units] == [
        (u.query_id, u.unit_id) for u in view.design.sampled_units()
    ]
    assert [u.position for u in units] == list(range(1, len(units) + 1))
    assert stored.n_units == len(units) > 0
    # the stored design reads back the same; its probabilities are m_h / N_h
    shown = show_sample(open_study(demo, "demo", None), "s1")
    assert shown.design == view.design
    for unit in shown.units():
        stratum = shown.design.strata[unit.stratum]
        assert unit.inclusion_probability == stratum.n_sampled / stratum.n_queries
    # drawn again with the same seed: the same units; another seed: another order
    again = _draw(demo, name="s2")
    assert again.design.sampled_units() == view.design.sampled_units()
    other = _draw(demo, name="s3", seed=8)
    assert [q.query_id for q in other.design.queries] != [q.query_id for q in view.design.queries]
    assert [s.name for s in list_samples(open_study(demo, "demo", None))] == ["s1", "s2", "s3"]
    (entry,) = [
        e
        for e in audit_entries(open_study(demo, "demo", None))
        if e.action == "sample.draw" and e.detail["name"] == "s1"
    ]
    assert entry.detail["seed"] == 7 and entry.detail["units"] == len(units)


def test_a_name_is_taken_once_and_an_unknown_sample_lists_the_known_ones(demo) -> None:
    _draw(demo)
    with pytest.raises(ValueError, match="has a sample 's1' already; grow it"):
        _draw(demo)
    with pytest.raises(
        SampleNotFoundError, match=r"no sample 'nope' in study 'demo' \(samples: s1\)"
    ):
        get_sample(open_study(demo, "demo", None), "nope")
    with pytest.raises(ValueError, match="sample name"):
        _draw(demo, name="  ")


def test_growth_appends_units_keeps_labels_and_never_shrinks(demo) -> None:
    _draw(demo, size=10)
    before = sample_units(open_study(demo, "demo", None), "s1")
    first = before[0]
    record_label(
        demo,
        study_id="demo",
        query_id=first.query_id,
        unit_id=first.unit_id,
        gain=2,
        annotator="ann",
    )
    grown = grow_stored_sample(demo, study_id="demo", name="s1", size=40, actor="lead")
    after = sample_units(open_study(demo, "demo", None), "s1")
    assert after[: len(before)] == before and len(after) > len(before)
    assert grown.sample.size == 40 and grown.sample.grown_at is not None
    assert sample_queue(open_study(demo, "demo", None), "s1")[0].state == "labeled"
    with pytest.raises(ValueError, match="only grows"):
        grow_stored_sample(demo, study_id="demo", name="s1", size=20, actor="lead")
    assert len(sample_units(open_study(demo, "demo", None), "s1")) == len(after)
    assert any(e.action == "sample.grow" for e in audit_entries(open_study(demo, "demo", None)))


def test_sampled_units_are_never_rewritten_or_deleted(demo) -> None:
    _draw(demo)
    for sql in (
        "UPDATE sample_units SET unit_id = 'x'",
        "DELETE FROM sample_units",
        "DELETE FROM sample_nonresponses",
    ):
        if "nonresponses" in sql:
            unit = sample_units(open_study(demo, "demo", None), "s1")[0]
            record_nonresponse(
                demo,
                study_id="demo",
                name="s1",
                query_id=unit.query_id,
                unit_id=unit.unit_id,
                kind="skip",
                annotator="ann",
            )
        with pytest.raises(integrity_errors()):
            demo.execute(sql)


def test_skips_and_cant_judge_are_non_responses_until_a_label_answers(demo) -> None:
    _draw(demo)
    units = sample_units(open_study(demo, "demo", None), "s1")
    a, b = units[0], units[1]
    record_nonresponse(
        demo,
        study_id="demo",
        name="s1",
        query_id=a.query_id,
        unit_id=a.unit_id,
        kind="skip",
        annotator="ann",
    )
    record_nonresponse(
        demo,
        study_id="demo",
        name="s1",
        query_id=b.query_id,
        unit_id=b.unit_id,
        kind="cant_judge",
        annotator="ann",
    )
    assert [r.kind for r in nonresponses(open_study(demo, "demo", None), "s1")] == [
        "skip",
        "cant_judge",
    ]
    states = [q.state for q in sample_queue(open_study(demo, "demo", None), "s1")]
    assert states[:3] == ["non-response", "non-response", "open"]
    record_label(
        demo, study_id="demo", query_id=a.query_id, unit_id=a.unit_id, gain=1, annotator="rita"
    )
    assert sample_queue(open_study(demo, "demo", None), "s1")[0].state == "labeled"
    with pytest.raises(ValueError, match="is not in sample 's1'"):
        record_nonresponse(
            demo,
            study_id="demo",
            name="s1",
            query_id="q01",
            unit_id="nope",
            kind="skip",
            annotator="ann",
        )
    with pytest.raises(ValueError, match="non-response kind"):
        record_nonresponse(
            demo,
            study_id="demo",
            name="s1",
            query_id=a.query_id,
            unit_id=a.unit_id,
            kind="maybe",
            annotator="ann",
        )  # type: ignore[arg-type]


def test_the_estimate_changes_with_the_sample_labels_and_keeps_the_evidence_apart(demo) -> None:
    _draw(demo, size=30)
    empty = estimate_stored(
        open_study(demo, "demo", None), "s1", candidate=RUNS[1], baseline=RUNS[0]
    ).by_measure()["P@10"]
    assert empty.n_labeled == 0 and empty.n_pending > 0
    for unit in sample_units(open_study(demo, "demo", None), "s1"):
        record_label(
            demo,
            study_id="demo",
            query_id=unit.query_id,
            unit_id=unit.unit_id,
            gain=0,
            annotator="ann",
        )
    done = estimate_stored(
        open_study(demo, "demo", None), "s1", candidate=RUNS[1], baseline=RUNS[0]
    ).by_measure()["P@10"]
    assert done.n_pending == 0 and done.n_labeled > 0
    assert done.upper - done.lower < empty.upper - empty.lower
    assert done.worst_lower <= done.lower <= done.point <= done.upper <= done.worst_upper
    # the other orientation: every sign flips
    flipped = estimate_stored(
        open_study(demo, "demo", None), "s1", candidate=RUNS[0], baseline=RUNS[1]
    ).by_measure()["P@10"]
    assert (flipped.lower, flipped.upper) == pytest.approx((-done.upper, -done.lower))
    with pytest.raises(ValueError, match="was drawn for P@10, nDCG@10, not RR@10"):
        estimate_stored(
            open_study(demo, "demo", None),
            "s1",
            candidate=RUNS[1],
            baseline=RUNS[0],
            measures=["RR@10"],
        )


def test_only_a_lead_draws_a_sample_in_a_team_study(tmp_path, store_target) -> None:
    db, _ = team_store(store_target)
    add_run(
        db,
        study_id="s",
        name="r2",
        source="imported",
        k=3,
        actor=LEAD,
        results=[("q1", 1, "a2", 3.0), ("q1", 2, "a3", 2.0), ("q1", 3, "a1", 1.0)],
    )
    kwargs = dict(
        study_id="s", name="t", candidate="r2", baseline="r1", measures=["P@3"], size=2, seed=1
    )
    with pytest.raises(PermissionDenied):
        draw_stored_sample(db, actor=ANNOTATOR, **kwargs)
    assert list_samples(open_study(db, "s", LEAD)) == []
    view = draw_stored_sample(db, actor=LEAD, **kwargs)
    assert view.sample.created_by == LEAD and view.sample.n_units > 0
    unit = view.units()[0]
    record_nonresponse(
        db,
        study_id="s",
        name="t",
        query_id=unit.query_id,
        unit_id=unit.unit_id,
        kind="skip",
        annotator=ANNOTATOR,
    )
    with pytest.raises(PermissionDenied):
        grow_stored_sample(db, study_id="s", name="t", size=5, actor=ANNOTATOR)


@pytest.mark.sqlite_only
def test_an_older_store_gains_the_sample_tables(tmp_path) -> None:
    path = tmp_path / "old.db"
    store_at_version(path, 18)
    db = open_store(path)
    assert schema_version(db) == SCHEMA_VERSION >= 20
    assert {"samples", "sample_units", "sample_nonresponses"} <= set(db.table_names())


def test_a_query_removed_since_the_draw_refuses_the_estimate_clearly(demo) -> None:
    from evalcore.store.removed_queries import remove_query

    view = _draw(demo)
    remove_query(demo, study_id="demo", query_id=view.design.query_ids[0], actor="lead")
    with pytest.raises(ValueError, match=r"drawn over 25 queries .*\(24 queries\) differs"):
        estimate_stored(open_study(demo, "demo", None), "s1", candidate=RUNS[1], baseline=RUNS[0])
