"""Recall at k: relevant units in 1..k divided by |R|, the relevant reference units.

Only measurable against a population declared complete
(``population_incomplete``), with every unit in 1..k labeled
(``unlabeled_returned``) and |R| > 0 (``no_relevant_units``). Every reason
that applies is reported. No bounds: |R| itself is unknown when unavailable.
"""

from __future__ import annotations

import numpy as np

from evalcore.metrics.base import NO_LIMIT, MetricArrays, no_bounds, reason_bits
from evalcore.metrics.ranking import RankingArrays
from evalcore.reasons import Reason

NAME = "recall"


def compute(r: RankingArrays) -> MetricArrays:
    n_rel = r.n_relevant_ref
    with np.errstate(divide="ignore", invalid="ignore"):
        value = np.where(n_rel > 0, r.n_relevant_top / np.maximum(n_rel, 1), np.nan)
    return MetricArrays(
        name=NAME,
        value=value,
        reason_bits=reason_bits(
            (Reason.UNLABELED_RETURNED, r.n_unlabeled > 0),
            (Reason.POPULATION_INCOMPLETE, ~r.population_complete),
            (Reason.NO_RELEVANT_UNITS, n_rel == 0),
        ),
        lower=no_bounds(r.n),
        upper=no_bounds(r.n),
        blocking_limit=np.full(r.n, NO_LIMIT, dtype=np.int64),
    )
