"""``compare_pair``: verdicts with plain-word causes, and the trec_eval-compatible means
equal to ``evaluate --trec-eval`` on the store's exported qrels and run."""

import pytest
from click.testing import CliRunner

import evalcore
from evalcore.analysis.bottom_line import interval
from evalcore.analysis.decision import Decision, stored_pair
from evalcore.analysis.pair_comparison import (
    compare_evaluated_pair,
    compare_pair,
    undecidable_causes,
)
from evalcore.cli import main
from evalcore.store.connection import open_store
from evalcore.store.exports import export_qrels, export_run
from evalcore.store.study_handle import open_study

MEASURES = ["P@10", "R@10", "nDCG@10", "RR@10", "AP@10"]


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    path = tmp_path_factory.mktemp("demo") / "demo.db"
    result = CliRunner().invoke(main, ["demo", "--db", str(path)])
    assert result.exit_code == 0, result.output
    return open_store(path), path.parent


def test_interval_text_uses_a_true_minus_sign() -> None:
    assert interval(-0.04, 0.12) == "\N{MINUS SIGN}0.040 to +0.120"
    assert interval(0.0, 0.0) == "0.000 to 0.000"


def _decision(queries: dict[str, int]) -> Decision:
    return Decision(measure="P@10", run_a="A", run_b="B", verdict="undecidable",
                    verdict_text="undecidable", lower=None, upper=None, naive_lower=None,
                    naive_upper=None, n_queries=20, n_known=0, n_unknown_units=0,
                    n_undecidable=sum(queries.values()), undecidable_reasons=queries,
                    undecidable_queries=queries, method="m", summary="s")


def test_causes_are_counted_in_queries_most_first_with_what_to_do() -> None:
    causes = undecidable_causes(_decision({"label_conflict": 1, "missing_reference": 14}))
    assert [c.text for c in causes] == [
        "14 queries have no label at all: label any result of them",
        "1 query has a label in conflict that cannot be bounded: a reviewer decides it on "
        "the Annotator agreement page",
    ]


def test_queries_per_reason_count_each_query_once(tmp_path, store_target) -> None:
    from store_fixtures import new_store

    from evalcore.store.completeness import mark_complete
    from evalcore.store.labels import record_label
    from evalcore.store.runs import add_run

    db = new_store(store_target)
    # q1: both runs returned units nobody labeled; q2: complete, nothing relevant, nothing
    # unknown (no completion defines R); q3: decided.
    add_run(db, study_id="s", name="A", source="imported", k=2,
            results=[("q1", 1, "a", 2.0), ("q1", 2, "b", 1.0), ("q2", 1, "d", 1.0),
                     ("q3", 1, "e", 1.0)])
    add_run(db, study_id="s", name="B", source="imported", k=2,
            results=[("q1", 1, "b", 2.0), ("q1", 2, "c", 1.0), ("q2", 1, "d", 1.0),
                     ("q3", 1, "f", 1.0)])
    for query, unit, gain in (("q2", "d", 0), ("q3", "e", 1), ("q3", "f", 0)):
        record_label(db, study_id="s", query_id=query, unit_id=unit, gain=gain, annotator="ann")
    for query in ("q2", "q3"):
        mark_complete(db, study_id="s", query_id=query, actor="lead")
    d = compare_pair(open_study(db, "s", None), "A", "B", ["R@2"]).measures[0].decision
    # per run and query
    assert d.undecidable_reasons == {"missing_reference": 2, "no_relevant_units": 2}
    assert d.undecidable_queries == {"missing_reference": 1, "no_relevant_units": 1}
    assert d.n_undecidable == 2


def test_the_demo_decides_on_open_populations(demo) -> None:
    """No demo query's relevant set is claimed complete for every query, yet nDCG@10, R@10
    and AP@10 have finite verdicts (contract section 12)."""
    db, _ = demo
    pc = compare_pair(open_study(db, "demo", None), "bm25-plain", "bm25-title-boost", ["nDCG@10", "R@10", "AP@10"])
    for m in pc.measures:
        d = m.decision
        assert d.verdict != "undecidable", d.summary
        assert d.lower is not None and -1.0 <= d.lower <= d.upper <= 1.0


def test_compat_equals_trec_eval_on_the_exported_files(demo) -> None:
    db, folder = demo
    pc = compare_pair(open_study(db, "demo", None), "bm25-plain", "bm25-title-boost", MEASURES)
    qrels = folder / "demo.qrels"
    export_qrels(open_study(db, "demo", None), qrels)
    for run, column in (("bm25-plain", "value_a"), ("bm25-title-boost", "value_b")):
        path = folder / f"{run}.run"
        export_run(open_study(db, "demo", None), run, path)
        expected = evalcore.evaluate(qrels, path, measures=MEASURES, trec_eval=True)
        for row in pc.compat:
            agg = expected.report.aggregates[row.measure]
            assert agg.available
            assert getattr(row, column) == pytest.approx(agg.value, abs=1e-12), row
    # every demo query has labels: trec_eval evaluates all 25, ignoring none
    assert all(row.n_queries_a == row.n_queries_b == 25 for row in pc.compat)
    assert not any("without qrels ignored" in note for note in pc.compat_notes)


def test_one_evaluated_pair_gives_the_verdicts_then_the_whole_comparison(demo) -> None:
    """A pair read and evaluated once gives exactly what ``compare_pair`` gives, verdicts
    only and whole, in either order (its cached intervals change nothing)."""
    db, _ = demo
    runs = "bm25-plain", "bm25-title-boost"
    evaluated = stored_pair(open_study(db, "demo", None), *runs, MEASURES)
    first = compare_evaluated_pair(evaluated, verdicts_only=True)
    whole = compare_evaluated_pair(evaluated)
    assert first == compare_pair(open_study(db, "demo", None), *runs, MEASURES, verdicts_only=True)
    assert whole == compare_pair(open_study(db, "demo", None), *runs, MEASURES)
    assert all(m.queue is None for m in first.measures) and not first.compat
    assert all(m.queue is not None for m in whole.measures) and whole.compat
    assert [m.decision for m in first.measures] == [m.decision for m in whole.measures]


def test_the_whole_comparison_from_the_verdicts_drawn_equals_it_computed_afresh(demo) -> None:
    """The queues and compat numbers added to the verdicts-only comparison of the pair give
    exactly the whole comparison; verdicts of another pair are refused."""
    db, _ = demo
    runs = "bm25-plain", "bm25-title-boost"
    evaluated = stored_pair(open_study(db, "demo", None), *runs, MEASURES)
    verdicts = compare_evaluated_pair(evaluated, verdicts_only=True)
    whole = compare_evaluated_pair(evaluated, verdicts=verdicts)
    assert whole == compare_pair(open_study(db, "demo", None), *runs, MEASURES)
    assert whole.model_dump() == compare_evaluated_pair(evaluated).model_dump()
    other = stored_pair(open_study(db, "demo", None), *runs, MEASURES[:2])
    with pytest.raises(ValueError, match="not those of this pair"):
        compare_evaluated_pair(other, verdicts=verdicts)
