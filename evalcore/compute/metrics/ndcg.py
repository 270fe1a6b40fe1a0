"""nDCG at k: DCG@k / IDCG@k.

DCG sums ``gain / log2(rank + 1)`` over the counted positions 1..k (returned
duplicates keep their rank but add nothing). IDCG takes the gains of the
*whole* reference set, sorted descending, first k.

Gains are the label values (linear) or ``2^g - 1`` (``gain="exponential"``).
The relevance threshold does **not** change nDCG gains: a label below the
threshold still contributes its value to DCG and IDCG, as in trec_eval's
``ndcg_cut``. The threshold only decides "relevant" for precision, recall and
reciprocal rank. nDCG is unavailable when the population is not complete
(``population_incomplete``), when a unit in 1..k is unlabeled
(``unlabeled_returned``), or when IDCG is 0 (``no_relevant_units``: the
reference set holds no positive gain).
"""

from __future__ import annotations

import numpy as np

from evalcore.compute.metrics.base import MetricArrays, population_metric
from evalcore.compute.metrics.ranking import RankingArrays, discounts, segment_sum
from evalcore.contract.evaluation_protocol import GainMode

NAME = "ndcg"
MAX_GAIN = 4


def gain_values(mode: GainMode) -> np.ndarray:
    """Lookup table: label 0..4 -> gain used in DCG."""
    labels = np.arange(MAX_GAIN + 1, dtype=np.float64)
    return labels if mode == "linear" else np.exp2(labels) - 1.0


def ideal_dcg(r: RankingArrays, table: np.ndarray, disc: np.ndarray) -> np.ndarray:
    """Per-query IDCG@k from the reference labels, without a per-query loop."""
    # Sort labels by (query, gain descending) through one integer key.
    key = r.label_query * (MAX_GAIN + 1) + (MAX_GAIN - r.label_gain.astype(np.int64))
    key.sort()
    query = key // (MAX_GAIN + 1)
    gain = MAX_GAIN - key % (MAX_GAIN + 1)
    rank = np.arange(1, key.size + 1, dtype=np.int64) - r.label_offsets[query]
    keep = rank <= r.k[query]
    return segment_sum(query[keep], table[gain[keep]] * disc[rank[keep]], r.n)


def compute(r: RankingArrays) -> MetricArrays:
    table = gain_values(r.protocol.gain)
    # Ranks never exceed the positions returned or the labels held, whatever k is.
    depth = max(int(r.rank.max(initial=0)), int(np.diff(r.label_offsets).max(initial=0)))
    disc = discounts(depth)
    scored = r.counted & ~r.unlabeled
    g = np.where(scored, table[np.clip(r.gain, 0, MAX_GAIN)], 0.0)
    dcg = segment_sum(r.query, g * disc[r.rank], r.n)
    idcg = ideal_dcg(r, table, disc)
    with np.errstate(divide="ignore", invalid="ignore"):
        value = np.where(idcg > 0, dcg / np.where(idcg > 0, idcg, 1.0), np.nan)
    return population_metric(
        NAME, value, r.n_unlabeled > 0, r.population_complete, no_relevant=idcg <= 0
    )
