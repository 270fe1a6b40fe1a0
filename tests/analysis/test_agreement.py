"""Cohen's kappa and Krippendorff's alpha against published examples and the
``krippendorff`` package; the annotator agreement summary."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalcore.analysis.stats.agreement import cohen_kappa_quadratic, krippendorff_alpha
from evalcore.analysis.stats.annotators import AnnotatorLabel, summarize_agreement
from evalcore.store.study_handle import open_study

krippendorff = pytest.importorskip("krippendorff")

NAN = np.nan
# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section C:
# 4 observers x 12 units, missing values. Published: nominal 0.743, ordinal 0.815,
# interval 0.849.
RELIABILITY_DATA = np.array(
    [
        [1, 2, 3, 3, 2, 1, 4, 1, 2, NAN, NAN, NAN],
        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, NAN, 3],
        [NAN, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, NAN],
        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, NAN],
    ]
).T


@pytest.mark.parametrize(
    ("metric", "published"), [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849)]
)
def test_alpha_reproduces_krippendorff_2011_example(metric: str, published: float) -> None:
    result = krippendorff_alpha(RELIABILITY_DATA, metric)  # type: ignore[arg-type]
    assert result.computed
    assert round(result.value, 3) == published
    # Unit 12 has a single value: it is not pairable.
    assert result.n_units == 11 and result.n_values == 40


@pytest.mark.parametrize("metric", ["nominal", "ordinal", "interval"])
@pytest.mark.parametrize("seed", range(6))
def test_alpha_equals_krippendorff_package_on_random_data_with_missing_values(
    metric: str, seed: int
) -> None:
    rng = np.random.default_rng(seed)
    data = rng.integers(0, 5, size=(40, 4)).astype(float)
    data[rng.random(data.shape) < 0.35] = NAN
    ours = krippendorff_alpha(data, metric)  # type: ignore[arg-type]
    theirs = krippendorff.alpha(
        reliability_data=data.T, level_of_measurement=metric, value_domain=[0, 1, 2, 3, 4]
    )
    assert ours.value == pytest.approx(theirs, abs=1e-12)


def test_alpha_degenerate_cases_are_not_computable() -> None:
    one_category = np.array([[2, 2, NAN], [2, 2, 2]], dtype=float)
    result = krippendorff_alpha(one_category)
    assert result.status == "not_computable" and result.value is None
    assert "same category" in (result.reason or "")
    unpairable = np.array([[1, NAN], [NAN, 3]], dtype=float)
    result = krippendorff_alpha(unpairable)
    assert result.status == "not_computable" and "at least 2 pairable" in (result.reason or "")
    assert krippendorff_alpha(np.empty((0, 3))).status == "not_computable"


def test_alpha_perfect_agreement_is_one() -> None:
    data = np.array([[0, 0], [1, 1], [4, 4], [2, NAN]], dtype=float)
    assert krippendorff_alpha(data).value == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("a", "b", "published"),
    [
        # Maple EssayTools[QuadraticWeightedKappa] examples 1 and 2 (scale 1..10).
        ([9, 7, 8, 7, 6, 8, 3, 5, 10], [8, 8, 6, 6, 7, 6, 1, 4, 8], 0.758620689655172),
        ([9, 7, 8, 7, 6, 8, 3, 5, 10], [3, 5, 6, 6, 7, 6, 1, 4, 8], 0.438095238095238),
    ],
)
def test_kappa_reproduces_published_examples(a, b, published) -> None:
    assert cohen_kappa_quadratic(a, b, categories=range(1, 11)).value == pytest.approx(
        published, abs=1e-12
    )


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 4), st.integers(0, 4)), min_size=2, max_size=40)
)
def test_kappa_equals_its_moment_form(pairs: list[tuple[int, int]]) -> None:
    # Quadratic-weighted kappa = 2 cov(a, b) / (var a + var b + (mean a - mean b)^2),
    # population moments (an independent closed form).
    a = np.array([x for x, _ in pairs], dtype=float)
    b = np.array([y for _, y in pairs], dtype=float)
    denominator = a.var() + b.var() + (a.mean() - b.mean()) ** 2
    result = cohen_kappa_quadratic(a.astype(int).tolist(), b.astype(int).tolist())
    if denominator == 0:
        assert result.status == "not_computable"
    else:
        expected = 2 * np.mean((a - a.mean()) * (b - b.mean())) / denominator
        assert result.value == pytest.approx(expected, abs=1e-12)


def test_kappa_degenerate_cases() -> None:
    assert "at least 2" in (cohen_kappa_quadratic([1], [1]).reason or "")
    same = cohen_kappa_quadratic([3, 3, 3], [3, 3, 3])
    assert same.status == "not_computable" and "single" in (same.reason or "")
    with pytest.raises(ValueError, match="not one of the categories"):
        cohen_kappa_quadratic([5, 1], [1, 1])


def _labels(rows: list[tuple[str, str, str, int]]) -> list[AnnotatorLabel]:
    return [AnnotatorLabel(query_id=q, unit_id=u, annotator=a, gain=g) for q, u, a, g in rows]


def test_summary_pairs_queries_conflicts_and_flags() -> None:
    labels = _labels(
        [
            ("q1", "d1", "ann", 0), ("q1", "d1", "bob", 0),
            ("q1", "d2", "ann", 3), ("q1", "d2", "bob", 3),
            ("q1", "d3", "ann", 1), ("q1", "d3", "bob", 2),
            ("q2", "d1", "ann", 0), ("q2", "d1", "bob", 4),
            ("q2", "d2", "ann", 4), ("q2", "d2", "bob", 0), ("q2", "d2", "cid", 4),
            ("q3", "d9", "ann", 2),  # singly labeled: not part of agreement
        ]
    )
    summary = summarize_agreement(labels)
    assert summary.annotators == ["ann", "bob", "cid"]
    assert summary.n_units_multiply_labeled == 5
    ann_bob = next(p for p in summary.pairs if (p.annotator_a, p.annotator_b) == ("ann", "bob"))
    assert ann_bob.n_units == 5
    assert sum(map(sum, ann_bob.confusion)) == 5 and ann_bob.confusion[1][2] == 1
    expected = cohen_kappa_quadratic([0, 3, 1, 0, 4], [0, 3, 2, 4, 0]).value
    assert ann_bob.kappa.value == pytest.approx(expected)
    bob_cid = next(p for p in summary.pairs if (p.annotator_a, p.annotator_b) == ("bob", "cid"))
    assert bob_cid.n_units == 1 and bob_cid.kappa.status == "not_computable"
    by_query = {q.query_id: q for q in summary.per_query}
    assert set(by_query) == {"q1", "q2"}
    assert not by_query["q1"].low_agreement
    assert by_query["q2"].low_agreement and by_query["q2"].n_annotators == 3
    assert [(c.query_id, c.unit_id) for c in summary.conflicts] == [
        ("q2", "d1"), ("q2", "d2"), ("q1", "d3")
    ]
    matrix = np.array(
        [[0, 0, NAN], [3, 3, NAN], [1, 2, NAN], [0, 4, NAN], [4, 0, 4]], dtype=float
    )
    assert summary.overall_alpha.value == pytest.approx(krippendorff_alpha(matrix).value)


def test_summary_refuses_two_labels_by_one_annotator() -> None:
    with pytest.raises(ValueError, match="two labels"):
        summarize_agreement(_labels([("q", "d", "ann", 1), ("q", "d", "ann", 2)]))


def test_summary_from_the_store_uses_each_annotators_current_label(tmp_path, store_target) -> None:
    from store_fixtures import new_store

    from evalcore.analysis.agreement import annotator_labels
    from evalcore.store.labels import adjudicate, record_label, undo_last_label
    from evalcore.store.resolution import resolve_study

    db = new_store(store_target)
    for unit, (ann, bob) in {"d1": (3, 3), "d2": (0, 2), "d3": (1, 1)}.items():
        record_label(db, study_id="s", query_id="q1", unit_id=unit, gain=ann, annotator="ann")
        record_label(db, study_id="s", query_id="q1", unit_id=unit, gain=bob, annotator="bob")
    # ann relabels d3 then undoes it: her current label on d3 is 1 again.
    record_label(db, study_id="s", query_id="q1", unit_id="d3", gain=4, annotator="ann")
    undo_last_label(db, study_id="s", query_id="q1", annotator="ann")
    adjudicate(db, study_id="s", query_id="q1", unit_id="d2", gain=1, reviewer="lead")
    labels = annotator_labels(resolve_study(open_study(db, "s", None)))
    assert {(x.unit_id, x.annotator, x.gain) for x in labels} == {
        ("d1", "ann", 3), ("d1", "bob", 3), ("d2", "ann", 0), ("d2", "bob", 2),
        ("d3", "ann", 1), ("d3", "bob", 1),
    }
    summary = summarize_agreement(labels)
    assert summary.annotators == ["ann", "bob"]  # the adjudicating reviewer is not an annotator
    assert summary.pairs[0].kappa.value == pytest.approx(
        cohen_kappa_quadratic([3, 0, 1], [3, 2, 1]).value
    )
    assert [(c.unit_id, c.gains) for c in summary.conflicts] == [("d2", {"ann": 0, "bob": 2})]
