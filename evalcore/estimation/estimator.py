r"""The stratified difference estimator of a mean difference over a query set
(docs/estimation.md, "The estimator", derives it and its safeguards).

The total of ``D_q`` is estimated from a prediction ``f_q`` known for every query of the
design's population and the true ``D_q`` of the sampled ones::

    T = sum_all f_q + sum_h N_h * mean_{sampled in h} (D_q - f_q)
    V = sum_h N_h^2 (1 - m_h / N_h) s_h^2 / m_h

unbiased whatever ``f`` is (each stratum a simple random sample without replacement): a
good ``f`` narrows the interval, a wrong one widens it, the coverage rests on the sampling
alone. Queries outside the population contribute their sure interval. Each safeguard is
conservative: ``s_h^2`` is floored (never discounted) by pseudo-observations
(:data:`PSEUDO_MODEL`, :data:`PSEUDO_RANGE`); a stratum with one sampled query takes the
largest variance its worst-case ranges allow (Popoviciu), one with none its worst-case
interval; Student's t with Welch-Satterthwaite degrees of freedom, lowered for
heavy-tailed residuals; the result intersected with the worst-case interval. Where a
sampled query is only bounded, each end is computed from every query's bound on its side.
With every stratum fully sampled the interval collapses to the true value.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
from scipy import stats

#: Pseudo-observations added to each stratum's residual variance: of the prediction's own
#: expected squared residual, and of the squared worst-case half-width.
PSEUDO_MODEL = 1.0
PSEUDO_RANGE = 0.1
#: Residual degrees of freedom (``sum (m_h - 1)``) from which the predictor's weight is
#: fitted on the sample. The fit costs one of them (:func:`stratified_difference`): about
#: 6% of the width at 10, more below, which would cost a good source more than
#: weighing out a bad one saves on so few queries.
MIN_FIT_FREEDOM = 10


def _satterthwaite(parts: list[tuple[float, float]]) -> float:
    """Welch-Satterthwaite degrees of freedom of a sum of variance terms (inf: none
    estimated)."""
    estimated = [(v, d) for v, d in parts if math.isfinite(d)]
    if not estimated:
        return math.inf
    denominator = sum(v * v / d for v, d in estimated)
    total = sum(v for v, _ in parts)
    if denominator <= 0:
        return float(sum(d for _, d in estimated))
    return total * total / denominator


def _heavy_tailed_freedom(residual: np.ndarray, freedom: float) -> float:
    """The degrees of freedom of a variance estimate from ``residual`` when they are
    heavy-tailed: ``2 / (2 / nu + excess / m)`` with the sample's excess kurtosis (0 for
    normal residuals, leaving ``nu``)."""
    m = residual.size
    centred = residual - residual.mean()
    second = float((centred**2).mean())
    if m < 4 or second <= 0:
        return freedom
    excess = max(float((centred**4).mean()) / (second * second) - 3.0, 0.0)
    return 2.0 / (2.0 / freedom + excess / m)


@dataclass(frozen=True)
class StratifiedInput:
    """Per-query arrays of one measure. ``fixed_*``: the queries outside the population
    (their sure interval); the others (``P`` design queries) by design position."""

    fixed_lower: np.ndarray  # float[Q - P]
    fixed_upper: np.ndarray  # float[Q - P]
    stratum: np.ndarray  # int[P]
    n_strata: int
    sampled: np.ndarray  # bool[P]: in the sample and every unit answered or marked
    prior_lower: np.ndarray  # float[P]: the worst-case interval before the sample's labels
    prior_upper: np.ndarray  # float[P]
    prediction: np.ndarray  # float[P]: f_q, inside [prior_lower, prior_upper]
    prediction_spread: np.ndarray  # float[P]: the prediction's own expected squared residual
    sampled_lower: np.ndarray  # float[P]: D_q's bounds after the labels (read where sampled)
    sampled_upper: np.ndarray  # float[P]
    #: float[P]: a second prediction made without the automatic judgments (and its spread),
    #: when ``prediction`` uses them: the estimator then uses the mix of the two that the
    #: sample finds best (:func:`power_tuned`).
    baseline: np.ndarray | None = None
    baseline_spread: np.ndarray | None = None

    @property
    def n_queries(self) -> int:
        return self.fixed_lower.size + self.stratum.size


@dataclass(frozen=True)
class Interval:
    point: float
    lower: float
    upper: float
    worst_lower: float
    worst_upper: float
    #: The automatic judgments' weight in the prediction (1 without a baseline).
    predictor_weight: float = 1.0


def _residual_freedom(data: StratifiedInput) -> int:
    """Degrees of freedom of the strata's residual variances: ``sum (m_h - 1)`` over the
    strata with at least 2 sampled queries and some not sampled."""
    total = 0
    for h in range(data.n_strata):
        members = data.stratum == h
        n_h, m_h = int(members.sum()), int((members & data.sampled).sum())
        if 2 <= m_h < n_h:
            total += m_h - 1
    return total


def power_tuned(data: StratifiedInput) -> tuple[StratifiedInput, float]:
    """The input with its prediction ``b + lam * (f - b)`` (``b``: the baseline made without
    automatic judgments, ``f``: with them), ``lam`` in [0, 1] the sample's coefficient of
    ``D_q - b`` on ``f - b``, each stratum weighted by its weight in the estimator's variance
    (docs/estimation.md, "Power tuning"): a useless or wrong source gets a weight near 0.
    Below :data:`MIN_FIT_FREEDOM` residual degrees of freedom the weight is 1 (the plain
    difference estimator, valid whatever the judgments are)."""
    if data.baseline is None:
        return data, 1.0
    if _residual_freedom(data) < MIN_FIT_FREEDOM:
        return replace(data, baseline=None), 1.0
    b, f = data.baseline, data.prediction
    y = (data.sampled_lower + data.sampled_upper) / 2
    num = den = 0.0
    for h in range(data.n_strata):
        members = data.stratum == h
        picked = members & data.sampled
        n_h, m_h = int(members.sum()), int(picked.sum())
        if m_h < 2 or m_h == n_h:
            continue
        weight = n_h * n_h * (1 - m_h / n_h) / m_h
        dy = y[picked] - b[picked]
        dx = f[picked] - b[picked]
        dx = dx - dx.mean()
        num += weight * float((dx * (dy - dy.mean())).sum()) / (m_h - 1)
        den += weight * float((dx * dx).sum()) / (m_h - 1)
    lam = min(max(num / den, 0.0), 1.0) if den > 1e-15 else 0.0
    spread = data.prediction_spread
    if data.baseline_spread is not None:
        spread = lam * spread + (1 - lam) * data.baseline_spread
    tuned = replace(data, prediction=b + lam * (f - b), prediction_spread=spread, baseline=None)
    return tuned, lam


def stratified_difference(data: StratifiedInput, level: float) -> Interval:
    """The point estimate and the ``level`` confidence interval of the mean difference
    (with a baseline prediction, after :func:`power_tuned`)."""
    if not 0.0 < level < 1.0:
        raise ValueError(f"confidence level {level} is not between 0 and 1 (e.g. 0.95)")
    q = data.n_queries
    if q == 0:
        raise ValueError("no queries: there is no mean difference to estimate")
    refit = data.baseline is not None and _residual_freedom(data) >= MIN_FIT_FREEDOM
    data, weight = power_tuned(data)
    # The weight is fitted on the sample: its residuals are that much smaller than the
    # population's. As for a regression estimator, the residual variance counts one
    # degree of freedom fewer (Cochran section 7.9): variances x (d / (d - 1)), degrees
    # of freedom x ((d - 1) / d), with d the strata's residual degrees of freedom.
    fitted = 1.0
    if refit:
        d = _residual_freedom(data)
        fitted = d / (d - 1) if d > 1 else 1.0
    worst_lower = (data.fixed_lower.sum() + data.prior_lower.sum()) / q
    worst_upper = (data.fixed_upper.sum() + data.prior_upper.sum()) / q
    f = data.prediction
    mid_prior = (data.prior_lower + data.prior_upper) / 2
    mid_sampled = (data.sampled_lower + data.sampled_upper) / 2
    half2 = ((data.prior_upper - data.prior_lower) / 2) ** 2
    ends = []
    df = math.inf
    # How far a residual can reach on each end's side: a skewed stratum's unseen large
    # residuals lie on the side its worst-case interval leaves room for.
    below = (f - data.prior_lower) ** 2
    above = (data.prior_upper - f) ** 2
    for fixed, prior, sampled, reach in (
        (data.fixed_lower, data.prior_lower, data.sampled_lower, below),
        ((data.fixed_lower + data.fixed_upper) / 2, mid_prior, mid_sampled, half2),
        (data.fixed_upper, data.prior_upper, data.sampled_upper, above),
    ):
        total = float(fixed.sum()) + float(f.sum())
        parts: list[tuple[float, float]] = []  # (variance term, its degrees of freedom)
        for h in range(data.n_strata):
            members = data.stratum == h
            n_h = int(members.sum())
            if n_h == 0:
                continue
            picked = members & data.sampled
            m_h = int(picked.sum())
            if m_h == 0:  # nothing sampled: the stratum's sure interval
                total += float((prior[members] - f[members]).sum())
                continue
            residual = sampled[picked] - f[picked]
            total += n_h * float(residual.mean())
            if m_h == n_h:
                continue
            if m_h == 1:  # no variance of its own: the largest its residuals allow
                spread = float(
                    (data.prior_upper[members] - f[members]).max()
                    - (data.prior_lower[members] - f[members]).min()
                )
                s2, freedom = spread * spread / 4, math.inf
            else:
                # Pseudo-observations guard against a sample that saw none of the
                # stratum's rare large residuals.
                squares = float(((residual - residual.mean()) ** 2).sum())
                pooled_freedom = m_h - 1 + PSEUDO_MODEL + PSEUDO_RANGE
                pooled = (
                    squares
                    + PSEUDO_MODEL * float(data.prediction_spread[members].mean())
                    + PSEUDO_RANGE * float(reach[members].mean())
                ) / pooled_freedom
                # A floor, never a discount: pooling with a prediction that claims a
                # smaller spread than the sample shows would bias the variance low.
                s2, freedom = max((squares / (m_h - 1), m_h - 1.0), (pooled, pooled_freedom))
                freedom = _heavy_tailed_freedom(residual, freedom)
                s2, freedom = s2 * fitted, freedom / fitted
            parts.append((n_h * n_h * (1 - m_h / n_h) * s2 / m_h, freedom))
        variance = sum(v for v, _ in parts)
        ends.append((total / q, variance / (q * q)))
        df = min(df, _satterthwaite(parts))
    t = (
        float(stats.t.ppf(0.5 + level / 2, max(df, 1.0)))
        if math.isfinite(df)
        else float(stats.norm.ppf(0.5 + level / 2))
    )
    (lo, var_lo), (point, _), (hi, var_hi) = ends
    lower = max(lo - t * var_lo**0.5, worst_lower)
    upper = min(hi + t * var_hi**0.5, worst_upper)
    point = min(max(point, worst_lower), worst_upper)
    # Rounding of sums must not cross the ends.
    lower, upper = min(lower, point), max(upper, point)
    return Interval(point, lower, upper, float(worst_lower), float(worst_upper), weight)
