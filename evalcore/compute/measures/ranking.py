"""Per-position and per-query arrays shared by every measure.

:class:`RankingArrays` applies a protocol to an
:class:`~evalcore.compute.batch.ObservationBatch` once: the lowest and highest
gain each measured position and each reference label may have (a known label:
its gain; an unlabeled unit: 0..MAX_GAIN; a unit in conflict: its annotators'
lowest..highest gain), which positions are unlabeled or in conflict, and which
are counted (not returned duplicates).

:meth:`RankingArrays.cut` gives a :class:`Cut`: the positions 1..k of one
cutoff under one relevance threshold, with the segment counts the measure
modules read (certainly relevant, possibly relevant, ...). Cuts are cached, so
``P@10`` and ``RR@10`` share one. All arithmetic is numpy over flat arrays.

The compatibility policies (``EvalProtocol.unjudged_as_nonrelevant`` and
``trec_eval``) are applied here: unlabeled returned units get gain 0 and no
position counts as unlabeled; ``trec_eval`` also declares every population
complete.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from evalcore.compute.batch import CODE_HIGH, CODE_LOW, CONFLICT_BASE, UNLABELED, ObservationBatch
from evalcore.contract.gains import MAX_GAIN

if TYPE_CHECKING:  # (or the plain ProtocolChoices: evalcore.contract.protocol_choices)
    from evalcore.contract.evaluation_protocol import EvalProtocol


def counts_in(offsets: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Per-query count of the flat positions where ``mask`` holds, query i's positions being
    ``offsets[i]:offsets[i + 1]`` (one ``reduceat`` over the mask's bytes, no copy of the
    selected positions)."""
    n = offsets.size - 1
    out = np.zeros(n, dtype=np.int64)
    starts = offsets[:-1]
    m = int(np.searchsorted(starts, mask.size, side="left"))  # the rest are empty, at the end
    if m:
        out[:m] = np.add.reduceat(
            mask.astype(bool, copy=False).view(np.uint8), starts[:m], dtype=np.int64
        )
        out[:m][starts[:m] == offsets[1 : m + 1]] = 0  # reduceat reads one element there
    return out


def segment_sum(query: np.ndarray, weights: np.ndarray, n: int) -> np.ndarray:
    """Per-query float sum of ``weights`` over flat positions."""
    return np.bincount(query, weights=weights, minlength=n).astype(np.float64, copy=False)


def segment_cumsum(query: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Running sum of ``values`` within each query (flat positions grouped by query, in order).

    Float sums start afresh at each query (one row per query of a padded matrix, or one
    ``cumsum`` per query when the rows would be too uneven), so a query's sums are bit for
    bit those of the query alone, whatever precedes it in the batch; integer sums are
    exact either way."""
    total = np.cumsum(values)
    if total.size == 0:
        return total
    starts = np.flatnonzero(np.concatenate(([True], query[1:] != query[:-1])))
    lengths = np.diff(np.append(starts, total.size))
    if total.dtype.kind == "f" and starts.size > 1:
        width = int(lengths.max())
        if starts.size * width <= 4 * total.size + 4096:
            row = np.repeat(np.arange(starts.size), lengths)
            col = np.arange(total.size) - np.repeat(starts, lengths)
            table = np.zeros((starts.size, width), dtype=total.dtype)
            table[row, col] = values
            np.cumsum(table, axis=1, out=table)
            return table[row, col]
        return np.concatenate([np.cumsum(values[a:a + m]) for a, m in
                               zip(starts.tolist(), lengths.tolist(), strict=True)])
    before = np.concatenate(([0], total[starts[1:] - 1])) if starts.size > 1 else np.zeros(1)
    return total - np.repeat(before.astype(total.dtype, copy=False), lengths)


def segment_reduce(
    ufunc: np.ufunc, query: np.ndarray, values: np.ndarray, into: np.ndarray
) -> np.ndarray:
    """Fold ``values`` into ``into[query]`` with ``ufunc`` (e.g. ``np.maximum``); ``query``
    must be sorted (flat positions grouped by query)."""
    if values.size:
        starts = np.flatnonzero(np.concatenate(([True], query[1:] != query[:-1])))
        q = query[starts]
        into[q] = ufunc(into[q], ufunc.reduceat(values, starts))
    return into


def first_rank(query: np.ndarray, rank: np.ndarray, mask: np.ndarray, n: int) -> np.ndarray:
    """Per-query smallest rank where ``mask`` holds; 0 where it never does."""
    at = np.flatnonzero(mask)
    out = np.zeros(n, dtype=np.int64)
    if at.size:
        q = query[at]
        first = np.empty(at.size, dtype=bool)
        first[0] = True
        np.not_equal(q[1:], q[:-1], out=first[1:])
        out[q[first]] = rank[at[first]]
    return out


def level_counts(query: np.ndarray, gain: np.ndarray, n: int) -> np.ndarray:
    """int64[n, MAX_GAIN + 1]: how many of the gains ``gain`` query ``query`` holds per level."""
    levels = MAX_GAIN + 1
    return np.bincount(query * levels + gain.astype(np.int64),
                       minlength=n * levels).reshape(n, levels)


def discounts(depth: int) -> np.ndarray:
    """``1 / log2(rank + 1)`` for ranks ``0..depth`` (index 0 unused, kept for rank indexing)."""
    ranks = np.arange(depth + 1, dtype=np.float64)
    out = np.zeros(depth + 1, dtype=np.float64)
    out[1:] = 1.0 / np.log2(ranks[1:] + 1.0)
    return out


@dataclass(frozen=True, eq=False)
class RankingArrays:
    """A batch seen through a protocol. Flat arrays are per packed position."""

    n: int
    k: np.ndarray  # int64[n]: the observations' own cutoffs
    query: np.ndarray  # int64[P]: query index of each position
    rank: np.ndarray  # int64[P]: 1-based rank within the query
    low: np.ndarray  # int8[P]: lowest gain the unit may have
    high: np.ndarray  # int8[P]: highest gain the unit may have
    unlabeled: np.ndarray  # bool[P]: no label (never under a compatibility policy)
    conflict: np.ndarray  # bool[P]: annotators disagree (section 9)
    judged: np.ndarray  # bool[P]: a resolved label (whatever the policy)
    counted: np.ndarray  # bool[P]: not a returned duplicate
    population_complete: np.ndarray  # bool[n]
    label_query: np.ndarray  # int64[L]
    label_low: np.ndarray  # int8[L]
    label_high: np.ndarray  # int8[L]
    label_offsets: np.ndarray  # int64[n + 1]
    protocol: EvalProtocol
    #: float64[n]: corpus units with no label for the query (np.inf: unknown; 0 where the
    #: population is complete: no unit outside the reference set is relevant)
    unlabeled_pool: np.ndarray
    has_conflict: bool = False  # some label is in conflict
    within_own_k: bool = True  # no packed position lies beyond its observation's k
    #: int64[n + 1]: query i's positions are offsets[i]:offsets[i + 1] (ranks 1..their count)
    offsets: np.ndarray | None = None
    _cuts: dict[tuple[int | None, int], Cut] = field(default_factory=dict, repr=False)

    @classmethod
    def build(cls, batch: ObservationBatch, protocol: EvalProtocol) -> RankingArrays:
        n = len(batch)
        code = batch.pos_gain
        unlabeled = code == UNLABELED
        label_code = batch.label_gain
        has_conflict = bool(batch.conflict_labels)
        if has_conflict:
            index = code.astype(np.intp) + 1
            low, high = CODE_LOW[index], CODE_HIGH[index]
            conflict = code >= CONFLICT_BASE
            judged = ~unlabeled & ~conflict
            label_index = label_code.astype(np.intp) + 1
            label_low, label_high = CODE_LOW[label_index], CODE_HIGH[label_index]
        else:  # codes are gains or UNLABELED: no table lookups
            low = np.maximum(code, np.int8(0))
            high = np.where(unlabeled, np.int8(MAX_GAIN), code)
            conflict = np.zeros(code.shape, dtype=bool)
            judged = ~unlabeled
            label_low = label_high = label_code
        if protocol.unjudged_are_nonrelevant:
            high = np.where(unlabeled, np.int8(0), high)
            unlabeled = np.zeros(code.shape, dtype=bool)
        complete = batch.population_complete
        if protocol.trec_eval:
            complete = np.ones(n, dtype=bool)
        pool = np.full(n, np.inf)
        if batch.corpus_size is not None:
            pool = np.maximum(batch.corpus_size - batch.n_labels, 0.0)
        return cls(
            n=n,
            k=batch.k,
            query=batch.pos_query,
            rank=batch.pos_rank,
            low=low,
            high=high,
            unlabeled=unlabeled,
            conflict=conflict,
            judged=judged,
            counted=~batch.pos_dup,
            population_complete=complete,
            label_query=np.repeat(np.arange(n, dtype=np.int64), batch.n_labels),
            label_low=label_low,
            label_high=label_high,
            label_offsets=batch.label_offsets,
            protocol=protocol,
            unlabeled_pool=np.where(complete, 0.0, pool),
            has_conflict=has_conflict,
            within_own_k=batch.depth == 0 or bool((batch.k >= batch.depth).all()),
            offsets=batch.pos_offsets,
        )

    def cut(self, k: int | None, threshold: int) -> Cut:
        """Positions 1..k (each observation's own k when ``k`` is None) under ``threshold``."""
        key = (k, threshold)
        found = self._cuts.get(key)
        if found is None:
            found = self._cuts[key] = Cut.build(self, k, threshold)
        return found

    @cached_property
    def label_conflict(self) -> np.ndarray:
        """bool[L]: reference labels in conflict."""
        if not self.has_conflict:
            return np.zeros(self.label_low.shape, dtype=bool)
        return self.label_low != self.label_high

    @cached_property
    def label_levels(self) -> np.ndarray:
        """int64[n, MAX_GAIN + 1]: reference labels per lowest gain (:func:`level_counts`)."""
        return level_counts(self.label_query, self.label_low, self.n)

    @cached_property
    def label_levels_high(self) -> np.ndarray:
        """int64[n, MAX_GAIN + 1]: reference labels per highest gain."""
        if not self.has_conflict:
            return self.label_levels
        return level_counts(self.label_query, self.label_high, self.n)

    @cached_property
    def max_rank(self) -> int:
        return int(self.rank.max(initial=0))


@dataclass(frozen=True, eq=False)
class Cut:
    """One cutoff under one relevance threshold; flat arrays cover positions 1..k only.

    ``sure`` marks counted positions certainly relevant (lowest gain >=
    threshold), ``maybe`` those whose relevance is unknown (an unlabeled unit,
    or a conflict whose gains fall on both sides of the threshold).
    """

    ranking: RankingArrays
    threshold: int
    offsets: np.ndarray  # int64[n + 1]: query i's positions in 1..k (flat arrays below)
    k: np.ndarray  # int64[n]: the cutoff of each query
    limit: np.ndarray  # int64[n]: k + 1 (blocking units are those at ranks < limit)
    query: np.ndarray
    rank: np.ndarray
    low: np.ndarray
    high: np.ndarray
    unlabeled: np.ndarray
    conflict: np.ndarray
    judged: np.ndarray
    counted: np.ndarray
    sure: np.ndarray  # bool[P']
    maybe: np.ndarray  # bool[P']
    n_sure: np.ndarray  # int64[n]: certainly relevant units in 1..k
    n_maybe: np.ndarray  # int64[n]: units in 1..k of unknown relevance (distinct)
    any_unlabeled: np.ndarray  # bool[n]: an unlabeled unit in 1..k
    any_maybe_conflict: np.ndarray  # bool[n]: a conflict straddling the threshold in 1..k
    n_maybe_conflict: np.ndarray  # int64[n]: distinct such conflicts in 1..k
    #: float64[n]: U_out (contract section 12): the units with no label outside 1..k that
    #: may be relevant (np.inf: unbounded; 0 on a complete population)
    u_out: np.ndarray

    @property
    def n(self) -> int:
        return self.ranking.n

    @property
    def protocol(self) -> EvalProtocol:
        return self.ranking.protocol

    @classmethod
    def build(cls, r: RankingArrays, k: int | None, threshold: int) -> Cut:
        n = r.n
        ks = r.k if k is None else np.full(n, k, dtype=np.int64)
        arrays = {
            name: getattr(r, name)
            for name in "query rank low high unlabeled conflict judged counted".split()
        }
        offsets = r.offsets
        if offsets is None:
            offsets = np.zeros(n + 1, dtype=np.int64)
            np.cumsum(np.bincount(r.query, minlength=n), out=offsets[1:])
        everything = r.within_own_k if k is None else k >= r.max_rank
        if not everything:
            # ranks run 1..count in each query: positions 1..k are each query's first ones
            inside = r.rank <= (ks[r.query] if k is None else k)
            arrays = {name: a[inside] for name, a in arrays.items()}
            kept = np.minimum(np.diff(offsets), ks)
            offsets = np.zeros(n + 1, dtype=np.int64)
            np.cumsum(kept, out=offsets[1:])
        counted, low, high = arrays["counted"], arrays["low"], arrays["high"]
        sure = counted & (low >= threshold)
        maybe = counted & (high >= threshold) & ~(low >= threshold)
        maybe_conflict = maybe & arrays["conflict"]
        n_maybe_conflict = counts_in(offsets, maybe_conflict)
        # Units without a label in 1..k (whatever the policy reads them as) are not outside.
        unlabeled_here = counted & ~arrays["judged"] & ~arrays["conflict"]
        u_out = np.maximum(r.unlabeled_pool - counts_in(offsets, unlabeled_here), 0.0)
        return cls(
            ranking=r,
            threshold=threshold,
            offsets=offsets,
            k=ks,
            limit=ks + 1,
            sure=sure,
            maybe=maybe,
            n_sure=counts_in(offsets, sure),
            n_maybe=counts_in(offsets, maybe),
            any_unlabeled=counts_in(offsets, arrays["unlabeled"]) > 0,
            any_maybe_conflict=n_maybe_conflict > 0,
            n_maybe_conflict=n_maybe_conflict,
            u_out=u_out,
            **arrays,
        )

    @cached_property
    def n_sure_ref(self) -> np.ndarray:
        """int64[n]: reference labels certainly relevant (|R| without the unknowns)."""
        r = self.ranking
        return counts_in(r.label_offsets, r.label_low >= self.threshold)

    @cached_property
    def n_maybe_ref(self) -> np.ndarray:
        """int64[n]: reference labels in conflict across the threshold (returned or not)."""
        r = self.ranking
        mask = (r.label_high >= self.threshold) & ~(r.label_low >= self.threshold)
        return counts_in(r.label_offsets, mask)
