"""The working reference of a whole study read as columns of unit codes (one SQL pass).

:func:`label_columns` reads one row per query (its label events concatenated). A query
whose every unit has exactly one event, a label with a unit code, needs no rule: it is kept
as numpy columns of codes and gains (its gain map made only when read,
:attr:`WorkingLabels.gains`); the others are resolved by the rules
(:func:`evalcore.store.resolution.working_labels`). :func:`gathered_labels` gathers a query
set's labels from the columns without making gain maps."""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from evalcore.compute.batch import conflict_code
from evalcore.compute.unit_pairs import pair_groups
from evalcore.store.study_handle import Study
from evalcore.store.unit_codes import unit_codes_of

#: The separator the whole-study read puts between unit ids (a unit id holding it splits
#: into more parts than the query has gains, so its query is resolved by the rules).
UNIT_SEPARATOR = "\x1f"
#: ASCII digits '0'..'9' -> their values (``bytes.translate`` table).
_DIGIT_VALUES = bytes(range(256)).replace(b"0123456789", bytes(range(10)))


@dataclass(eq=False)
class WorkingLabels:
    """A study's working reference as read by :func:`label_columns`."""

    #: the queries read as columns ("plain"), in query id order
    plain: list[str]
    #: plain query i's labels are ``units[offsets[i]:offsets[i + 1]]`` (unit codes), with
    #: ``gain`` alike, in unit id order
    offsets: np.ndarray
    units: np.ndarray
    gain: np.ndarray
    #: plain query i's unit ids joined by :data:`UNIT_SEPARATOR`, in the same order
    unit_text: list[str]
    #: every other query with a unit that counts: its gain map, resolved by the rules
    #: (:func:`evalcore.store.resolution.working_labels` fills it)
    others: dict[str, dict[str, Any]] = field(default_factory=dict)
    _row: dict[str, int] = field(default_factory=dict)
    _gains: GainMaps | None = None

    def __post_init__(self) -> None:
        self._row = {q: i for i, q in enumerate(self.plain)}

    @property
    def gains(self) -> GainMaps:
        """query_id -> unit_id -> gain (or a conflict's sorted gains), queries in query id
        order, units in unit id order: each plain query's map made when first read."""
        if self._gains is None:
            self._gains = GainMaps(self)
        return self._gains

    def unit_ids(self, i: int) -> list[str]:
        """Plain query i's unit ids, in its columns' order."""
        return self.unit_text[i].split(UNIT_SEPARATOR)

    def gain_map(self, i: int) -> dict[str, int]:
        """Plain query i's gain map (unit id order)."""
        return dict(zip(self.unit_ids(i), self.gain[self.offsets[i]:self.offsets[i + 1]].tolist(),
                        strict=True))


class GainMaps(Mapping[str, dict[str, Any]]):
    """A :class:`WorkingLabels`' gain maps, each made when first read (then kept)."""

    def __init__(self, labels: WorkingLabels) -> None:
        self._labels = labels
        self._keys = sorted([*labels.plain, *labels.others])
        self._made: dict[str, dict[str, Any]] = {}

    def __getitem__(self, query_id: str) -> dict[str, Any]:
        found = self._made.get(query_id)
        if found is None:
            labels = self._labels
            row = labels._row.get(query_id)
            found = labels.others[query_id] if row is None else labels.gain_map(row)
            self._made[query_id] = found
        return found

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)

    def __contains__(self, query_id: object) -> bool:
        return query_id in self._labels._row or query_id in self._labels.others


def label_columns(study: Study) -> tuple[WorkingLabels, list[str]]:
    """The whole study's plain queries as :class:`WorkingLabels` (no other query yet), and
    the other labeled queries (to resolve by the rules), in query id order."""
    plain: list[tuple[str, str, str, str, int]] = []
    replay: list[str] = []
    for query_id, unit_text, gain_text, n_special, code_text, n_codes, n_events in study.db.execute(
        "SELECT query_id, group_concat(unit_id, char(31)), "
        "group_concat(CASE WHEN kind = 'label' THEN gain END, ''), "
        "count(*) FILTER (WHERE kind != 'label' OR gain IS NULL), "
        "group_concat(unit_code), count(unit_code), count(*) "
        # the index of unit ids: each query's events in unit id order (checked below)
        "FROM label_events INDEXED BY label_events_by_query WHERE study_id = ? "
        "GROUP BY query_id",
        [study.study_id],
    ):
        if n_special or n_codes != n_events or len(gain_text) != n_events:
            replay.append(query_id)  # rules to apply, or units without a code (read by id)
            continue
        ids = unit_text.split(UNIT_SEPARATOR)
        if len(ids) == n_events and ids == sorted(ids):
            plain.append((query_id, unit_text, gain_text, code_text, n_events))
        else:  # a unit id holding the separator, or read out of unit id order
            replay.append(query_id)
    counts = np.fromiter((row[4] for row in plain), dtype=np.int64, count=len(plain))
    units = (np.fromstring(",".join(row[3] for row in plain), dtype=np.int64, sep=",")
             if plain else np.zeros(0, dtype=np.int64))
    gain = np.frombuffer("".join(row[2] for row in plain).encode("ascii").translate(
        _DIGIT_VALUES), dtype=np.int8).copy()
    if units.size != gain.size or units.size != int(counts.sum()):
        raise AssertionError(f"internal: {units.size} label codes and {gain.size} gains "
                             f"for {int(counts.sum())} labels")
    # A unit with several events (all labels): its query is resolved by the rules.
    query = np.repeat(np.arange(len(plain), dtype=np.int64), counts)
    twice = query[pair_groups(query, units) != np.arange(units.size)]
    if twice.size:
        keep = np.ones(len(plain), dtype=bool)
        keep[twice] = False
        replay += [plain[i][0] for i in np.flatnonzero(~keep).tolist()]
        kept = np.repeat(keep, counts)
        plain = [row for row, on in zip(plain, keep.tolist(), strict=True) if on]
        counts, units, gain = counts[keep], units[kept], gain[kept]
    offsets = np.zeros(len(plain) + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    return WorkingLabels(plain=[row[0] for row in plain], offsets=offsets, units=units,
                         gain=gain, unit_text=[row[1] for row in plain]), sorted(replay)


@dataclass(frozen=True, eq=False)
class CodedLabels:
    """A reference's labels over a query set, flat: query i's labels are
    ``offsets[i]:offsets[i + 1]``, in the gain maps' order (unit id order)."""

    offsets: np.ndarray  # int64[n + 1]
    #: each label's unit code (-1: its unit has none, no run of the study returned it)
    units: np.ndarray  # int64[L]
    #: each label's gain, or its conflict code (a unit in conflict)
    gain: np.ndarray  # int8[L]
    ids: Sequence[str]

    def without(self, query_ids: Sequence[str],
                units: Mapping[str, Collection[str]]) -> CodedLabels:
        """These labels (over ``query_ids``) without those of ``units`` (query id -> the unit
        ids whose labels are left out)."""
        keep = np.ones(self.gain.size, dtype=bool)
        bounds = self.offsets.tolist()
        for i, query_id in enumerate(query_ids):
            left_out = units.get(query_id)
            if left_out:
                for j in range(bounds[i], bounds[i + 1]):
                    keep[j] = self.ids[j] not in left_out
        kept = np.flatnonzero(keep)
        offsets = np.concatenate(([0], np.cumsum(keep)))[self.offsets].astype(np.int64)
        return CodedLabels(offsets=offsets, units=self.units[kept], gain=self.gain[kept],
                           ids=[self.ids[j] for j in kept.tolist()])


def gathered_labels(
    study: Study, labels: WorkingLabels, query_ids: Sequence[str]
) -> CodedLabels:
    """The labels of ``query_ids`` (in that order): a plain query's straight from the
    columns, another's from its gain map, its units' codes looked up."""
    empty: dict[str, Any] = {}
    other_maps = [labels.others.get(q, empty) for q in query_ids
                  if q not in labels._row]
    missing = [u for units in other_maps for u in units]
    found = unit_codes_of(study, missing) if missing else {}
    # The others' labels go after the columns' in one source the gather reads from.
    other_units = np.fromiter((found.get(u, -1) for u in missing), dtype=np.int64,
                              count=len(missing))
    values = [g for units in other_maps for g in units.values()]
    other_gain = np.fromiter((g if type(g) is int else conflict_code(g) for g in values),
                             dtype=np.int8, count=len(values))
    base = labels.units.size
    starts = np.empty(len(query_ids), dtype=np.int64)
    counts = np.empty(len(query_ids), dtype=np.int64)
    at = base
    for j, q in enumerate(query_ids):
        row = labels._row.get(q)
        if row is None:
            n = len(labels.others.get(q, empty))
            starts[j], counts[j] = at, n
            at += n
        else:
            starts[j] = labels.offsets[row]
            counts[j] = labels.offsets[row + 1] - labels.offsets[row]
    offsets = np.zeros(len(query_ids) + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    source = np.repeat(starts - offsets[:-1], counts) + np.arange(int(offsets[-1]),
                                                                   dtype=np.int64)
    return CodedLabels(
        offsets=offsets,
        units=np.concatenate([labels.units, other_units])[source],
        gain=np.concatenate([labels.gain, other_gain])[source],
        ids=_GatheredIds(labels, source, missing),
    )


class _GatheredIds(Sequence[str]):
    """The gathered labels' unit ids, each named when read (only a conflict's is, as a rule)."""

    def __init__(self, labels: WorkingLabels, source: np.ndarray, others: list[str]) -> None:
        self._labels, self._source, self._others = labels, source, others
        self._named: dict[int, list[str]] = {}

    def __len__(self) -> int:
        return int(self._source.size)

    def __getitem__(self, i):  # type: ignore[override]
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        at = int(self._source[i])
        labels = self._labels
        if at >= labels.units.size:
            return self._others[at - labels.units.size]
        row = int(np.searchsorted(labels.offsets, at, side="right")) - 1
        ids = self._named.get(row)
        if ids is None:
            ids = self._named[row] = labels.unit_ids(row)
        return ids[at - int(labels.offsets[row])]
