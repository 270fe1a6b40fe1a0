"""Per-position and per-query arrays shared by every metric.

:class:`RankingArrays` applies a protocol to an
:class:`~evalcore.compute.batch.ObservationBatch` once: which measured positions are
unlabeled, which are counted (not returned duplicates), which are relevant
(gain >= ``relevance_threshold``), and the per-query segment sums every
metric module reads. All arithmetic is numpy over flat arrays.

``EvalProtocol.unjudged_as_nonrelevant`` (the trec_eval compatibility policy)
is applied here: unlabeled returned units get gain 0 and no position counts
as unlabeled, so no metric is blocked by them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from evalcore.compute.batch import UNLABELED, ObservationBatch
from evalcore.contract.evaluation_protocol import EvalProtocol


def segment_count(query: np.ndarray, mask: np.ndarray, n: int) -> np.ndarray:
    """Per-query count of the flat positions where ``mask`` holds."""
    return np.bincount(query[mask], minlength=n)


def segment_sum(query: np.ndarray, weights: np.ndarray, n: int) -> np.ndarray:
    """Per-query float sum of ``weights`` over flat positions."""
    return np.bincount(query, weights=weights, minlength=n).astype(np.float64, copy=False)


def discounts(depth: int) -> np.ndarray:
    """``1 / log2(rank + 1)`` for ranks ``0..depth`` (index 0 unused, kept for rank indexing)."""
    ranks = np.arange(depth + 1, dtype=np.float64)
    out = np.zeros(depth + 1, dtype=np.float64)
    out[1:] = 1.0 / np.log2(ranks[1:] + 1.0)
    return out


@dataclass(frozen=True, eq=False)
class RankingArrays:
    """A batch seen through a protocol. Flat arrays are per measured position."""

    n: int
    k: np.ndarray  # int64[n]
    query: np.ndarray  # int64[P]: query index of each position
    rank: np.ndarray  # int64[P]: 1-based rank within the query
    gain: np.ndarray  # int8[P]: label gain, UNLABELED where unknown (never under the compat policy)
    unlabeled: np.ndarray  # bool[P]
    counted: np.ndarray  # bool[P]: not a returned duplicate
    relevant: np.ndarray  # bool[P]: counted and gain >= threshold
    n_relevant_top: np.ndarray  # int64[n]: relevant units in 1..k
    n_unlabeled: np.ndarray  # int64[n]: unlabeled positions in 1..k
    n_unlabeled_units: np.ndarray  # int64[n]: distinct unlabeled units in 1..k
    n_relevant_ref: np.ndarray  # int64[n]: |R|, relevant units in the reference set
    population_complete: np.ndarray  # bool[n]
    label_query: np.ndarray  # int64[L]
    label_gain: np.ndarray  # int8[L]
    label_offsets: np.ndarray  # int64[n + 1]
    protocol: EvalProtocol

    @classmethod
    def build(cls, batch: ObservationBatch, protocol: EvalProtocol) -> RankingArrays:
        n = len(batch)
        query = batch.pos_query
        gain = batch.pos_gain
        if protocol.unjudged_as_nonrelevant:
            gain = np.where(gain == UNLABELED, np.int8(0), gain)
            unlabeled = np.zeros(gain.shape, dtype=bool)
        else:
            unlabeled = gain == UNLABELED
        counted = ~batch.pos_dup
        relevant = counted & (gain >= protocol.relevance_threshold)
        label_query = np.repeat(np.arange(n, dtype=np.int64), batch.n_labels)
        label_relevant = batch.label_gain >= protocol.relevance_threshold
        return cls(
            n=n,
            k=batch.k,
            query=query,
            rank=batch.pos_rank,
            gain=gain,
            unlabeled=unlabeled,
            counted=counted,
            relevant=relevant,
            n_relevant_top=segment_count(query, relevant, n),
            n_unlabeled=segment_count(query, unlabeled, n),
            n_unlabeled_units=segment_count(query, unlabeled & counted, n),
            n_relevant_ref=segment_count(label_query, label_relevant, n),
            population_complete=batch.population_complete,
            label_query=label_query,
            label_gain=batch.label_gain,
            label_offsets=batch.label_offsets,
            protocol=protocol,
        )
