"""Run comparison: only queries both runs have, counts stated, marks corrected."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from report_builders import report_from
from scipy import stats

from evalcore.analysis.compare import aggregate_text, compare_metric, compare_runs
from evalcore.analysis.stats.significance import randomization_test

UNL = ["unlabeled_returned"]
POP = ["population_incomplete"]


def _fifty_query_pair():
    rng = np.random.default_rng(5)
    a_cells, b_cells = {}, {}
    for i in range(50):
        a_cells[f"q{i:02d}"] = float(rng.random())
        b_cells[f"q{i:02d}"] = float(rng.random())
    for i in range(9):  # 9 unlabeled_returned in run B only
        b_cells[f"q{i:02d}"] = UNL
    for i in range(9, 13):  # 4 population_incomplete in both runs
        a_cells[f"q{i:02d}"] = POP
        b_cells[f"q{i:02d}"] = POP
    return report_from(a_cells), report_from(b_cells)


def test_comparison_uses_only_queries_both_runs_have_and_says_so() -> None:
    a, b = _fifty_query_pair()
    result = compare_metric("ndcg", "A", a, "B", b)
    assert result.n_queries == 50 and result.n_paired == 37 and result.n_excluded == 13
    assert result.summary == (
        "computed on 37 of 50 queries where both runs have nDCG@10; 13 excluded: "
        "9 unlabeled_returned in run B, 4 population_incomplete in both runs"
    )
    assert len(result.query_ids) == len(result.deltas) == 37
    assert not set(result.query_ids) & {f"q{i:02d}" for i in range(13)}
    excluded = {e.query_id: e for e in result.excluded}
    assert excluded["q00"].reasons_a == [] and excluded["q00"].reasons_b == UNL
    # The tests run on exactly the paired values.
    va = np.array([a.queries[int(q[1:])].metrics["ndcg"].value for q in result.query_ids])
    vb = np.array([b.queries[int(q[1:])].metrics["ndcg"].value for q in result.query_ids])
    assert result.deltas == pytest.approx((va - vb).tolist())
    assert result.mean_delta == pytest.approx(float(np.mean(va - vb)))
    assert result.tests["paired_t"].n_pairs == 37
    assert result.tests["paired_t"].p_value == pytest.approx(float(stats.ttest_rel(va, vb).pvalue))
    assert result.tests["randomization"].p_value == randomization_test(va, vb).p_value
    # The run's scores stay the contract's aggregates: both unavailable.
    assert not a.aggregates["ndcg"].available and not b.aggregates["ndcg"].available


def test_missing_queries_and_different_k_are_excluded_with_reasons() -> None:
    a = report_from({"q1": 0.5, "q2": 0.4, "q3": 0.1}, k=10)
    b = report_from({"q1": 0.2, "q2": 0.1}, k=10)
    result = compare_metric("precision", "A", a, "B", b)
    assert result.n_paired == 2
    assert "1 not_in_run in run B" in result.summary
    c = report_from({"q1": 0.2, "q2": 0.1, "q3": 0.0}, k=5)
    mixed = compare_metric("precision", "A", a, "C", c)
    assert mixed.n_paired == 0 and "3 different_k in both runs" in mixed.summary
    assert mixed.tests["randomization"].status == "not_computable"
    assert mixed.tests["paired_t"].status == "not_computable"
    assert mixed.mean_delta is None


def test_query_with_several_reasons_is_counted_once_per_reason() -> None:
    a = report_from({"q1": UNL + POP, "q2": 0.3})
    b = report_from({"q1": 0.2, "q2": 0.1})
    result = compare_metric("recall", "A", a, "B", b)
    assert result.n_excluded == 1
    assert result.summary.endswith("(a query can have several reasons)")
    assert {(e.reason, e.n) for e in result.exclusions} == {
        ("unlabeled_returned", 1), ("population_incomplete", 1)
    }


def _three_runs():
    rng = np.random.default_rng(1)
    base = rng.random(30) * 0.5
    runs = {
        "bm25": report_from({f"q{i}": float(v) for i, v in enumerate(base)}),
        "better": report_from(
            {f"q{i}": float(v + 0.3 + rng.normal(0, 0.02)) for i, v in enumerate(base)}
        ),
        "same": report_from(
            {f"q{i}": float(v + rng.normal(0, 0.01)) for i, v in enumerate(base)}
        ),
    }
    return runs


def test_results_table_marks_significant_differences_after_correction() -> None:
    comparison = compare_runs(_three_runs(), metrics=["precision", "ndcg"], permutations=2000)
    assert comparison.baseline == "bm25"
    table = {row.run: row for row in comparison.table.rows}
    assert [row.letter for row in comparison.table.rows] == ["a", "b", "c"]
    assert table["better"].cells["ndcg"].marks == ["a"]
    assert table["same"].cells["ndcg"].marks == []
    assert table["bm25"].cells["ndcg"].marks == []
    assert comparison.table.column_labels == {"precision": "P@10", "ndcg": "nDCG@10"}
    assert "Holm-Bonferroni" in comparison.table.legend and "p < 0.05" in comparison.table.legend
    assert len(comparison.comparisons) == 4  # 2 metrics x 2 runs against the baseline
    pairwise = compare_runs(
        _three_runs(), metrics=["ndcg"], mode="pairwise", permutations=2000, test="paired_t"
    )
    assert len(pairwise.comparisons) == 3
    rows = {row.run: row for row in pairwise.table.rows}
    assert rows["better"].cells["ndcg"].marks == ["a", "c"]
    assert "every pair of runs" in pairwise.table.legend


def test_zero_variance_differences_leave_t_not_computable_and_unmarked() -> None:
    runs = {
        "A": report_from({f"q{i}": 0.1 * i for i in range(8)}),
        "B": report_from({f"q{i}": 0.1 * i + 0.25 for i in range(8)}),
    }
    comparison = compare_runs(runs, metrics=["ndcg"], test="paired_t")
    item = comparison.comparison("ndcg", "B", "A")
    assert item.tests["paired_t"].status == "not_computable"
    assert "zero variance" in (item.tests["paired_t"].reason or "")
    assert comparison.adjusted_p_values == [None]
    assert all(not cell.marks for row in comparison.table.rows for cell in row.cells.values())


def test_cell_shows_the_contract_aggregate_never_a_subset_mean() -> None:
    runs = {
        "A": report_from({"q1": 0.5, "q2": UNL, "q3": 0.7}),
        "B": report_from({"q1": 0.1, "q2": 0.2, "q3": 0.3}),
    }
    comparison = compare_runs(runs, metrics=["precision"])
    cell_a = comparison.table.rows[0].cells["precision"]
    assert cell_a.text == "unavailable (1 of 3 missing)"
    assert cell_a.aggregate.value is None
    assert comparison.table.rows[1].cells["precision"].text == "0.2000"
    assert aggregate_text(runs["B"].aggregates["precision"]) == "0.2000"


def test_bad_arguments_are_refused_with_a_message() -> None:
    runs = _three_runs()
    with pytest.raises(ValueError, match="at least two runs"):
        compare_runs({"bm25": runs["bm25"]})
    with pytest.raises(ValueError, match="baseline 'nope'"):
        compare_runs(runs, baseline="nope")
    with pytest.raises(ValueError, match="alpha"):
        compare_runs(runs, alpha=1.5)


_cell = st.one_of(
    st.floats(0, 1, allow_nan=False),
    st.sampled_from([UNL, POP, UNL + POP, ["no_relevant_units"]]),
)


@settings(max_examples=40, deadline=None)
@given(st.dictionaries(st.sampled_from([f"q{i}" for i in range(12)]), st.tuples(_cell, _cell),
                       min_size=1))
def test_pairing_accounts_for_every_query(cells) -> None:
    a = report_from({q: pair[0] for q, pair in cells.items()})
    b = report_from({q: pair[1] for q, pair in cells.items()})
    result = compare_metric("ndcg", "A", a, "B", b, permutations=50)
    both = [q for q, (x, y) in cells.items() if isinstance(x, float) and isinstance(y, float)]
    assert sorted(result.query_ids) == sorted(both)
    assert result.n_paired + result.n_excluded == result.n_queries == len(cells)
    assert result.deltas == pytest.approx([cells[q][0] - cells[q][1] for q in result.query_ids])
    assert f"computed on {len(both)} of {len(cells)} queries" in result.summary
    for test in result.tests.values():
        assert test.n_pairs == len(both)


_REASONS = ["unlabeled_returned", "population_incomplete", "missing_reference", "not_in_run",
            "different_k"]


@settings(deadline=None, max_examples=200)
@given(st.lists(st.tuples(st.lists(st.sampled_from(_REASONS), max_size=3),
                          st.lists(st.sampled_from(_REASONS), max_size=3)), max_size=40))
def test_exclusions_are_counted_per_query_and_reason(reasons) -> None:
    """Each excluded query counts once per reason, on the side(s) giving it (the counts of
    each combination of reasons taken once are those of every query visited)."""
    from collections import Counter

    from evalcore.analysis.compare import ExcludedQuery, _count_exclusions

    excluded = [ExcludedQuery(query_id=f"q{i}", reasons_a=a, reasons_b=b)
                for i, (a, b) in enumerate(reasons)]
    expected: Counter = Counter()
    for query in excluded:
        for reason in set(query.reasons_a) | set(query.reasons_b):
            where = (reason in query.reasons_a, reason in query.reasons_b)
            expected[reason, {(True, True): "both runs", (True, False): "run A",
                              (False, True): "run B"}[where]] += 1
    counted = _count_exclusions(excluded, "A", "B")
    assert [(c.reason, c.side, c.n) for c in counted] == [
        (reason, side, n) for (reason, side), n in
        sorted(expected.items(), key=lambda item: (-item[1], item[0]))]
