"""Correcting p-values for multiple comparisons.

A results table compares several runs on several metrics; testing many pairs
at a 0.05 threshold finds "significant" differences by chance. The family of a
correction is chosen by the caller; :mod:`evalcore.analysis.compare` corrects per
metric over the comparisons in the table (every run against the baseline, or
every pair of runs).

* ``holm`` (default): Holm-Bonferroni step-down. It controls the family-wise
  error rate like Bonferroni and rejects at least as often.
* ``bonferroni``: each p-value times the family size, capped at 1.
* ``none``: the p-values unchanged (the report says so).

Tests that were not computable (``None``) are not part of the family: they
neither count towards its size nor receive an adjusted value.
"""

from collections.abc import Sequence
from typing import Literal

import numpy as np

Correction = Literal["holm", "bonferroni", "none"]
CORRECTION_LABELS: dict[str, str] = {
    "holm": "Holm-Bonferroni correction",
    "bonferroni": "Bonferroni correction",
    "none": "no correction for multiple comparisons",
}


def adjust_p_values(
    p_values: Sequence[float | None], method: Correction = "holm"
) -> list[float | None]:
    """Adjusted p-values in the input order; ``None`` stays ``None``.

    Compare an adjusted p-value with the unadjusted threshold (e.g. 0.05).
    """
    if method not in CORRECTION_LABELS:
        raise ValueError(f"unknown correction {method!r}; use one of {sorted(CORRECTION_LABELS)}")
    index = [i for i, p in enumerate(p_values) if p is not None]
    out: list[float | None] = [None] * len(p_values)
    if not index:
        return out
    p = np.array([p_values[i] for i in index], dtype=np.float64)
    if ((p < 0) | (p > 1) | ~np.isfinite(p)).any():
        raise ValueError(f"p-values must lie in [0, 1], got {p.tolist()}")
    m = p.size
    if method == "none":
        adjusted = p
    elif method == "bonferroni":
        adjusted = np.minimum(1.0, p * m)
    else:
        order = np.argsort(p, kind="stable")
        stepped = (m - np.arange(m)) * p[order]
        monotone = np.minimum(1.0, np.maximum.accumulate(stepped))
        adjusted = np.empty(m)
        adjusted[order] = monotone
    for slot, value in zip(index, adjusted, strict=True):
        out[slot] = float(value)
    return out
