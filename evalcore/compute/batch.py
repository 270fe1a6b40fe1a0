"""Observations packed into flat numpy arrays: the metric computer's input.

An :class:`ObservationBatch` holds a query set column by column, CSR style:

* ``pos_offsets`` (``n + 1``) delimits, per query, the measured positions
  1..min(k, len(returned_ids)) in the flat position arrays;
* ``pos_gain`` (int8) is the label code of the unit at each position: the
  gain 0..MAX_GAIN, :data:`UNLABELED` (-1) when the unit has no label for
  that query, or a conflict code (:func:`conflict_code`, >=
  :data:`CONFLICT_BASE`) when its annotators disagree (contract section 9);
  :data:`CODE_LOW` / :data:`CODE_HIGH` give the lowest and highest gain a
  code may stand for;
* ``pos_dup`` marks returned duplicates (section 4 of the evidence contract:
  the unit already appeared at an earlier position after ``unit_of`` mapping;
  it keeps its position but adds no gain);
* ``label_offsets`` / ``label_gain`` hold every query's reference labels, one
  code per distinct labeled unit (a unit labeled twice is a
  ``duplicate_reference`` and makes the query invalid, so which gain is kept
  never reaches a number);
* per-query flags: ``population_complete``, ``scan_complete``,
  ``permission_violation``, ``duplicate_reference``;
* ``corpus_size`` (optional): how many units the corpus holds for each query, which
  bounds how many unlabeled units outside positions 1..k may be relevant on a
  population not declared complete (contract section 12); None (the default) or
  ``np.inf``: not known, so that number is unbounded.

Packing does one dictionary lookup per measured position (the only step that
needs the strings); everything after packing is numpy. Unit IDs are kept per
query (``top_units``) only to name blocking units and duplicates in reports,
and the IDs of reference units in conflict (``conflict_labels``) to name them.

The measured positions are 1..min(depth, len(returned_ids)) with ``depth =
max(k, min_depth)``: a caller that evaluates measures with their own cutoff
(``P@5``, ``R@100``) packs up to the deepest one once. Section-3 checks
(permissions) and section-4 duplicates cover every packed position.

Constructors: :meth:`~ObservationBatch.from_observations` (validated observations),
:meth:`~ObservationBatch.from_gain_maps` (per-query ``unit -> gain`` maps),
:meth:`~ObservationBatch.from_codes` (rankings and labels already joined into arrays: the
TREC readers) and :meth:`~ObservationBatch.from_unit_codes` (a stored run's unit codes).

The batch is protocol-free except for the protocol it carries as a default for
:func:`evalcore.compute.evaluate.evaluate_batch`; threshold, gain mode and the
unjudged policy are applied when metrics are computed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from itertools import repeat
from typing import TYPE_CHECKING

import numpy as np

from evalcore.compute.unit_pairs import code_table_fits, repeated_pairs
from evalcore.compute.validity import duplicate_positions, permission_violated
from evalcore.contract.gains import MAX_GAIN

if TYPE_CHECKING:
    from evalcore.contract.evaluation_protocol import EvalProtocol
    from evalcore.contract.observation import Observation

#: Sentinel in ``pos_gain`` for a unit with no label for the query.
UNLABELED: int = -1
#: Smallest conflict code: ``CONFLICT_BASE + low * (MAX_GAIN + 1) + high``.
CONFLICT_BASE: int = 8
_N_CODES = CONFLICT_BASE + (MAX_GAIN + 1) ** 2
#: Lowest / highest gain of every code, indexed by ``code + 1`` (so UNLABELED is index 0:
#: an unlabeled unit ranges over 0..MAX_GAIN).
CODE_LOW = np.zeros(_N_CODES + 1, dtype=np.int8)
CODE_HIGH = np.zeros(_N_CODES + 1, dtype=np.int8)
CODE_HIGH[0] = MAX_GAIN
CODE_LOW[1 : MAX_GAIN + 2] = CODE_HIGH[1 : MAX_GAIN + 2] = np.arange(MAX_GAIN + 1)
for _low in range(MAX_GAIN + 1):
    for _high in range(MAX_GAIN + 1):
        CODE_LOW[CONFLICT_BASE + _low * (MAX_GAIN + 1) + _high + 1] = _low
        CODE_HIGH[CONFLICT_BASE + _low * (MAX_GAIN + 1) + _high + 1] = _high


def default_protocol() -> EvalProtocol:
    """The contract's default protocol (the model is imported when first needed: a batch
    packed with a protocol given, as the command line's, never imports pydantic)."""
    from evalcore.contract.evaluation_protocol import EvalProtocol

    return EvalProtocol()


def conflict_code(gains: Sequence[int]) -> int:
    """The code of a unit whose annotators gave ``gains`` (at least two distinct)."""
    return CONFLICT_BASE + min(gains) * (MAX_GAIN + 1) + max(gains)


@dataclass(frozen=True, eq=False)
class ObservationBatch:
    """A query set as flat arrays (see the module docstring for the layout)."""

    query_ids: list[str]
    k: np.ndarray  # int64[n]
    pos_offsets: np.ndarray  # int64[n + 1]
    pos_gain: np.ndarray  # int8[P], UNLABELED where the unit has no label
    pos_dup: np.ndarray  # bool[P]
    dup_first: np.ndarray  # int64[P]: first position of a duplicate's unit, else 0
    label_offsets: np.ndarray  # int64[n + 1]
    label_gain: np.ndarray  # int8[L]
    population_complete: np.ndarray  # bool[n]
    scan_complete: np.ndarray  # bool[n]
    permission_violation: np.ndarray  # bool[n]
    duplicate_reference: np.ndarray  # bool[n]
    top_units: list[Sequence[str]]  # per query: unit IDs at positions 1..min(depth, len)
    protocol: EvalProtocol = field(default_factory=default_protocol)
    #: (query index, unit ID, code) of every reference label in conflict, in input order.
    conflict_labels: list[tuple[int, str, int]] = field(default_factory=list)
    #: The ``min_depth`` packed: positions 1..max(k, depth) of every query are held.
    depth: int = 0
    #: int64[P]: the unit code of every packed position when packed from codes
    #: (:meth:`from_unit_codes`; the same code is the same unit id within one study read),
    #: else None.
    pos_unit: np.ndarray | None = None
    #: float64[n]: the corpus size of each query (``np.inf``: unknown), or None: unknown for
    #: every query (:meth:`with_corpus_size`).
    corpus_size: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.query_ids)

    @property
    def n_positions(self) -> np.ndarray:
        """Measured positions per query: min(k, number returned)."""
        return np.diff(self.pos_offsets)

    @property
    def n_labels(self) -> np.ndarray:
        return np.diff(self.label_offsets)

    def with_corpus_size(
        self, size: float | Sequence[float | None] | np.ndarray | None
    ) -> ObservationBatch:
        """This batch with every query's corpus size (one number for every query, or one
        per query; None or ``np.inf``: unknown)."""
        if size is None:
            return replace(self, corpus_size=None)
        if isinstance(size, int | float | np.integer | np.floating):
            sizes = np.full(len(self), float(size))
        else:
            sizes = np.array([np.inf if s is None else s for s in size], dtype=np.float64)
            if sizes.shape != (len(self),):
                raise ValueError(f"with_corpus_size: {sizes.size} sizes for {len(self)} queries")
        if (sizes < 0).any() or np.isnan(sizes).any():
            raise ValueError("with_corpus_size: a corpus size is a number of units (>= 0)")
        return replace(self, corpus_size=sizes)

    @property
    def missing_reference(self) -> np.ndarray:
        """No labels and the population is not declared complete (section 3)."""
        return (self.n_labels == 0) & ~self.population_complete

    @property
    def pos_query(self) -> np.ndarray:
        """Query index of every flat position."""
        return np.repeat(np.arange(len(self), dtype=np.int64), self.n_positions)

    @property
    def pos_rank(self) -> np.ndarray:
        """1-based rank of every flat position within its query."""
        n_pos = self.n_positions
        total = int(self.pos_offsets[-1])
        return np.arange(1, total + 1, dtype=np.int64) - np.repeat(self.pos_offsets[:-1], n_pos)

    @classmethod
    def from_observations(
        cls,
        observations: Sequence[Observation],
        protocol: EvalProtocol | None = None,
        *,
        min_depth: int = 0,
    ) -> ObservationBatch:
        """Pack validated observations (input order is kept), positions 1..max(k, min_depth)."""
        packer = _Packer(min_depth)
        add = packer.add
        for o in observations:
            labels = o.labels
            gains = {lab.id: lab.gain for lab in labels}
            if None in gains.values():  # a conflict (section 9): its code instead
                gains = {
                    lab.id: lab.gain if lab.conflict is None else conflict_code(lab.conflict)
                    for lab in labels
                }
            add(
                o.query_id,
                o.k,
                o.returned_ids,
                gains,
                len(gains) != len(labels),
                o.population_complete,
                o.scan_complete,
                o.permitted_ids,
                o.unit_of,
            )
        batch = packer.finish(protocol or default_protocol())
        sizes = [o.corpus_size for o in observations]
        return batch if all(s is None for s in sizes) else batch.with_corpus_size(sizes)

    @classmethod
    def from_codes(
        cls,
        query_ids: list[str],
        k: int,
        pos_offsets: np.ndarray,
        pos_gain: np.ndarray,
        top_units: list[Sequence[str]],
        label_offsets: np.ndarray,
        label_gain: np.ndarray,
        population_complete: np.ndarray,
        *,
        protocol: EvalProtocol | None = None,
        min_depth: int = 0,
        duplicate_reference: np.ndarray | None = None,
        may_repeat: bool = True,
        pos_unit: np.ndarray | None = None,
    ) -> ObservationBatch:
        """A batch from arrays already joined (trusted: validated at the edge).

        Query ``i`` holds the packed positions ``pos_offsets[i]:pos_offsets[i + 1]``
        (its ranking's positions 1..min(max(k, min_depth), length)), whose label
        codes are ``pos_gain`` (gain 0..MAX_GAIN or :data:`UNLABELED`) and whose
        unit IDs are ``top_units[i]``; its reference labels are
        ``label_gain[label_offsets[i]:label_offsets[i + 1]]``, one per distinct
        unit (no conflicts); ``duplicate_reference`` (bool per query, default none) flags
        the queries whose reference labels a unit twice. Every scan is complete and nothing
        is restricted by permissions. Returned duplicates are found here, by the rule every
        constructor uses: in bulk from ``pos_unit`` (a code per packed position, equal codes
        for equal unit IDs) when given, else per query from ``top_units``;
        ``may_repeat=False`` says no ranking repeats a unit (a dict's keys), so none is
        looked for.
        """
        n = len(query_ids)
        if not (
            len(top_units) == len(population_complete) == n
            and len(pos_offsets) == len(label_offsets) == n + 1
        ):
            raise ValueError(
                f"from_codes: {n} query IDs but {len(top_units)} top_units, "
                f"{len(population_complete)} population flags, {len(pos_offsets)} position "
                f"offsets and {len(label_offsets)} label offsets; give one per query (offsets n + 1)"
            )
        total = int(pos_offsets[-1])
        pos_dup = np.zeros(total, dtype=bool)
        dup_first = np.zeros(total, dtype=np.int64)
        if may_repeat and pos_unit is not None:
            n_pos = np.diff(pos_offsets)
            pos_query = np.repeat(np.arange(n, dtype=np.int64), n_pos)
            rank0 = np.arange(total, dtype=np.int64) - np.repeat(pos_offsets[:-1], n_pos)
            pos_dup, dup_first = _coded_duplicates(pos_query, pos_unit, rank0)
            may_repeat = False
        for i, top in enumerate(top_units if may_repeat else ()):
            if len(set(top)) != len(top):
                base = int(pos_offsets[i]) - 1
                for position, first in duplicate_positions(top):
                    pos_dup[base + position] = True
                    dup_first[base + position] = first
        return ObservationBatch(
            query_ids=query_ids,
            k=np.full(n, k, dtype=np.int64),
            pos_offsets=np.asarray(pos_offsets, dtype=np.int64),
            pos_gain=np.asarray(pos_gain, dtype=np.int8),
            pos_dup=pos_dup,
            dup_first=dup_first,
            label_offsets=np.asarray(label_offsets, dtype=np.int64),
            label_gain=np.asarray(label_gain, dtype=np.int8),
            population_complete=np.asarray(population_complete, dtype=bool),
            scan_complete=np.ones(n, dtype=bool),
            permission_violation=np.zeros(n, dtype=bool),
            duplicate_reference=(
                np.zeros(n, dtype=bool)
                if duplicate_reference is None
                else np.asarray(duplicate_reference, dtype=bool)
            ),
            top_units=top_units,
            protocol=protocol or default_protocol(),
            depth=min_depth,
        )

    @classmethod
    def from_unit_codes(
        cls,
        query_ids: list[str],
        k: int,
        rank_offsets: np.ndarray,
        rank_units: np.ndarray,
        label_offsets: np.ndarray,
        label_units: np.ndarray,
        label_gain: np.ndarray,
        label_ids: Sequence[str],
        population_complete: np.ndarray,
        names: Callable[[np.ndarray], Sequence[str]],
        *,
        scan_complete: bool = True,
        permitted_units: np.ndarray | None = None,
        protocol: EvalProtocol | None = None,
        min_depth: int = 0,
    ) -> ObservationBatch:
        """Pack rankings and labels held as unit codes (integers, one per distinct unit id;
        trusted): the batch :meth:`from_gain_maps` packs from the same evidence, every
        array alike, with numpy only.

        Query ``i`` ranked ``rank_units[rank_offsets[i]:rank_offsets[i + 1]]`` (best
        first, may be longer than the packed depth); its labels are
        ``label_offsets[i]:label_offsets[i + 1]`` of ``label_units`` (a code, or -1 for a
        unit with none: no position can match it), ``label_gain`` (a gain or a conflict
        code) and ``label_ids`` (their unit ids, named only for the labels in conflict);
        one unit at most once per query. ``permitted_units``: the codes of the permitted
        ids (None: no restriction). ``names`` turns codes into unit ids: ``top_units``
        names a query's positions only when read (:class:`CodedUnits`).
        """
        n = len(query_ids)
        if not (
            len(rank_offsets) == len(label_offsets) == n + 1 == len(population_complete) + 1
            and len(label_units) == len(label_gain) == len(label_ids)
        ):
            raise ValueError(
                f"from_unit_codes: {n} query IDs, {len(rank_offsets)} ranking offsets, "
                f"{len(label_offsets)} label offsets and {len(population_complete)} population "
                f"flags; {len(label_units)} label codes, {len(label_gain)} gains and "
                f"{len(label_ids)} ids; give one per query (offsets n + 1) and per label"
            )
        rank_offsets = np.asarray(rank_offsets, dtype=np.int64)
        n_pos = np.minimum(np.diff(rank_offsets), max(k, min_depth))
        pos_offsets = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(n_pos, out=pos_offsets[1:])
        total = int(pos_offsets[-1])
        starts = np.repeat(pos_offsets[:-1], n_pos)
        rank0 = np.arange(total, dtype=np.int64) - starts
        pos_unit = np.asarray(rank_units)[np.repeat(rank_offsets[:-1], n_pos) + rank0].astype(
            np.int64
        )
        pos_query = np.repeat(np.arange(n, dtype=np.int64), n_pos)
        label_offsets = np.asarray(label_offsets, dtype=np.int64)
        label_gain = np.asarray(label_gain, dtype=np.int8)
        label_units = np.asarray(label_units, dtype=np.int64)
        width = int(max(pos_unit.max(initial=-1), label_units.max(initial=-1))) + 1
        label_query = np.repeat(np.arange(n, dtype=np.int64), np.diff(label_offsets))
        pos_gain = _coded_gains(pos_query, pos_unit, label_query, label_units, label_gain, width)
        pos_dup, dup_first = _coded_duplicates(pos_query, pos_unit, rank0)
        permission_violation = np.zeros(n, dtype=bool)
        if permitted_units is not None:
            outside = ~np.isin(pos_unit, np.asarray(permitted_units, dtype=np.int64))
            permission_violation = np.bincount(pos_query[outside], minlength=n) > 0
        conflicts = np.flatnonzero(label_gain >= CONFLICT_BASE)
        return ObservationBatch(
            query_ids=query_ids,
            k=np.full(n, k, dtype=np.int64),
            pos_offsets=pos_offsets,
            pos_gain=pos_gain,
            pos_dup=pos_dup,
            dup_first=dup_first,
            label_offsets=label_offsets,
            label_gain=label_gain,
            population_complete=np.asarray(population_complete, dtype=bool),
            scan_complete=np.full(n, bool(scan_complete)),
            permission_violation=permission_violation,
            duplicate_reference=np.zeros(n, dtype=bool),
            top_units=CodedUnits(pos_offsets, pos_unit, names),
            protocol=protocol or default_protocol(),
            conflict_labels=[
                (int(label_query[j]), label_ids[j], int(label_gain[j])) for j in conflicts.tolist()
            ],
            depth=min_depth,
            pos_unit=pos_unit,
        )

    @classmethod
    def from_gain_maps(
        cls,
        query_ids: Sequence[str],
        k: int,
        returned_ids: Sequence[Sequence[str]],
        gains: Sequence[Mapping[str, int | tuple[int, ...]]],
        population_complete: Sequence[bool],
        *,
        scan_complete: bool = True,
        permitted_ids: Sequence[str] | None = None,
        protocol: EvalProtocol | None = None,
        min_depth: int = 0,
    ) -> ObservationBatch:
        """Pack per-query ``unit -> gain`` maps (a tuple of two or more gains: a unit in
        conflict, contract section 9) with one ``k``, scan flag and permitted set for
        every query: the same batch as :meth:`from_observations` of the equivalent
        observations (labels in map order)."""
        packer = _Packer(min_depth)
        add = packer.add
        permitted = None if permitted_ids is None else frozenset(permitted_ids)
        for qid, ret, units, pop in zip(
            query_ids, returned_ids, gains, population_complete, strict=True
        ):
            if tuple in set(map(type, units.values())):
                units = {
                    u: g if type(g) is int else conflict_code(g)  # type: ignore[arg-type]
                    for u, g in units.items()
                }
            add(qid, k, ret, units, False, pop, scan_complete, permitted, None)  # type: ignore[arg-type]
        return packer.finish(protocol or default_protocol())


class _Packer:
    """Accumulates per-query inputs into flat Python buffers; one pass per query.

    Per query the only per-position work is one dictionary lookup (label gain)
    and one set build (duplicate check); numpy arrays are made once in
    :meth:`finish`.
    """

    def __init__(self, min_depth: int = 0) -> None:
        self.min_depth = min_depth
        self.conflict_labels: list[tuple[int, str, int]] = []
        self.query_ids: list[str] = []
        self.k: list[int] = []
        self.n_pos: list[int] = []
        self.n_lab: list[int] = []
        self.pop: list[bool] = []
        self.scan: list[bool] = []
        self.perm_violation: list[int] = []  # query indices
        self.dup_ref: list[int] = []  # query indices
        self.pos_gain: list[int] = []
        self.label_gain: list[int] = []
        self.dup_at: list[int] = []  # flat position index of each returned duplicate
        self.dup_first: list[int] = []  # 1-based first position of that unit
        self.top_units: list[Sequence[str]] = []

    def add(
        self,
        query_id: str,
        k: int,
        returned: Sequence[str],
        gains: Mapping[str, int],
        duplicate_reference: bool,
        population_complete: bool,
        scan_complete: bool,
        permitted: Sequence[str] | None,
        unit_of: Mapping[str, str] | None,
    ) -> None:
        """Add one query; ``gains`` maps each labeled unit to its gain."""
        i = len(self.query_ids)
        self.query_ids.append(query_id)
        self.k.append(k)
        self.pop.append(population_complete)
        self.scan.append(scan_complete)
        raw_top = returned[: max(k, self.min_depth)]
        top = [unit_of.get(x, x) for x in raw_top] if unit_of else raw_top
        if permitted is not None and permission_violated(raw_top, top, permitted):
            self.perm_violation.append(i)
        if duplicate_reference:
            self.dup_ref.append(i)
        pos_gain = self.pos_gain
        base = len(pos_gain)
        pos_gain.extend(map(gains.get, top, repeat(UNLABELED)))
        if len(set(top)) != len(top):
            for position, first in duplicate_positions(top):
                self.dup_at.append(base + position - 1)
                self.dup_first.append(first)
        self.label_gain.extend(gains.values())
        if gains and max(gains.values()) >= CONFLICT_BASE:
            self.conflict_labels.extend(
                (i, unit, code) for unit, code in gains.items() if code >= CONFLICT_BASE
            )
        self.n_pos.append(len(top))
        self.n_lab.append(len(gains))
        self.top_units.append(top)

    def finish(self, protocol: EvalProtocol) -> ObservationBatch:
        n = len(self.query_ids)
        pos_offsets = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(self.n_pos, out=pos_offsets[1:])
        label_offsets = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(self.n_lab, out=label_offsets[1:])
        total = int(pos_offsets[-1])
        pos_dup = np.zeros(total, dtype=bool)
        dup_first = np.zeros(total, dtype=np.int64)
        if self.dup_at:
            at = np.asarray(self.dup_at, dtype=np.int64)
            pos_dup[at] = True
            dup_first[at] = self.dup_first
        permission_violation = np.zeros(n, dtype=bool)
        permission_violation[self.perm_violation] = True
        duplicate_reference = np.zeros(n, dtype=bool)
        duplicate_reference[self.dup_ref] = True
        return ObservationBatch(
            query_ids=self.query_ids,
            k=np.asarray(self.k, dtype=np.int64),
            pos_offsets=pos_offsets,
            pos_gain=np.fromiter(self.pos_gain, dtype=np.int8, count=len(self.pos_gain)),
            pos_dup=pos_dup,
            dup_first=dup_first,
            label_offsets=label_offsets,
            label_gain=np.fromiter(self.label_gain, dtype=np.int8, count=len(self.label_gain)),
            population_complete=np.asarray(self.pop, dtype=bool),
            scan_complete=np.asarray(self.scan, dtype=bool),
            permission_violation=permission_violation,
            duplicate_reference=duplicate_reference,
            top_units=self.top_units,
            protocol=protocol,
            conflict_labels=self.conflict_labels,
            depth=self.min_depth,
        )


class PerQuery(Sequence[Sequence[str]]):
    """A read-only sequence with one item per packed query, delimited by ``offsets``: the
    indexing every per-query view of packed positions shares. A subclass makes one query's
    item from its positions ``lo:hi`` (:meth:`_query`)."""

    def __init__(self, offsets: np.ndarray) -> None:
        self._bounds = offsets.tolist()

    def __len__(self) -> int:
        return len(self._bounds) - 1

    def __getitem__(self, i):  # type: ignore[override]
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(i)
        return self._query(i, self._bounds[i], self._bounds[i + 1])

    def _query(self, i: int, lo: int, hi: int) -> Sequence[str]:
        raise NotImplementedError


class CodedUnits(PerQuery):
    """Per query, the unit IDs of its packed positions, named from their codes only when
    read (``names``: codes -> unit ids). The first reads name one query each; once many
    queries were read (:data:`BULK_AFTER` and a sixteenth of them), or when iterated,
    every position is named at once. A query's units may be replaced (a re-evaluated
    query)."""

    #: per-query reads (at least) before every position is named at once
    BULK_AFTER = 64

    def __init__(
        self, offsets: np.ndarray, codes: np.ndarray, names: Callable[[np.ndarray], Sequence[str]]
    ) -> None:
        super().__init__(offsets)
        self._codes = codes
        #: codes -> unit ids (one study read's: the same callable names the same codes alike)
        self.names = names
        self._replaced: dict[int, Sequence[str]] = {}
        self._named: np.ndarray | None = None
        self._reads = 0

    def _query(self, i: int, lo: int, hi: int) -> Sequence[str]:
        if i in self._replaced:
            return self._replaced[i]
        if self._named is None:
            self._reads += 1
            if self._reads <= max(self.BULK_AFTER, len(self) // 16):
                return list(self.names(self._codes[lo:hi]))
            self._name_all()
        return self._named[lo:hi].tolist()  # type: ignore[index]

    def __iter__(self):
        if self._named is None and len(self._codes):
            self._name_all()
        for i in range(len(self)):
            yield self[i]

    def __setitem__(self, i: int, units: Sequence[str]) -> None:
        self._replaced[i] = units

    def _name_all(self) -> None:
        distinct = np.unique(self._codes)
        named = np.empty(distinct.size, dtype=object)
        named[:] = list(self.names(distinct))
        self._named = named[np.searchsorted(distinct, self._codes)]


def _coded_gains(
    pos_query: np.ndarray,
    pos_unit: np.ndarray,
    label_query: np.ndarray,
    label_units: np.ndarray,
    label_gain: np.ndarray,
    width: int,
) -> np.ndarray:
    """Each packed position's gain: its query's label of the same unit code, if any
    (UNLABELED otherwise; a query labels a unit at most once).

    Each code is claimed by one label (a table indexed by code): a position whose code is
    claimed by a label of its own query has found its label, one whose code no label claimed
    has none. Only the positions whose code another query's label claimed (a unit labeled
    for several queries) are looked up by a sorted (query, code) key -- every position, when
    the codes are too sparse for a table (:func:`evalcore.compute.unit_pairs.code_table_fits`)."""
    pos_gain = np.full(pos_unit.size, UNLABELED, dtype=np.int8)
    coded = np.flatnonzero(label_units >= 0)
    if not coded.size or not pos_unit.size:
        return pos_gain
    if code_table_fits(width, pos_unit.size + coded.size):
        slot = np.full(width, -1, dtype=np.int64)
        slot[label_units[coded]] = coded
        label = slot[pos_unit]
        claimed = np.flatnonzero(label >= 0)
        label = label[claimed]
        own = label_query[label] == pos_query[claimed]
        pos_gain[claimed[own]] = label_gain[label[own]]
        pending = claimed[~own]
    else:  # codes too sparse for a table: every position looked up by key
        pending = np.arange(pos_unit.size, dtype=np.int64)
    if pending.size:
        label_key = label_query[coded] * width + label_units[coded]
        order = np.argsort(label_key, kind="stable")
        label_key = label_key[order]
        pos_key = pos_query[pending] * width + pos_unit[pending]
        at = np.minimum(np.searchsorted(label_key, pos_key), label_key.size - 1)
        hit = label_key[at] == pos_key
        pos_gain[pending[hit]] = label_gain[coded[order[at[hit]]]]
    return pos_gain


def _coded_duplicates(
    pos_query: np.ndarray, pos_unit: np.ndarray, rank0: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Returned duplicates (a code seen at an earlier position of the same query) and, for
    each, the 1-based rank of its first position (:func:`evalcore.compute.unit_pairs.repeated_pairs`)."""
    pos_dup = np.zeros(pos_unit.size, dtype=bool)
    dup_first = np.zeros(pos_unit.size, dtype=np.int64)
    dups, firsts = repeated_pairs(pos_query, pos_unit)
    pos_dup[dups] = True
    dup_first[dups] = rank0[firsts] + 1
    return pos_dup, dup_first
