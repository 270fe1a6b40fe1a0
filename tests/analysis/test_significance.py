"""Paired significance tests and p-value correction, checked against scipy."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from evalcore.analysis.stats.correction import adjust_p_values
from evalcore.analysis.stats.significance import paired_t_test, paired_tests, randomization_test


def _scipy_exact(a: np.ndarray, b: np.ndarray) -> float:
    result = stats.permutation_test(
        (a, b),
        lambda x, y, axis: np.mean(x - y, axis=axis),
        permutation_type="samples",
        n_resamples=np.inf,
        alternative="two-sided",
        vectorized=True,
    )
    return float(result.pvalue)


@pytest.mark.parametrize("n", [2, 3, 7, 12, 16])
def test_exact_randomization_equals_scipy_permutation_test(n: int) -> None:
    rng = np.random.default_rng(n)
    a, b = rng.random(n), rng.random(n)
    result = randomization_test(a, b)
    assert result.method == "exact"
    assert result.permutations == 2**n
    assert result.seed is None
    assert result.p_value == pytest.approx(_scipy_exact(a, b), abs=1e-12)
    assert result.mean_delta == pytest.approx(float(np.mean(a - b)))


def test_exact_randomization_with_tied_metric_values_equals_scipy() -> None:
    # Metric values are coarse (multiples of 1/k): many resampled sums tie the observed one.
    a = np.array([0.1, 0.2, 0.3, 0.5, 0.0, 1.0, 0.4, 0.3, 0.7, 0.6])
    b = np.array([0.2, 0.1, 0.3, 0.3, 0.1, 0.5, 0.4, 0.2, 0.6, 0.7])
    assert randomization_test(a, b).p_value == pytest.approx(_scipy_exact(a, b), abs=1e-12)


def test_known_exact_value_by_hand() -> None:
    # d = (1, 1, 1): only the all-plus and all-minus assignments reach |sum| = 3.
    result = randomization_test([1, 1, 1], [0, 0, 0])
    assert result.p_value == pytest.approx(2 / 8)


def test_monte_carlo_is_seeded_and_close_to_scipy_estimate() -> None:
    rng = np.random.default_rng(7)
    a = rng.random(40)
    b = a - rng.normal(0.05, 0.2, 40)
    first = randomization_test(a, b, permutations=20_000, seed=3)
    again = randomization_test(a, b, permutations=20_000, seed=3)
    assert first == again
    assert first.method == "monte_carlo" and first.seed == 3 and first.permutations == 20_000
    reference = stats.permutation_test(
        (a, b), lambda x, y, axis: np.mean(x - y, axis=axis), permutation_type="samples",
        n_resamples=20_000, vectorized=True, random_state=np.random.default_rng(11),
    ).pvalue
    assert abs(first.p_value - reference) < 0.02


@pytest.mark.parametrize("n", [5, 13, 19])
def test_monte_carlo_converges_to_the_exact_p_value(n: int) -> None:
    # Forcing Monte-Carlo on small n checks the byte-table sign flipping against enumeration
    # (n = 13 and 19 leave a partial last byte; tied coarse values exercise the tolerance).
    rng = np.random.default_rng(n)
    a = np.round(rng.random(n), 1)
    b = np.round(rng.random(n), 1)
    exact = randomization_test(a, b).p_value
    mc = randomization_test(a, b, exact_max_pairs=0, permutations=200_000, seed=1)
    assert mc.method == "monte_carlo"
    assert abs(mc.p_value - exact) < 0.006


def test_monte_carlo_p_value_is_never_zero() -> None:
    a = np.ones(60)
    b = np.zeros(60)
    result = randomization_test(a, b, permutations=500)
    assert result.p_value == pytest.approx(1 / 501)


def test_identical_runs_give_p_one() -> None:
    values = [0.3, 0.5, 0.9]
    assert randomization_test(values, values).p_value == 1.0


def test_no_pairs_is_not_computable() -> None:
    result = randomization_test([], [])
    assert result.status == "not_computable" and result.p_value is None
    assert "no paired" in (result.reason or "")


@pytest.mark.parametrize("n", [2, 5, 30])
def test_paired_t_equals_scipy_ttest_rel(n: int) -> None:
    rng = np.random.default_rng(100 + n)
    a, b = rng.random(n), rng.random(n)
    result = paired_t_test(a, b)
    expected = stats.ttest_rel(a, b)
    assert result.statistic == pytest.approx(float(expected.statistic))
    assert result.p_value == pytest.approx(float(expected.pvalue))
    assert result.df == n - 1


def test_paired_t_on_known_data() -> None:
    # d = (1, 2, 3, 4): mean 2.5, sd 1.2910, t = 2.5 / (1.2910 / 2) = 3.8730.
    result = paired_t_test([2, 4, 6, 8], [1, 2, 3, 4])
    assert result.statistic == pytest.approx(3.872983346207417)
    assert result.p_value == pytest.approx(float(stats.t.sf(3.872983346207417, 3) * 2))


@pytest.mark.parametrize(
    ("a", "b", "fragment"),
    [([0.5], [0.1], "at least 2"), ([], [], "at least 2"), ([1, 2, 3], [0, 1, 2], "zero variance")],
)
def test_paired_t_degenerate_cases_are_not_computable(a, b, fragment) -> None:
    result = paired_t_test(a, b)
    assert result.status == "not_computable"
    assert result.p_value is None and result.statistic is None
    assert fragment in (result.reason or "")
    assert fragment in result.describe()


def test_non_finite_or_unequal_input_is_refused() -> None:
    with pytest.raises(ValueError, match="equally long"):
        randomization_test([1, 2], [1])
    with pytest.raises(ValueError, match="non-finite"):
        paired_t_test([1, float("nan")], [1, 2])


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(-4, 4), min_size=1, max_size=10))
def test_exact_p_value_is_symmetric_in_the_runs(d: list[int]) -> None:
    a = np.array(d, dtype=float) / 4
    zeros = np.zeros(len(d))
    forward, backward = randomization_test(a, zeros), randomization_test(zeros, a)
    assert forward.p_value == pytest.approx(backward.p_value)
    assert 0 < forward.p_value <= 1


def test_paired_tests_runs_both() -> None:
    results = paired_tests([0.1, 0.4, 0.5], [0.2, 0.2, 0.1])
    assert set(results) == {"randomization", "paired_t"}
    assert results["randomization"].n_pairs == results["paired_t"].n_pairs == 3


def test_holm_and_bonferroni_adjustment() -> None:
    p = [0.01, 0.04, 0.03, None, 0.005]
    # Holm on the 4 computed values sorted 0.005, 0.01, 0.03, 0.04: x4, x3, x2, x1, monotone.
    assert adjust_p_values(p, "holm") == pytest.approx([0.03, 0.06, 0.06, None, 0.02])
    assert adjust_p_values(p, "bonferroni") == pytest.approx([0.04, 0.16, 0.12, None, 0.02])
    assert adjust_p_values(p, "none") == pytest.approx(p)
    assert adjust_p_values([None, None]) == [None, None]
    with pytest.raises(ValueError, match="unknown correction"):
        adjust_p_values(p, "sidak")  # type: ignore[arg-type]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(st.none(), st.floats(0, 1)), max_size=12))
def test_corrections_never_lower_a_p_value_and_holm_is_at_most_bonferroni(p) -> None:
    holm, bonferroni = adjust_p_values(p, "holm"), adjust_p_values(p, "bonferroni")
    for raw, h, b in zip(p, holm, bonferroni, strict=True):
        if raw is None:
            assert h is None and b is None
        else:
            assert raw <= h + 1e-15 and h <= b + 1e-15 and b <= 1.0
