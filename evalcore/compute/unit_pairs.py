"""(query, unit) pairs of packed positions, grouped by integer unit codes.

The dashboard's blocking list and pool coverage count distinct (query, unit) pairs
over every run's packed positions. They work on one int64 code per position
instead of the unit id strings: equal codes within a query mean the same unit
(codes the store hands out, equal across the runs of a build, qualify; so do the
pair codes :func:`pair_codes` makes from the strings).

:func:`pair_groups` numbers the distinct (query, code) pairs without sorting every
position: each code is claimed by one query in one pass (a code used by a single
query, the common case, is then its own group); only the positions of codes that
several queries share are sorted.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import chain, count

import numpy as np

#: Above this many codes per position a code range is compressed before grouping.
_SPARSE = 2


def pair_codes(runs: Sequence[tuple[np.ndarray, Sequence[Sequence[str]]]],
               n_queries: int) -> list[np.ndarray]:
    """One code per packed position of each run (``(positions, top_units)``: each row's
    position among ``n_queries`` study queries and its unit ids), equal exactly when
    the query and the unit id are: one small dictionary per query, across the runs."""
    rows = []
    for positions, _ in runs:
        row = np.full(n_queries, -1, dtype=np.int64)
        row[positions] = np.arange(len(positions))
        rows.append(row.tolist())
    chunks: list[list[list[int]]] = [[[] for _ in tops] for _, tops in runs]
    base = 0
    for p in range(n_queries):
        seen: dict[str, int] = {}
        for row, (_, tops), out in zip(rows, runs, chunks, strict=True):
            i = row[p]
            if i >= 0:
                top = tops[i]
                out[i] = list(map(seen.setdefault, top, count(base)))
                base += len(top)
    return [np.fromiter(chain.from_iterable(c), dtype=np.int64, count=sum(map(len, c)))
            for c in chunks]


def pair_groups(query: np.ndarray, code: np.ndarray) -> tuple[np.ndarray, int]:
    """(each entry's group, number of groups): entries share a group exactly when their
    ``query`` and ``code`` are equal; groups are numbered 0.. with none empty."""
    n = code.size
    if n == 0:
        return np.zeros(0, dtype=np.int64), 0
    code = code - code.min()
    top = int(code.max()) + 1
    if top > _SPARSE * n + 1024:
        _, code = np.unique(code, return_inverse=True)
        top = int(code.max()) + 1
    owner = np.empty(top, dtype=np.int64)
    owner[code] = query  # one of the code's queries (whichever write lands last)
    claimed = owner[code] == query
    group = code.copy()
    n_groups = top
    if not claimed.all():  # codes several queries share: their other pairs sorted
        rest = np.flatnonzero(~claimed)
        _, inverse = np.unique(query[rest] * top + code[rest], return_inverse=True)
        group[rest] = top + inverse
        n_groups = top + int(inverse.max()) + 1
    used = np.zeros(n_groups, dtype=bool)
    used[group] = True
    number = np.cumsum(used) - 1
    return number[group], int(number[-1]) + 1


def group_values(group: np.ndarray, n_groups: int, values: np.ndarray) -> np.ndarray:
    """Each group's value of ``values`` (one per entry, equal within a group)."""
    out = np.empty(n_groups, dtype=values.dtype)
    out[group] = values
    return out
