"""(query, unit) pairs of packed positions, grouped by integer unit codes.

The dashboard's blocking list and pool coverage count distinct (query, unit) pairs
over every run's packed positions. They work on one int64 code per position
instead of the unit id strings: equal codes within a query mean the same unit
(codes the store hands out, equal across the runs of a build, qualify; so do the
pair codes :func:`pair_codes` makes from the strings).

:func:`pair_groups` groups the positions by (query, code) without sorting every
position: each code is claimed by one query in one pass (a code used by a single
query is then its own group), the positions of codes several queries share by
another query in each of a few more passes over them, and only what is left then
(codes very many queries share) is sorted. A group is named by one of its positions, so
per-group sums are one ``np.bincount`` and per-group values are read at the naming
positions (:func:`group_heads`).

:func:`repeated_pairs` finds the entries repeating an earlier entry's pair (a unit returned
twice for a query) the same way: each code is claimed by one entry
through a table indexed by code (:func:`code_claims`), and only the entries of codes
claimed by another entry are sorted.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import chain, count

import numpy as np

#: Above this many codes per position the code range is compressed before grouping.
_SPARSE = 2
#: Claiming passes over the positions of codes that several queries share, before the
#: rest is sorted.
_CLAIMS = 3
#: A table indexed by code is made while the codes span at most this many slots per entry.
_TABLE_SPAN = 4


def code_table_fits(span: int, entries: int) -> bool:
    """Whether codes spanning ``span`` values are looked up through a table indexed by code
    (dense codes, as the store hands them out) for ``entries`` entries, rather than sorted."""
    return span <= _TABLE_SPAN * entries + 1024


def code_claims(code: np.ndarray) -> np.ndarray | None:
    """For each entry, the entry that claimed its code (one per code: the last one), by one
    table indexed by code; None when the codes are too sparse for a table."""
    if not code.size:
        return np.zeros(0, dtype=np.int64)
    low = int(code.min())
    at = code - low if low else code
    span = int(at.max()) + 1
    if not code_table_fits(span, code.size):
        return None
    first = np.empty(span, dtype=np.int64)
    first[at] = np.arange(code.size, dtype=np.int64)
    return first[at]


def repeated_pairs(query: np.ndarray, code: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The entries whose (query, code) pair an earlier entry has, and for each the first entry
    with that pair (both in no particular order). Only the entries of codes held by several
    entries (:func:`code_claims`) are sorted."""
    n = code.size
    none = np.zeros(0, dtype=np.int64)
    claimer = code_claims(code)
    if claimer is None:
        among = np.arange(n, dtype=np.int64)
    else:
        shared = np.flatnonzero(claimer != np.arange(n))
        if not shared.size:
            return none, none
        used = np.zeros(n, dtype=bool)
        used[shared] = True
        used[claimer[shared]] = True
        among = np.flatnonzero(used)
    by = among[np.lexsort((code[among], query[among]))]  # stable: entry order within a pair
    same = (query[by][1:] == query[by][:-1]) & (code[by][1:] == code[by][:-1])
    repeat_at = np.flatnonzero(same) + 1
    if not repeat_at.size:
        return none, none
    start = np.maximum.accumulate(np.where(np.concatenate(([True], ~same)),
                                           np.arange(by.size), 0))
    return by[repeat_at], by[start[repeat_at]]


def pair_codes(runs: Sequence[tuple[np.ndarray, Sequence[Sequence[str]]]]) -> list[np.ndarray]:
    """One code per packed position of each run (``(positions, top_units)``: each row's
    query, as a number shared by the runs, and its unit ids), equal exactly when the
    query and the unit id are: one small dictionary per query, across the runs."""
    if not runs:
        return []
    queries = distinct_ints(np.concatenate([positions for positions, _ in runs]))
    lengths = np.zeros((len(runs), queries.size), dtype=np.int64)
    rows: list[list[int]] = []
    for r, (positions, tops) in enumerate(runs):
        at = np.searchsorted(queries, positions)
        row = np.full(queries.size, -1, dtype=np.int64)
        row[at] = np.arange(len(positions))
        rows.append(row.tolist())
        lengths[r, at] = np.fromiter(map(len, tops), dtype=np.int64, count=len(tops))
    flat: list[int] = []  # query by query, run by run
    for at in zip(*rows, strict=True):
        seen: dict[str, int] = {}
        flat.extend(map(seen.setdefault,
                        chain.from_iterable(tops[i] for (_, tops), i in zip(runs, at, strict=True)
                                            if i >= 0),
                        count(len(flat))))
    codes = np.fromiter(flat, dtype=np.int64, count=len(flat))
    # where each (run, query) block starts in ``flat``
    sizes = lengths.T.ravel()
    start = (np.cumsum(sizes) - sizes).reshape(queries.size, len(runs)).T
    out = []
    for r, (positions, _) in enumerate(runs):
        at = np.searchsorted(queries, positions)
        n = lengths[r, at]
        offsets = np.cumsum(n) - n
        out.append(codes[np.repeat(start[r, at] - offsets, n)
                         + np.arange(int(n.sum()), dtype=np.int64)])
    return out


def distinct_ints(values: np.ndarray) -> np.ndarray:
    """``np.unique(values)`` of an integer array, by one count per value (no sort) when the
    values are non-negative and at most a few times as many as the entries (query positions)."""
    if values.size and values.dtype.kind in "iu" and int(values.min()) >= 0 \
            and int(values.max()) <= _SPARSE * values.size + 1024:
        return np.flatnonzero(np.bincount(values)).astype(values.dtype, copy=False)
    return np.unique(values)


def pair_groups(query: np.ndarray, code: np.ndarray) -> np.ndarray:
    """Each entry's group, named by one of its entries (``group[i] == i`` for exactly one
    entry of each group): entries share a group exactly when their ``query`` and
    ``code`` are equal."""
    n = code.size
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    low = int(code.min())
    if low:
        code = code - low
    top = int(code.max()) + 1
    if top > _SPARSE * n + 1024:
        _, code = np.unique(code, return_inverse=True)
        top = int(code.max()) + 1
    first = np.empty(top, dtype=np.int64)
    first[code] = np.arange(n, dtype=np.int64)  # one entry per code (whichever lands last)
    group = first[code]
    pending = np.flatnonzero(query[group] != query)
    for _ in range(_CLAIMS):  # a code several queries share: claimed again by another
        if not pending.size:
            return group
        claim = code[pending]
        first[claim] = pending
        claimer = first[claim]
        joined = query[claimer] == query[pending]
        group[pending[joined]] = claimer[joined]
        pending = pending[~joined]
    if pending.size:  # codes very many queries share: the rest sorted
        _, at, inverse = np.unique(query[pending] * top + code[pending], return_index=True,
                                   return_inverse=True)
        group[pending] = pending[at][inverse]
    return group


def group_heads(group: np.ndarray) -> np.ndarray:
    """The entry that names each group (see :func:`pair_groups`), in entry order."""
    return np.flatnonzero(group == np.arange(group.size))
