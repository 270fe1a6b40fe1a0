"""Paired significance tests over per-query metric values.

Both tests take two equally long sequences ``a`` and ``b`` of per-query values
of the same metric, paired by query (position ``i`` of both is the same
query), and test the null hypothesis that the two runs are exchangeable on
each query (randomization test) or that the mean difference is zero (t-test).
The caller decides which queries are paired: :mod:`evalcore.analysis.compare` pairs
only queries where both runs have the metric available, and says so.

The per-query difference is ``d_i = a_i - b_i``; ``mean_delta`` is its mean,
so a positive value means ``a`` scored higher.

**Paired randomization (sign-flip) test.** Under the null hypothesis each
``d_i`` is equally likely to have either sign. The statistic is the mean
difference; the two-sided p-value is the share of sign assignments whose
``|mean|`` is at least the observed ``|mean|``. With ``n <= EXACT_MAX_PAIRS``
every one of the ``2**n`` assignments is enumerated (``method="exact"``);
otherwise ``permutations`` assignments are drawn from a seeded
:class:`numpy.random.Generator` and the p-value is ``(1 + hits) / (1 +
permutations)`` (Phipson & Smyth 2010: a Monte-Carlo p-value is never 0).
This equals :func:`scipy.stats.permutation_test` with
``permutation_type="samples"`` on the pairs; ties with the observed statistic
are counted as "at least as extreme" within a small relative tolerance.

**Paired t-test.** :func:`scipy.stats.ttest_rel` semantics (two-sided,
``df = n - 1``). It is *not computable* with fewer than 2 pairs or when every
difference is equal (zero variance: t is undefined). ``t = mean(d) / (sd(d) /
sqrt(n))`` and the p-value is Student's t tail ``2 * stdtr(n - 1, -|t|)`` from
:mod:`scipy.special` (what ``ttest_rel`` computes; tests compare the two), so that
no page or command that compares runs pays the slow import of :mod:`scipy.stats`.
"""

from collections.abc import Sequence
from typing import Literal

import numpy as np
from scipy.special import stdtr

from evalcore.contract.frozen import FrozenModel

#: Up to this many pairs the randomization test enumerates all 2**n sign assignments.
EXACT_MAX_PAIRS = 20
#: Default number of random sign assignments of the Monte-Carlo randomization test.
DEFAULT_PERMUTATIONS = 10_000
#: Default seed of the Monte-Carlo randomization test (recorded in every result).
DEFAULT_SEED = 0
#: Relative tolerance under which a resampled statistic ties the observed one.
_TIE_TOLERANCE = 1e-12
#: Upper bound on the random bytes held at once by the Monte-Carlo loop (memory guard).
_CHUNK_BYTES = 16_000_000

TestName = Literal["randomization", "paired_t"]
TEST_LABELS: dict[str, str] = {
    "randomization": "paired randomization test",
    "paired_t": "paired t-test",
}


class SignificanceResult(FrozenModel):
    """The outcome of one paired test, or why it could not be computed.

    ``status == "computed"``: ``statistic`` and ``p_value`` are numbers.
    ``status == "not_computable"``: both are ``None`` and ``reason`` says why.
    ``statistic`` is the mean difference for the randomization test and t
    for the t-test. ``permutations`` is the number of sign assignments the
    randomization p-value is taken over (``2**n`` when exact); ``seed`` is
    set only when random draws were used. ``df`` is the t-test's degrees of
    freedom.
    """

    test: TestName
    status: Literal["computed", "not_computable"]
    reason: str | None = None
    n_pairs: int
    mean_delta: float | None = None
    statistic: float | None = None
    p_value: float | None = None
    method: str
    alternative: Literal["two-sided"] = "two-sided"
    permutations: int | None = None
    seed: int | None = None
    df: int | None = None

    @property
    def computed(self) -> bool:
        return self.status == "computed"

    def describe(self) -> str:
        """One line for reports: the test, its n, and the p-value or why there is none."""
        label = TEST_LABELS[self.test]
        if not self.computed:
            return f"{label} on {self.n_pairs} paired queries: not computable ({self.reason})"
        extra = ""
        if self.test == "randomization":
            extra = f", {self.method}, {self.permutations} assignments"
            if self.seed is not None:
                extra += f", seed {self.seed}"
        else:
            extra = f", t = {self.statistic:.4g}, df = {self.df}"
        return f"{label} on {self.n_pairs} paired queries: p = {self.p_value:.4g}{extra}"


def _differences(a: Sequence[float], b: Sequence[float]) -> np.ndarray:
    x = np.asarray(a, dtype=np.float64)
    y = np.asarray(b, dtype=np.float64)
    if x.ndim != 1 or y.ndim != 1 or x.shape != y.shape:
        raise ValueError(
            f"paired test needs two equally long 1-d sequences, got {x.shape} and {y.shape}"
        )
    if not (np.isfinite(x).all() and np.isfinite(y).all()):
        raise ValueError(
            "paired test got a non-finite value; pair only queries where both runs "
            "have the metric available"
        )
    return x - y


def randomization_test(
    a: Sequence[float],
    b: Sequence[float],
    *,
    permutations: int = DEFAULT_PERMUTATIONS,
    seed: int = DEFAULT_SEED,
    exact_max_pairs: int = EXACT_MAX_PAIRS,
) -> SignificanceResult:
    """Two-sided paired randomization (sign-flip) test of ``mean(a - b) == 0``.

    Exact enumeration of all ``2**n`` sign assignments when ``n <=
    exact_max_pairs``; otherwise ``permutations`` random assignments drawn
    from ``numpy.random.default_rng(seed)``. See the module docstring.
    """
    if permutations < 1:
        raise ValueError(f"permutations must be at least 1, got {permutations}")
    d = _differences(a, b)
    n = int(d.size)
    if n == 0:
        return SignificanceResult(
            test="randomization",
            status="not_computable",
            reason="no paired queries",
            n_pairs=0,
            method="exact" if exact_max_pairs >= 0 else "monte_carlo",
        )
    observed = float(d.sum())
    tolerance = _TIE_TOLERANCE * max(1.0, float(np.abs(d).sum()))
    threshold = abs(observed) - tolerance
    if n <= exact_max_pairs:
        sums = _all_signed_sums(d)
        hits = int(np.count_nonzero(np.abs(sums) >= threshold))
        total = int(sums.size)
        p_value = hits / total
        method, used_seed = "exact", None
    else:
        hits = _monte_carlo_hits(d, threshold, permutations, seed)
        total = permutations
        p_value = (1 + hits) / (1 + permutations)
        method, used_seed = "monte_carlo", seed
    return SignificanceResult(
        test="randomization",
        status="computed",
        n_pairs=n,
        mean_delta=observed / n,
        statistic=observed / n,
        p_value=min(1.0, p_value),
        method=method,
        permutations=total,
        seed=used_seed,
    )


def _all_signed_sums(d: np.ndarray) -> np.ndarray:
    """``sum(s_i * d_i)`` for every ``s in {-1, +1}**n`` (2**n values, built by doubling)."""
    sums = np.zeros(1, dtype=np.float64)
    for value in d:
        sums = np.concatenate((sums + value, sums - value))
    return sums


def _monte_carlo_hits(d: np.ndarray, threshold: float, permutations: int, seed: int) -> int:
    """How many of ``permutations`` random sign assignments reach ``|sum| >= threshold``.

    Each assignment is ``n`` fair random bits drawn as bytes from
    ``numpy.random.default_rng(seed)``. Bit ``j`` set flips the sign of
    ``d_j``: ``sum = total - 2 * sum(flipped d_j)``. The flipped sum is read
    from per-byte lookup tables (the 256 subset sums of each group of 8
    differences), one table lookup per byte instead of 8 multiply-adds. Zero
    differences are dropped first: flipping them changes nothing.
    """
    rng = np.random.default_rng(seed)
    d = d[d != 0.0]
    if d.size == 0:
        return permutations  # every assignment ties the observed sum of 0
    groups = -(-d.size // 8)
    padded = np.zeros(groups * 8)
    padded[: d.size] = d
    byte_bits = ((np.arange(256)[:, None] >> np.arange(8)[None, :]) & 1).astype(np.float64)
    tables = padded.reshape(groups, 8) @ byte_bits.T  # tables[group, byte]: flipped sum
    total = float(d.sum())
    columns = max(1, _CHUNK_BYTES // groups)
    hits = 0
    done = 0
    while done < permutations:
        size = min(columns, permutations - done)
        # codes[g, i]: the 8 sign bits of group g in assignment i (rows contiguous).
        codes = rng.integers(0, 256, size=(groups, size), dtype=np.uint8)
        flipped = np.zeros(size)
        for group in range(groups):
            flipped += tables[group][codes[group]]
        sums = total - 2.0 * flipped
        hits += int(np.count_nonzero(np.abs(sums) >= threshold))
        done += size
    return hits


def paired_t_test(a: Sequence[float], b: Sequence[float]) -> SignificanceResult:
    """Two-sided paired t-test (``scipy.stats.ttest_rel``) of ``mean(a - b) == 0``.

    Not computable with fewer than 2 pairs, or when all differences are
    equal (zero variance), instead of returning NaN or infinity.
    """
    d = _differences(a, b)
    n = int(d.size)
    mean_delta = float(d.mean()) if n else None
    if n < 2:
        reason = f"needs at least 2 paired queries, has {n}"
    elif np.ptp(d) <= _TIE_TOLERANCE * max(1.0, float(np.abs(d).max())):
        reason = "every per-query difference is the same (zero variance), so t is undefined"
    else:
        reason = None
    if reason is not None:
        return SignificanceResult(test="paired_t", status="not_computable", reason=reason,
                                  n_pairs=n, mean_delta=mean_delta, method="ttest_rel")
    statistic = float(d.mean() / (d.std(ddof=1) / np.sqrt(n)))
    return SignificanceResult(
        test="paired_t",
        status="computed",
        n_pairs=n,
        mean_delta=mean_delta,
        statistic=statistic,
        p_value=float(2.0 * stdtr(n - 1, -abs(statistic))),
        method="ttest_rel",
        df=n - 1,
    )


def paired_tests(
    a: Sequence[float],
    b: Sequence[float],
    *,
    permutations: int = DEFAULT_PERMUTATIONS,
    seed: int = DEFAULT_SEED,
) -> dict[str, SignificanceResult]:
    """Both paired tests on the same pairs, keyed by test name."""
    return {
        "randomization": randomization_test(a, b, permutations=permutations, seed=seed),
        "paired_t": paired_t_test(a, b),
    }
