"""Recall at k: relevant units in 1..k divided by |R|, the relevant reference units.

Only measurable against a population declared complete
(``population_incomplete``), with every unit in 1..k labeled
(``unlabeled_returned``) and |R| > 0 (``no_relevant_units``). Every reason
that applies is reported. No bounds: |R| itself is unknown when unavailable.
"""

from __future__ import annotations

import numpy as np

from evalcore.compute.metrics.base import MetricArrays, population_metric
from evalcore.compute.metrics.ranking import RankingArrays

NAME = "recall"


def compute(r: RankingArrays) -> MetricArrays:
    n_rel = r.n_relevant_ref
    with np.errstate(divide="ignore", invalid="ignore"):
        value = np.where(n_rel > 0, r.n_relevant_top / np.maximum(n_rel, 1), np.nan)
    return population_metric(
        NAME, value, r.n_unlabeled > 0, r.population_complete, no_relevant=n_rel == 0
    )
