"""Agreement between annotators: weighted Cohen's kappa and Krippendorff's alpha.

**Quadratic-weighted Cohen's kappa** (Cohen 1968) for two annotators who
labeled the same units with categories ``0..K-1`` (default ``K = 5``, the
contract's gains 0..4)::

    kappa_w = 1 - sum(w * O) / sum(w * E),   w_ij = (i - j)**2 / (K - 1)**2

with ``O`` the observed joint proportions and ``E`` the product of the two
annotators' marginal proportions. It equals
``sklearn.metrics.cohen_kappa_score(a, b, weights="quadratic")``.

**Krippendorff's alpha** (Krippendorff 2011, "Computing Krippendorff's
Alpha-Reliability") over a units x coders matrix in which ``NaN`` marks a
missing value. Units with fewer than two values are not pairable and are
ignored. From the coincidence matrix ``o_ck`` (each unit with ``m_u`` values
contributes every ordered pair of values from different coders with weight
``1 / (m_u - 1)``), its marginals ``n_c`` and ``n = sum n_c``::

    alpha = 1 - (n - 1) * sum(o_ck * delta2_ck) / sum(n_c * n_k * delta2_ck)

with the difference function ``delta2`` of the chosen metric: ``nominal``
(0 if equal, else 1), ``ordinal`` (``(sum_{g=c..k} n_g - (n_c + n_k)/2)**2``,
which depends on the marginals, not on the distances between the values), or
``interval`` (``(c - k)**2``).

Both return an :class:`AgreementResult`; degenerate data (fewer than 2
pairable values or labeled units, or only one category used so that no
disagreement is expected) give ``status="not_computable"`` with the reason,
never NaN.
"""

from collections.abc import Sequence
from typing import Literal

import numpy as np

from evalcore.contract.frozen import FrozenModel
from evalcore.contract.gains import GAIN_VALUES

AlphaMetric = Literal["nominal", "ordinal", "interval"]
#: The contract's gains: 0 (non-relevant) .. 4.
GAIN_CATEGORIES: tuple[int, ...] = GAIN_VALUES
_DEGENERATE = 1e-12


class AgreementResult(FrozenModel):
    """A coefficient, or why it could not be computed.

    ``n_units`` is the number of units that entered the computation (pairable
    units for alpha, doubly-labeled units for kappa); ``n_values`` the number
    of values they hold. ``observed`` and ``expected`` are the observed and
    expected disagreement (the coefficient is ``1 - observed / expected``).
    """

    coefficient: Literal["cohen_kappa_quadratic", "krippendorff_alpha"]
    metric: str
    status: Literal["computed", "not_computable"]
    value: float | None = None
    reason: str | None = None
    n_units: int
    n_values: int
    observed: float | None = None
    expected: float | None = None

    @property
    def computed(self) -> bool:
        return self.status == "computed"


def cohen_kappa_quadratic(
    a: Sequence[int], b: Sequence[int], categories: Sequence[int] = GAIN_CATEGORIES
) -> AgreementResult:
    """Quadratic-weighted Cohen's kappa of two annotators' labels on the same units.

    ``a[i]`` and ``b[i]`` are the two labels of unit ``i``. Not computable
    with fewer than 2 units, or when no disagreement is expected (both
    annotators used one and the same category for every unit).
    """
    cats = list(categories)
    if len(cats) < 2:
        raise ValueError("kappa needs at least two categories")
    if len(a) != len(b):
        raise ValueError(f"kappa needs one label per annotator per unit, got {len(a)} and {len(b)}")
    position = {c: i for i, c in enumerate(cats)}
    try:
        ia = np.array([position[v] for v in a], dtype=np.intp)
        ib = np.array([position[v] for v in b], dtype=np.intp)
    except KeyError as err:
        raise ValueError(f"label {err.args[0]!r} is not one of the categories {cats}") from None
    n = int(ia.size)
    base = {"coefficient": "cohen_kappa_quadratic", "metric": "quadratic", "n_units": n,
            "n_values": 2 * n}
    if n < 2:
        return AgreementResult(
            **base, status="not_computable",
            reason=f"needs at least 2 units labeled by both annotators, has {n}",
        )
    k = len(cats)
    observed = np.zeros((k, k))
    np.add.at(observed, (ia, ib), 1.0)
    observed /= n
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0))
    idx = np.arange(k)
    weights = (idx[:, None] - idx[None, :]) ** 2 / (k - 1) ** 2
    d_o = float((weights * observed).sum())
    d_e = float((weights * expected).sum())
    why = "both annotators used a single, identical category, so no disagreement is expected"
    return _coefficient(base, d_o, d_e, f"{why} and kappa is undefined")


def _coefficient(base: dict, d_o: float, d_e: float, undefined: str) -> AgreementResult:
    """``1 - d_o / d_e``; not computable (``undefined``: why) if no disagreement is expected."""
    if d_e <= _DEGENERATE:
        return AgreementResult(**base, status="not_computable", observed=d_o, expected=d_e,
                               reason=undefined)
    return AgreementResult(**base, status="computed", value=1.0 - d_o / d_e, observed=d_o,
                           expected=d_e)


def coincidence_matrix(data: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """The coincidence matrix of a units x coders matrix (``NaN`` = missing).

    Returns ``(o, values, n_units)``: ``o[c, k]`` for the sorted distinct
    ``values``, and the number of pairable units (those with >= 2 values).
    """
    matrix = np.asarray(data, dtype=np.float64)
    if matrix.ndim != 2:
        raise ValueError(f"reliability data must be a units x coders matrix, got shape {matrix.shape}")
    present = ~np.isnan(matrix)
    m_u = present.sum(axis=1)
    pairable = m_u >= 2
    matrix, present, m_u = matrix[pairable], present[pairable], m_u[pairable]
    values = np.unique(matrix[present])
    if values.size == 0:
        return np.zeros((0, 0)), values, 0
    # counts[u, c]: how many coders gave value c to unit u.
    codes = np.searchsorted(values, np.where(present, matrix, values[0]))
    counts = np.zeros((matrix.shape[0], values.size))
    rows = np.repeat(np.arange(matrix.shape[0]), matrix.shape[1]).reshape(matrix.shape)
    np.add.at(counts, (rows[present], codes[present]), 1.0)
    scaled = counts / (m_u - 1)[:, None]
    o = scaled.T @ counts - np.diag(scaled.sum(axis=0))
    return o, values, int(matrix.shape[0])


def _delta2(metric: AlphaMetric, values: np.ndarray, n_c: np.ndarray) -> np.ndarray:
    if metric == "nominal":
        return 1.0 - np.eye(values.size)
    if metric == "interval":
        return (values[:, None] - values[None, :]) ** 2
    if metric == "ordinal":
        cumulative = np.concatenate(([0.0], np.cumsum(n_c)))
        i = np.arange(values.size)
        lo = np.minimum(i[:, None], i[None, :])
        hi = np.maximum(i[:, None], i[None, :])
        between = cumulative[hi + 1] - cumulative[lo]
        return (between - (n_c[:, None] + n_c[None, :]) / 2.0) ** 2
    raise ValueError(f"unknown alpha metric {metric!r}; use nominal, ordinal or interval")


def krippendorff_alpha(data: np.ndarray, metric: AlphaMetric = "ordinal") -> AgreementResult:
    """Krippendorff's alpha of a units x coders matrix with ``NaN`` for missing values.

    Not computable with fewer than 2 pairable values, or when every pairable
    value is the same (no disagreement expected).
    """
    o, values, n_units = coincidence_matrix(data)
    n_c = o.sum(axis=1)
    n = float(n_c.sum())
    base = {"coefficient": "krippendorff_alpha", "metric": metric, "n_units": n_units,
            "n_values": int(round(n))}
    if n < 2:
        return AgreementResult(
            **base, status="not_computable",
            reason="needs at least 2 pairable values (units with values from 2 or more "
            f"coders), has {int(round(n))}",
        )
    delta2 = _delta2(metric, values, n_c)
    d_o = float((o * delta2).sum()) / n
    d_e = float((np.outer(n_c, n_c) * delta2).sum()) / (n * (n - 1.0))
    why = "every pairable value is the same category, so no disagreement is expected"
    return _coefficient(base, d_o, d_e, f"{why} and alpha is undefined")
