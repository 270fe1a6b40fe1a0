r"""Two runs' rankings of one query set aligned unit by unit: the input of decided comparisons.

Runs A and B over the same queries share their unknown units: an unlabeled unit (or one
in conflict) returned by both has ONE true gain. :class:`PairUnits` holds, per query,
every distinct unit either run returned, with its first counted rank in each run, the
lowest and highest gain it may have (exactly as
:class:`~evalcore.compute.measures.ranking.RankingArrays` reads them), and the query's
reference labels (the \|R\| and IDCG population); rows are grouped by query, so per-query
folds are segment sums.

On a population not declared complete (contract section 12) up to
:meth:`PairUnits.outside` corpus units with no label, in neither cut, may be relevant
with any gain: ``unlabeled_pool`` (per query; ``np.inf``: corpus size unknown) is the only
per-query input the store must give besides the labels. :meth:`PairUnits.what_if` and
its kin copy queries with some gains fixed: the scenarios the decide-queue scores.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import chain
from operator import eq, itemgetter

import numpy as np

from evalcore.compute.batch import CONFLICT_BASE, CodedUnits, ObservationBatch
from evalcore.compute.measures.ranking import RankingArrays
from evalcore.contract.query_order import natural_key

#: The per-row fields of :class:`PairUnits` (int64 or bool or int8 [U]; None where absent).
_ROW_FIELDS = "query rank_a rank_b low high unlabeled conflict unit_code row_ref".split()


@dataclass(frozen=True, eq=False)
class PairUnits:
    """Units of two runs per query (rows grouped by query); see the module docstring."""

    n: int
    k_a: np.ndarray  # int64[n]: run A's own cutoff per query
    k_b: np.ndarray  # int64[n]
    query: np.ndarray  # int64[U]
    rank_a: np.ndarray  # int64[U], 0 = not returned by A
    rank_b: np.ndarray  # int64[U]
    low: np.ndarray  # int8[U]
    high: np.ndarray  # int8[U]
    unlabeled: np.ndarray  # bool[U]
    conflict: np.ndarray  # bool[U]
    ref_query: np.ndarray  # int64[L]
    ref_low: np.ndarray  # int8[L]
    ref_high: np.ndarray  # int8[L]
    #: The packed unit ids of both runs, and each row's position in them (None in copies).
    unit_names: Sequence[str] | None = None
    unit_code: np.ndarray | None = None
    #: float64[n]: corpus units with no label per query (np.inf: unknown; 0 where the
    #: population is complete); None: every population complete.
    unlabeled_pool: np.ndarray | None = None
    #: int64[U]: the reference label of each row in conflict (-1 for the others), so that a
    #: what-if copy fixes both; None: no row is in conflict (or not known: copies).
    row_ref: np.ndarray | None = None

    def outside(self, in_a: np.ndarray, in_b: np.ndarray) -> np.ndarray:
        """float64[n]: ``U_out`` of the pair at these cuts: the corpus units with no label in
        neither cut, any number of which may be relevant (np.inf: unbounded; 0 on a
        complete population)."""
        if self.unlabeled_pool is None:
            return np.zeros(self.n)
        inside = np.bincount(self.query[self.unlabeled & (in_a | in_b)], minlength=self.n)
        return np.maximum(self.unlabeled_pool - inside, 0.0)

    def overfull(self, in_a: np.ndarray, in_b: np.ndarray) -> np.ndarray:
        """bool[n]: the population is complete, or the corpus is too small to hold every
        unlabeled unit of both cuts (an inconsistent corpus size): a unit only one run
        returns is then not among the other run's outside units."""
        if self.unlabeled_pool is None:
            return np.ones(self.n, dtype=bool)
        inside = np.bincount(self.query[self.unlabeled & (in_a | in_b)], minlength=self.n)
        return self.unlabeled_pool < np.maximum(inside, 1)

    def unit_id(self, row: int) -> str:
        """The unit id of ``row`` (the row index in a what-if copy)."""
        if self.unit_names is None or self.unit_code is None:
            return str(row)
        return self.unit_names[int(self.unit_code[row])]

    def unit_ids(self, rows: np.ndarray) -> list[str]:
        """The unit ids of ``rows`` (row indices), in their order: named in one read when
        the names come from codes (:meth:`unit_id` one row at a time reads once per row)."""
        if self.unit_names is None or self.unit_code is None:
            return [str(r) for r in np.asarray(rows).tolist()]
        at = self.unit_code[np.asarray(rows, dtype=np.int64)]
        if isinstance(self.unit_names, NamedCodes):
            return self.unit_names.take(at)
        names = self.unit_names
        return [names[i] for i in at.tolist()]

    @property
    def unknown(self) -> np.ndarray:
        """bool[U]: rows whose gain is not known (unlabeled or in conflict)."""
        return self.low != self.high

    def subset(self, keep: np.ndarray) -> PairUnits:
        """The unit rows ``keep`` (bool[U]) of every query; the reference labels, cutoffs and
        query count unchanged."""
        rows = {name: getattr(self, name) for name in _ROW_FIELDS}
        return dataclasses.replace(
            self, **{name: None if a is None else a[keep] for name, a in rows.items()})

    def what_if(self, rows: np.ndarray, gains: np.ndarray) -> PairUnits:
        """One scenario per (row, gain): the row's query with that unit's gain fixed.

        Scenario ``s`` is a copy of query ``query[rows[s]]`` (all its unit rows and
        reference labels) in which unit ``rows[s]`` has gain ``gains[s]``.
        """
        rows = np.asarray(rows, dtype=np.int64)
        unit_take, unit_scen = _replicate(self.query, self.query[rows], self.n)
        fixed = unit_take == rows[unit_scen]
        return self._copies(self.query[rows], unit_take, unit_scen, fixed,
                            np.asarray(gains)[unit_scen[fixed]])

    def with_gains(self, rows: np.ndarray, gains: np.ndarray) -> PairUnits:
        """Every query, with each unit ``rows[i]`` fixed at gain ``gains[i]`` (a unit in
        conflict: its reference label too): the evidence once those labels are given."""
        rows = np.asarray(rows, dtype=np.int64)
        fixed = np.zeros(self.query.size, dtype=bool)
        fixed[rows] = True
        by_row = np.zeros(self.query.size, dtype=np.int8)
        by_row[rows] = np.asarray(gains, dtype=np.int8)
        return self._copies(np.arange(self.n, dtype=np.int64),
                            np.arange(self.query.size, dtype=np.int64), self.query, fixed,
                            by_row[fixed])

    def what_if_prefix(self, rows: np.ndarray, gains: np.ndarray, scenarios: np.ndarray,
                       draws: np.ndarray | None = None) -> PairUnits:
        """Labels given in the order of ``rows``: scenario ``s`` (one per entry of
        ``scenarios``, indices into ``rows``) is a copy of the query of
        ``rows[scenarios[s]]`` with every row among ``rows[: scenarios[s] + 1]`` of that
        query fixed at its gain (the query after that many labels of the sequence). The
        gains are ``gains`` (parallel to ``rows``), or row ``draws[s]`` of a 2-D
        ``gains`` (one sequence of gains per draw)."""
        rows = np.asarray(rows, dtype=np.int64)
        scenarios = np.asarray(scenarios, dtype=np.int64)
        table = np.atleast_2d(np.asarray(gains))
        draws = np.zeros(scenarios.size, dtype=np.int64) if draws is None else draws
        source = self.query[rows[scenarios]]
        unit_take, unit_scen = _replicate(self.query, source, self.n)
        position = np.full(self.query.size, np.iinfo(np.int64).max, dtype=np.int64)
        position[rows] = np.arange(rows.size)
        at = position[unit_take]
        fixed = at <= scenarios[unit_scen]
        fixed_gains = table[draws[unit_scen[fixed]], at[fixed]].astype(np.int8)
        return self._copies(source, unit_take, unit_scen, fixed, fixed_gains)

    def _copies(self, source: np.ndarray, unit_take: np.ndarray, unit_scen: np.ndarray,
                fixed: np.ndarray, gains: np.ndarray) -> PairUnits:
        """Copies of the queries ``source`` (one scenario each) whose rows
        ``unit_take[fixed]`` have the gains ``gains`` (a unit in conflict: its reference
        label too)."""
        ref_take, ref_scen = _replicate(self.ref_query, source, self.n)
        low = self.low[unit_take].copy()
        high = self.high[unit_take].copy()
        low[fixed] = high[fixed] = gains
        ref_low = self.ref_low[ref_take].copy()
        ref_high = self.ref_high[ref_take].copy()
        if self.row_ref is not None:  # a fixed unit in conflict: its reference label too
            refs = self.row_ref[unit_take[fixed]]
            hit = refs >= 0
            if hit.any():
                counts = np.bincount(self.ref_query, minlength=self.n)
                first = np.concatenate(([0], np.cumsum(counts)[:-1]))
                per = counts[source]
                block = np.concatenate(([0], np.cumsum(per)[:-1]))
                scen = unit_scen[fixed][hit]
                at = block[scen] + refs[hit] - first[source[scen]]
                ref_low[at] = ref_high[at] = gains[hit]
        return PairUnits(
            n=source.size,
            k_a=self.k_a[source],
            k_b=self.k_b[source],
            query=unit_scen,
            rank_a=self.rank_a[unit_take],
            rank_b=self.rank_b[unit_take],
            low=low,
            high=high,
            # Still "not among the reference labels": a completion adds it at its gain.
            unlabeled=self.unlabeled[unit_take],
            conflict=self.conflict[unit_take] & ~fixed,
            ref_query=ref_scen,
            ref_low=ref_low,
            ref_high=ref_high,
            unlabeled_pool=None if self.unlabeled_pool is None else self.unlabeled_pool[source],
        )


def _replicate(query: np.ndarray, source: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(rows to take, their scenario) so that scenario s holds every row of query source[s]."""
    counts = np.bincount(query, minlength=n)
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    per = counts[source]
    scen = np.repeat(np.arange(source.size, dtype=np.int64), per)
    offset = np.arange(int(per.sum()), dtype=np.int64) - np.repeat(np.cumsum(per) - per, per)
    return np.repeat(starts[source], per) + offset, scen


def align(
    batch_a: ObservationBatch,
    batch_b: ObservationBatch,
    ranking_a: RankingArrays,
    ranking_b: RankingArrays,
) -> PairUnits:
    """Align two batches over the same query ids (same order) unit by unit.

    Both batches must hold the same reference labels (the runs are judged against
    one reference); a unit both returned takes its range from run A.

    Raises ``ValueError`` when the query sets differ (a comparison is over one
    query set).
    """
    if batch_a.query_ids != batch_b.query_ids:
        only_a = sorted(set(batch_a.query_ids) - set(batch_b.query_ids), key=natural_key)[:3]
        only_b = sorted(set(batch_b.query_ids) - set(batch_a.query_ids), key=natural_key)[:3]
        raise ValueError(
            "the two runs are not over the same query set (in the same order): "
            f"only in A e.g. {only_a}, only in B e.g. {only_b}; evaluate both runs on one query set"
        )
    n = len(batch_a)
    split = ranking_a.query.size
    queries = np.concatenate((ranking_a.query, ranking_b.query))
    flat: Sequence[str]
    if (batch_a.pos_unit is not None and batch_b.pos_unit is not None
            and isinstance(batch_a.top_units, CodedUnits)
            and isinstance(batch_b.top_units, CodedUnits)
            and batch_a.top_units.names is batch_b.top_units.names):
        # Packed from one study read's unit codes: grouped by code, named when asked.
        codes = np.concatenate((batch_a.pos_unit, batch_b.pos_unit))
        group, rep, query = _grouped(queries, codes)
        flat = NamedCodes(codes, batch_a.top_units.names)
    else:
        flat = list(chain(chain.from_iterable(batch_a.top_units),
                          chain.from_iterable(batch_b.top_units)))
        group, rep, query = _group_units(flat, queries)
    code_a, code_b = group[:split], group[split:]
    if code_a.size != ranking_a.query.size or code_b.size != ranking_b.query.size:
        raise ValueError("internal: unit ids and packed positions differ in length")
    size = rep.size
    # Both runs read the same reference labels, so a unit both returned has one range.
    low = np.zeros(size, dtype=np.int8)
    high = np.zeros(size, dtype=np.int8)
    unlabeled = np.zeros(size, dtype=bool)
    conflict = np.zeros(size, dtype=bool)
    for code, r in ((code_b, ranking_b), (code_a, ranking_a)):  # A's range wins
        low[code] = r.low
        high[code] = r.high
        unlabeled[code[r.unlabeled]] = True
        conflict[code[r.conflict]] = True
    rank_a = _first_rank(size, code_a, ranking_a)
    rank_b = _first_rank(size, code_b, ranking_b)
    row_ref = _conflict_refs(batch_a, conflict, query, flat, rep)
    return PairUnits(
        n=n,
        k_a=ranking_a.k,
        k_b=ranking_b.k,
        query=query,
        rank_a=rank_a,
        rank_b=rank_b,
        low=low,
        high=high,
        unlabeled=unlabeled,
        conflict=conflict,
        ref_query=ranking_a.label_query,
        ref_low=ranking_a.label_low,
        ref_high=ranking_a.label_high,
        unit_names=flat,
        unit_code=rep,
        unlabeled_pool=ranking_a.unlabeled_pool,
        row_ref=row_ref,
    )


def _conflict_refs(batch: ObservationBatch, conflict: np.ndarray, query: np.ndarray,
                   flat: Sequence[str], rep: np.ndarray) -> np.ndarray | None:
    """int64[U]: each row in conflict's index among the reference labels (-1 elsewhere);
    None when no row is in conflict. The batch lists its labels in conflict
    (``conflict_labels``) in the order of their codes among the labels."""
    rows = np.flatnonzero(conflict)
    if rows.size == 0:
        return None
    at = np.flatnonzero(batch.label_gain >= CONFLICT_BASE)
    index = {(q, unit): int(j) for (q, unit, _), j in zip(batch.conflict_labels, at.tolist(),
                                                          strict=True)}
    out = np.full(conflict.size, -1, dtype=np.int64)
    names = flat.take(rep[rows]) if isinstance(flat, NamedCodes) else [
        flat[i] for i in rep[rows].tolist()]
    out[rows] = [index.get((q, name), -1) for q, name in zip(query[rows].tolist(), names,
                                                            strict=True)]
    return out


def _group_units(flat: list[str], query: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(group of each position, a representative position of each group, each group's
    query): positions are grouped by (query, unit id), groups sorted by query.

    Units are matched by their string hash (C speed), then every position is checked to
    hold the same id as its group's representative; on a hash collision the ids are
    interned exactly instead.
    """
    # The hash's low bits only (see _by_query_then_code): ids equal there are one group
    # until the check below tells them apart.
    hashed = np.fromiter(map(hash, flat), np.int64, len(flat)) & ((1 << _CODE_BITS) - 1)
    group, rep, query_of = _grouped(query, hashed)
    if rep.size and len(flat) > 1 and not all(
            map(eq, flat, itemgetter(*rep[group].tolist())(flat))):
        # a collision: intern the ids exactly
        ids = {name: i for i, name in enumerate(dict.fromkeys(flat))}.__getitem__
        return _grouped(query, np.fromiter(map(ids, flat), np.int64, len(flat)))
    return group, rep, query_of


def _grouped(query: np.ndarray, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`_group_units` of positions whose units are told apart exactly by ``codes``."""
    order = _by_query_then_code(query, codes)
    cs, qs = codes[order], query[order]
    new = np.ones(order.size, dtype=bool)
    new[1:] = (cs[1:] != cs[:-1]) | (qs[1:] != qs[:-1])
    group = np.empty(order.size, dtype=np.int64)
    group[order] = np.cumsum(new) - 1
    return group, order[new], qs[new]


class NamedCodes(Sequence[str]):
    """Ids named from their codes (``names`` of an int array) only when read."""

    def __init__(self, codes: np.ndarray, names: Callable[[np.ndarray], Sequence[str]]) -> None:
        self._codes, self._names = codes, names

    def __len__(self) -> int:
        return self._codes.size

    def __getitem__(self, i):  # type: ignore[override]
        return self._names(self._codes[i : i + 1])[0]

    def take(self, positions: np.ndarray) -> list[str]:
        """The unit ids at ``positions``, named in one call."""
        return list(self._names(self._codes[positions]))


#: Bits of a unit's code kept below the query in :func:`_by_query_then_code`'s one key.
_CODE_BITS = 40


def _by_query_then_code(query: np.ndarray, code: np.ndarray) -> np.ndarray:
    """The positions ordered by query, then by ``code`` (non-negative, below
    ``2**_CODE_BITS``) within a query. One 64-bit key, the query above the code, sorts in a
    fraction of ``lexsort``'s time."""
    if query.size == 0 or int(query.max()) >= 1 << (63 - _CODE_BITS) or int(query.min()) < 0:
        return np.lexsort((code, query))
    return np.argsort((query.astype(np.int64) << _CODE_BITS) | code)


def _first_rank(size: int, code: np.ndarray, r: RankingArrays) -> np.ndarray:
    out = np.zeros(size, dtype=np.int64)
    counted = r.counted
    out[code[counted]] = r.rank[counted]
    return out
