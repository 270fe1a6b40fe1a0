"""The vectorised bound pieces give the values of the implementations they replaced.

nDCG's fill value (known labels placed best first on the ranks the unknown units do
not hold) was computed by building every rank slot 1..k; AP's best mean by one
argsort of every pool value. Both earlier versions are kept here as the reference
and compared on seeded random workloads (graded labels, 30% unlabeled, conflicts,
duplicates, short rankings, cutoffs deeper than the ranking).
"""

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalcore.compute.batch import ObservationBatch
from evalcore.compute.measures import average_precision, ndcg
from evalcore.compute.measures.ranking import (
    RankingArrays,
    counts_in,
    discounts,
    segment_cumsum,
    segment_reduce,
)
from evalcore.contract.evaluation_protocol import EvalProtocol
from evalcore.contract.gains import MAX_GAIN
from evalcore.contract.observation import Label, Observation


def _reference_fill_value(cut, g, table, disc):
    """The slot-by-slot version (before the held-rank search)."""
    r = cut.ranking
    n = cut.n
    levels = MAX_GAIN + 1
    known = ~r.label_conflict
    counts = np.bincount(
        r.label_query[known] * levels + r.label_low[known].astype(np.int64), minlength=n * levels
    ).reshape(n, levels)
    gq = cut.query[g]
    k = np.minimum(cut.k, counts.sum(axis=1) + np.bincount(gq, minlength=n))
    starts = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(k, out=starts[1:])
    free = np.ones(int(starts[-1]), dtype=bool)
    held = cut.rank[g] <= k[gq]
    free[starts[gq[held]] + cut.rank[g][held] - 1] = False
    slot_query = np.repeat(np.arange(n, dtype=np.int64), k)
    slot_rank = np.arange(starts[-1], dtype=np.int64) - starts[slot_query] + 1
    free_disc = disc[slot_rank[free]]
    n_free = np.bincount(slot_query[free], minlength=n)
    first = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(n_free, out=first[1:])
    cum = np.concatenate(([0.0], np.cumsum(free_disc)))
    out = np.zeros(n, dtype=np.float64)
    at = np.zeros(n, dtype=np.int64)
    for level in range(MAX_GAIN, 0, -1):
        end = at + counts[:, level]
        if table[level]:
            hi, lo = np.minimum(end, n_free), np.minimum(at, n_free)
            out += table[level] * (cum[first[:-1] + hi] - cum[first[:-1] + lo])
        at = end
    return out


def _reference_best_mean(query, pool, base, den, upper, zero_ok):
    """The one-argsort version (before the per-query matrix rows)."""
    start = np.where(den > 0, base / np.where(den > 0, den, 1), -np.inf if upper else np.inf)
    if zero_ok:
        start = np.where(den > 0, start, 0.0)
    if pool.size == 0:
        return start
    order = np.argsort(query * 4.0 + ((1.0 - pool) if upper else pool))
    q, vals = query[order], pool[order]
    taken = segment_cumsum(q, vals)
    t = segment_cumsum(q, np.ones(q.size, dtype=np.int64))
    candidate = (base[q] + taken) / (den[q] + t)
    return segment_reduce(np.maximum if upper else np.minimum, q, candidate, start)


def _workload(seed, n=300, conflicts=True):
    rng = random.Random(seed)
    observations = []
    for i in range(n):
        docs = [f"d{j}" for j in rng.sample(range(60), 40)]
        returned = docs[: rng.randint(0, 30)]
        if returned and rng.random() < 0.2:
            returned.insert(rng.randrange(len(returned)), rng.choice(returned))  # a duplicate
        labels = []
        for d in dict.fromkeys(returned + docs[30:36]):
            roll = rng.random()
            if roll < 0.3:
                continue  # unlabeled
            if conflicts and roll < 0.35:
                labels.append(Label(id=d, conflict=tuple(sorted(rng.sample(range(5), 2)))))
            else:
                labels.append(Label(id=d, gain=rng.choice([0, 0, 0, 1, 2, 3, 4])))
        observations.append(Observation(query_id=f"q{i}", k=rng.choice([5, 10, 20, 50]),
                                        returned_ids=returned, labels=labels,
                                        population_complete=True))
    return observations


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("gain", ["linear", "exponential"])
@pytest.mark.parametrize("k", [None, 3, 10, 100])
def test_ndcg_fill_value_equals_the_slot_version(seed, gain, k) -> None:
    protocol = EvalProtocol(gain=gain)
    batch = ObservationBatch.from_observations(_workload(seed, conflicts=seed != 3), protocol,
                                               min_depth=100)
    r = RankingArrays.build(batch, protocol)
    cut = r.cut(k, 1)
    table = ndcg.gain_values(gain)
    disc = discounts(r.max_rank + int(np.diff(r.label_offsets).max(initial=0)))
    g = np.flatnonzero(cut.counted & (cut.low != cut.high))
    got = ndcg._fill_value(cut, g, table, disc)
    assert np.allclose(got, _reference_fill_value(cut, g, table, disc), rtol=0, atol=1e-9)


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
@pytest.mark.parametrize("upper", [True, False])
@pytest.mark.parametrize("zero_ok", [True, False])
def test_ap_best_mean_equals_the_argsort_version(seed, upper, zero_ok) -> None:
    rng = np.random.default_rng(seed)
    n = 200
    sizes = rng.integers(0, 12, n)
    if seed == 4:  # one long pool: the matrix would be mostly padding, the flat path runs
        sizes[7] = 3000
    query = np.repeat(np.arange(n), sizes)
    pool = rng.integers(1, 9, query.size) / rng.integers(1, 40, query.size)  # ties included
    pool = np.minimum(pool, 1.0)
    base = rng.random(n) * 3
    den = rng.integers(0, 5, n).astype(np.float64)
    got = average_precision.best_mean(query, pool, base, den, upper, zero_ok)
    want = _reference_best_mean(query, pool, base, den, upper, zero_ok)
    assert np.array_equal(np.isfinite(got), np.isfinite(want))
    finite = np.isfinite(want)
    assert np.allclose(got[finite], want[finite], rtol=0, atol=1e-12)
    assert np.array_equal(got[~finite], want[~finite])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.booleans(), max_size=6), min_size=1, max_size=8))
def test_counts_in_segments_equal_the_counts_by_query(segments):
    """Per-query counts from the segments' offsets (empty segments anywhere, first and last
    included) are those counted by query index."""
    lengths = [len(s) for s in segments]
    offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    mask = np.asarray([b for s in segments for b in s], dtype=bool)
    query = np.repeat(np.arange(len(segments)), lengths)
    by_query = np.bincount(query[mask], minlength=len(segments))
    assert counts_in(offsets, mask).tolist() == by_query.tolist()
    assert counts_in(offsets, mask).tolist() == [sum(s) for s in segments]
