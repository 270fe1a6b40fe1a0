"""From the store to the contract's observations: a run + a reference -> Observations.

One observation per query of the **query set**: the run's queries plus every query of the
study (working reference) or of the frozen version; a query the run did not answer has an
empty ranking. Queries are sorted by id. Each carries the run's ``k``, ``scan_complete``
and ``corpus_fingerprint``, the study's ``corpus_id``, ``retrieval_unit`` and
``corpus_size`` (:mod:`evalcore.store.population`: it bounds the unlabeled units on open
populations, contract section 12), the reference's ``labels`` (a unit in conflict is a
``conflict`` label, contract section 9) and ``population_complete``, and the pinned
document ids as ``permitted_ids`` when the run names a pinned protocol.

The store holds validated data, so observations are built with ``model_construct``.
:func:`runs_as_columns` reads the same evidence for several runs at once, as unit codes
(:class:`RunColumns`); :func:`query_facts` what a query set is resolved from."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from itertools import repeat

import numpy as np
import sqlite_utils

from evalcore.compute.batch import CodedUnits, ObservationBatch
from evalcore.contract.evaluation_protocol import EvalProtocol
from evalcore.contract.observation import Label, Observation
from evalcore.contract.query_order import natural_key
from evalcore.io.ties import tied_score_pairs as count_tied_pairs
from evalcore.store.completeness import completeness_states, is_complete
from evalcore.store.marks import StoreMarks, store_marks
from evalcore.store.population import StudyPopulation, study_population
from evalcore.store.references import reference_completeness, reference_labels
from evalcore.store.removed_queries import removed_query_ids, study_query_ids
from evalcore.store.resolution import (
    ResolvedLabel,
    gains_with_conflicts,
    query_filters,
    resolved_gains,
    working_labels,
)
from evalcore.store.runs import RunInfo, get_run, permitted_ids_for_run
from evalcore.store.studies import get_study
from evalcore.store.study_handle import Study
from evalcore.store.unit_codes import (
    RankingCodes,
    UnitNamer,
    permitted_unit_codes,
    run_ranking_codes,
)
from evalcore.store.working_labels import CodedLabels, WorkingLabels, gathered_labels


def _run_rankings(
    db: sqlite_utils.Database, run_id: int, query_ids: list[str] | None = None
) -> dict[str, tuple[list[str], list[float | None]]]:
    """query_id -> (unit ids, scores) best first, from the packed ``run_rankings`` (of the
    given queries only, by primary key, when ``query_ids`` is given)."""
    out: dict[str, tuple[list[str], list[float | None]]] = {}
    loads = json.loads
    for condition, params in query_filters(query_ids):
        for query_id, units, scores in db.conn.execute(
            "SELECT query_id, unit_ids, scores FROM run_rankings WHERE run_id = ?" + condition,
            [run_id, *params],
        ):
            out[query_id] = (loads(units), loads(scores))
    return out


def _label(unit_id: str, gain: int | tuple[int, ...]) -> Label:
    # Gains come from the store, which holds validated data (see the module docstring).
    if isinstance(gain, tuple):  # in conflict: one of these gains
        return Label.model_construct(id=unit_id, conflict=tuple(sorted(set(gain))))
    return Label.model_construct(id=unit_id, gain=gain)


def observations_for_run(
    study: Study,
    run_name: str,
    reference: str | None = None,
    query_ids: Iterable[str] | None = None,
) -> list[Observation]:
    """The contract's observations of one stored run (see the module docstring)."""
    return observations_for_runs(study, [get_run(study, run_name)], reference, query_ids)[run_name]


def observations_for_runs(
    study: Study,
    runs: Sequence[RunInfo],
    reference: str | None = None,
    query_ids: Iterable[str] | None = None,
    *,
    ref: ReferenceColumns | None = None,
    permitted: Mapping[str, Sequence[str] | None] | None = None,
) -> dict[str, list[Observation]]:
    """run name -> :func:`observations_for_run` of each of ``runs``, the reference, population
    and removed queries read once. ``ref`` (:func:`reference_columns` of ``reference`` and
    ``query_ids``) and ``permitted`` (run name -> :func:`permitted_ids_for_run`): already read
    by the caller."""
    scope = None if query_ids is None else list(dict.fromkeys(query_ids))
    ref = reference_columns(study, reference, scope) if ref is None else ref
    labels = {
        query_id: [_label(u, g) for u, g in units.items()] for query_id, units in ref.gains.items()
    }
    # a given query set is read as it is: only the natural one leaves removed queries out
    removed = frozenset() if scope is not None else removed_query_ids(study)
    settings = study.settings
    no_ranking: tuple[list[str], list[float | None]] = ([], [])
    no_labels: list[Label] = []
    out: dict[str, list[Observation]] = {}
    for run in runs:
        rankings = _run_rankings(study.db, run.run_id, scope)
        wanted = scope if scope is not None else _query_set(rankings, ref, removed)
        pinned = (permitted[run.name] if permitted is not None and run.name in permitted
                  else permitted_ids_for_run(study.db, run))
        observations = out[run.name] = []
        for query_id in wanted:
            units, scores = rankings.get(query_id, no_ranking)
            observations.append(
                Observation(
                    query_id=query_id,
                    corpus_id=settings.corpus_id,
                    corpus_fingerprint=run.corpus_fingerprint,
                    retrieval_unit=settings.retrieval_unit,
                    k=run.k,
                    returned_ids=units if units else [],
                    scores=None if None in scores else (scores if scores else []),
                    labels=labels.get(query_id, no_labels),
                    population_complete=ref.complete.get(query_id, False),
                    scan_complete=run.scan_complete,
                    permitted_ids=None if pinned is None else list(pinned),
                    reference_version=reference,
                    corpus_size=ref.corpus_size,
                )
            )
    return out


@dataclass(frozen=True)
class ReferenceColumns:
    """A reference as plain columns: what observations' labels and completeness are made of."""

    #: query_id -> unit_id -> gain, or the sorted gains of a unit in conflict (unit_id order)
    gains: Mapping[str, dict[str, int | tuple[int, ...]]]
    #: query_id -> population-complete claim
    complete: dict[str, bool]
    #: the whole study's working reference as columns of unit codes (None: another read)
    labels: WorkingLabels | None = None
    #: the study's population when read (None: not read, no corpus size)
    population: StudyPopulation | None = None

    @property
    def corpus_size(self) -> int | None:
        """The corpus size every batch of this reference carries (None: unknown)."""
        return None if self.population is None else self.population.corpus_size


@dataclass(frozen=True, eq=False)
class CodedRanking:
    """A run's rankings over a query set as unit codes (:mod:`evalcore.store.unit_codes`):
    query i ranked ``codes[offsets[i]:offsets[i + 1]]``, best first (none: not answered)."""

    offsets: np.ndarray  # int64[n + 1]
    codes: np.ndarray  # int32[total]
    #: codes -> unit ids (read when a page names units)
    names: UnitNamer
    #: the codes of the pinned protocol's documents (None: no pinned protocol)
    permitted_units: np.ndarray | None

    def returned_ids(self) -> CodedUnits:
        """Each query's returned unit ids, named only when read."""
        return CodedUnits(self.offsets, self.codes, self.names)


def coded_labels(study: Study, reference: ReferenceColumns, query_ids: list[str]) -> CodedLabels:
    """The reference's labels over ``query_ids`` as :class:`CodedLabels` (from the working
    reference's columns; else from its gain maps, the units' codes looked up)."""
    columns = reference.labels
    if columns is None:
        columns = WorkingLabels(plain=[], offsets=np.zeros(1, dtype=np.int64),
                                units=np.zeros(0, dtype=np.int64),
                                gain=np.zeros(0, dtype=np.int8), unit_text=[],
                                others=dict(reference.gains))
    return gathered_labels(study, columns, query_ids)


def _coded_ranking(
    study: Study, run: RunInfo, wanted: list[str], codes: RankingCodes, names: UnitNamer
) -> CodedRanking:
    """``codes`` (in the store's key order) put in the order of the query set ``wanted``."""
    row = dict(zip(codes.query_ids, range(len(codes.query_ids)), strict=True))
    at = np.fromiter(map(row.get, wanted, repeat(-1)), dtype=np.int64, count=len(wanted))
    answered = at >= 0
    row_of = np.where(answered, at, 0)
    lengths = np.append(np.diff(codes.offsets), 0)  # a last entry for an empty read
    starts_at = np.append(codes.offsets[:-1], 0)
    taken = np.where(answered, lengths[row_of], 0)
    offsets = np.zeros(len(wanted) + 1, dtype=np.int64)
    np.cumsum(taken, out=offsets[1:])
    if at.size and (offsets[-1] != codes.codes.size or not np.array_equal(
            at[answered], np.arange(int(answered.sum())))):
        starts = np.repeat(starts_at[row_of] - offsets[:-1], taken)
        flat = codes.codes[np.arange(int(offsets[-1]), dtype=np.int64) + starts]
    else:  # already in this order
        flat = codes.codes
    protocol = run.pinned_protocol
    return CodedRanking(
        offsets=offsets,
        codes=flat,
        names=names,
        permitted_units=None if protocol is None else permitted_unit_codes(study, protocol),
    )


@dataclass(frozen=True, eq=False)
class RunColumns:
    """One stored run over a query set against one reference read, as columns: its rankings and
    the reference's labels as unit codes (:meth:`packed`), and the fields of its observations
    the metric computer reads, without building them."""

    run: RunInfo
    #: the query set (as :func:`observations_for_run` has it), in its order
    query_ids: list[str]
    coded: CodedRanking
    #: the reference's labels over the query set (:meth:`StudyEvidence.labels_over`)
    coded_labels: CodedLabels
    reference: ReferenceColumns

    @property
    def returned_ids(self) -> CodedUnits:
        """Each query's returned unit ids, named when read."""
        return self.coded.returned_ids()

    @cached_property
    def gains(self) -> list[dict[str, int | tuple[int, ...]]]:
        """Each query's unit -> gain, or the sorted gains of a unit in conflict (unit id
        order)."""
        empty: dict[str, int | tuple[int, ...]] = {}
        return [self.reference.gains.get(q, empty) for q in self.query_ids]

    @cached_property
    def population_complete(self) -> list[bool]:
        """Each query's population-complete claim in the reference."""
        return [self.reference.complete.get(q, False) for q in self.query_ids]

    def packed(self, protocol: EvalProtocol, min_depth: int = 0) -> ObservationBatch:
        """The run's batch, positions 1..max(k, ``min_depth``) of every query, with the study's
        corpus size: what :meth:`ObservationBatch.from_gain_maps` packs from the same evidence."""
        ranking, labels = self.coded, self.coded_labels
        batch = ObservationBatch.from_unit_codes(
            self.query_ids, self.run.k, ranking.offsets, ranking.codes, labels.offsets,
            labels.units, labels.gain, labels.ids,
            np.asarray(self.population_complete, dtype=bool), ranking.names,
            scan_complete=self.run.scan_complete, permitted_units=ranking.permitted_units,
            protocol=protocol, min_depth=min_depth,
        )
        size = self.reference.corpus_size
        return batch if size is None else batch.with_corpus_size(size)


def reference_columns(
    study: Study, reference: str | None = None, query_ids: list[str] | None = None,
    *, resolved: Mapping[str, Mapping[str, ResolvedLabel]] | None = None,
) -> ReferenceColumns:
    """The working reference (``reference`` None; of ``query_ids`` only when given) or a frozen
    version, with the study's population now. ``resolved``: the resolved labels of
    ``query_ids`` (:func:`resolve_study`) when the caller has read them."""
    population = study_population(study)
    if reference is None and query_ids is not None and resolved is not None:
        return ReferenceColumns(
            gains={q: gains_with_conflicts(resolved[q]) for q in query_ids if resolved.get(q)},
            complete={q: is_complete(study, q) for q in query_ids},
            population=population,
        )
    if reference is None:
        # Given queries only: resolve just their labels (the live views ask per query).
        if query_ids is None:
            labels = working_labels(study, conflicts=True)
            return ReferenceColumns(
                gains=labels.gains,  # units in unit id order
                complete=completeness_states(study),
                labels=labels,
                population=population,
            )
        return ReferenceColumns(
            gains=resolved_gains(study, query_ids, conflicts=True),
            complete={q: is_complete(study, q) for q in query_ids},
            population=population,
        )
    gains = reference_labels(study, reference)
    complete = reference_completeness(study, reference)
    return ReferenceColumns(
        gains={q: dict(sorted(units.items())) for q, units in gains.items()}, complete=complete,
        population=population,
    )


@dataclass(eq=False)
class StudyEvidence:
    """What a study's stored runs are packed from against one reference read: its columns, each
    run's rankings as codes (read when first asked, kept: a run's never change), the labels as
    codes over the last query set asked for, and one namer. ``marks``: the store's marks the
    reference was read at, when read whole with the store unmoved (what a cache may keep it
    under); else None. No store connection is held: each read takes the asking reader's handle."""

    study_id: str
    reference: ReferenceColumns
    names: UnitNamer
    marks: StoreMarks | None = None
    _codes: dict[int, RankingCodes] = field(default_factory=dict, init=False)
    _labels: tuple[list[str], CodedLabels] | None = field(default=None, init=False)

    def _same_study(self, study: Study) -> None:
        if study.study_id != self.study_id:
            raise ValueError(f"evidence of study {self.study_id!r} read through a handle on "
                             f"study {study.study_id!r}")

    def ranking_codes(self, study: Study, run_id: int,
                      query_ids: list[str] | None = None) -> RankingCodes:
        """The run's rankings of every query it answered, as codes (read once and kept; a
        run's never change), or of ``query_ids`` only while those are not kept."""
        self._same_study(study)
        found = self._codes.get(run_id)
        if found is None and query_ids is not None:
            return run_ranking_codes(study, run_id, query_ids)
        if found is None:
            found = self._codes[run_id] = run_ranking_codes(study, run_id)
        return found

    def removed(self, study: Study) -> frozenset[str]:
        """The study's removed queries: those of the marks the reference was read at, else
        read now."""
        return self.marks.removed if self.marks is not None else removed_query_ids(study)

    def labels_over(self, study: Study, query_ids: list[str]) -> CodedLabels:
        """The reference's labels over ``query_ids`` as codes (made once per query set: the
        runs of a study mostly share one)."""
        self._same_study(study)
        last = self._labels
        if last is None or last[0] != query_ids:
            last = self._labels = (query_ids, coded_labels(study, self.reference, query_ids))
        return last[1]


def study_evidence(study: Study, reference: str | None = None,
                   query_ids: list[str] | None = None, *,
                   marks: StoreMarks | None = None) -> StudyEvidence:
    """A :class:`StudyEvidence` on the working reference (``reference`` None; of ``query_ids``
    only when given) or a frozen version, read now. ``marks``: the store's marks the caller has
    just read."""
    if query_ids is not None:
        marks = None
    elif marks is None:
        marks = store_marks(study)
    ref = reference_columns(study, reference, query_ids)
    if marks is not None and not study.pinned_marks and store_marks(study) != marks:
        marks = None  # moved during the read: right for now, but not to be kept
    # (a handle's pinned marks were read before anything it reads: never newer than them)
    return StudyEvidence(study.study_id, ref, UnitNamer(study), marks)


def run_columns(
    study: Study,
    evidence: StudyEvidence,
    run: str | RunInfo,
    query_ids: list[str] | None = None,
    order: list[str] | None = None,
) -> RunColumns:
    """The run (its name, or the run as just listed) over its query set (``query_ids`` when
    given) against the evidence's reference, removed queries as of the evidence's marks.
    ``order``: another run's query set, taken as it is when it is this run's too (no sort)."""
    run = run if isinstance(run, RunInfo) else get_run(study, run)
    codes = evidence.ranking_codes(study, run.run_id, query_ids)
    wanted = query_ids
    if wanted is None:  # made here: without the removed queries
        wanted = _query_set(codes.query_ids, evidence.reference, evidence.removed(study), order)
    coded = _coded_ranking(study, run, wanted, codes, evidence.names)
    return RunColumns(run, wanted, coded, evidence.labels_over(study, wanted), evidence.reference)


def runs_as_columns(
    study: Study,
    run_names: Sequence[str],
    evidence: StudyEvidence | None = None,
    *,
    query_ids: Sequence[str] | None = None,
) -> list[RunColumns]:
    """:func:`run_columns` of each of ``run_names`` over one query set: ``query_ids`` (in its
    order), else the union of theirs (natural order, removed queries left out), against the
    ``evidence``'s reference (None: the working reference read now)."""
    get_study(study.db, study.study_id)
    runs = [get_run(study, name) for name in run_names]
    if evidence is None:
        evidence = study_evidence(study)
    codes = [evidence.ranking_codes(study, run.run_id) for run in runs]  # whole, kept
    if query_ids is None:
        ranked = set().union(*(c.query_ids for c in codes))
        wanted = _query_set(ranked, evidence.reference, evidence.removed(study))
    else:
        wanted = list(dict.fromkeys(query_ids))
    return [run_columns(study, evidence, run, wanted) for run in runs]


def _query_set(ranked: Iterable[str], reference: ReferenceColumns, removed: frozenset[str],
               order: list[str] | None = None) -> list[str]:
    """Every query ranked, labeled or claimed in ``reference`` but the ``removed`` ones, in natural
    order (``order`` when it is this set, no sort)."""
    wanted = (set(ranked) | set(reference.gains) | set(reference.complete)) - removed
    if order is not None and len(order) == len(wanted) and wanted.issuperset(order):
        return order
    return sorted(wanted, key=natural_key)


def run_tied_score_pairs(study: Study, run_id: int, query_ids: Sequence[str]) -> int:
    """Tied score pairs (:func:`evalcore.io.ties.tied_score_pairs`) of the run's rankings of
    ``query_ids``, read from the packed scores alone."""
    scores = dict(study.db.conn.execute("SELECT query_id, scores FROM run_rankings WHERE run_id = ?",
                                  [run_id]).fetchall())
    loads = json.loads
    return count_tied_pairs(loads(scores[q]) for q in query_ids if q in scores)


def _run_queries(study: Study, run_name: str) -> tuple[set[str], frozenset[str]]:
    """The queries the run holds a ranking for (answered or not), and those it returned at
    least one result for: one read of its packed rankings."""
    run = get_run(study, run_name)
    rows = study.db.execute(
        "SELECT query_id, unit_ids NOT IN ('', '[]') FROM run_rankings WHERE run_id = ?",
        [run.run_id],
    ).fetchall()
    return {q for q, _ in rows}, frozenset(q for q, returned in rows if returned)


@dataclass(frozen=True)
class QueryFacts:
    """What a query set of some runs is resolved from (read once, in the store)."""

    study_id: str
    #: the queries compared over (:func:`_query_set`), in natural order
    query_ids: list[str]
    #: every query id of the study (:func:`study_query_ids`)
    study_query_ids: frozenset[str]
    #: queries with at least one relevant label in the working reference
    judged: frozenset[str]
    #: run name -> queries it returned at least one result for
    answered: dict[str, frozenset[str]]
    removed: frozenset[str]


def query_facts(
    study: Study, run_names: Sequence[str], reference: str | None = None,
    *, working: ReferenceColumns | None = None,
) -> QueryFacts:
    """:class:`QueryFacts` of ``run_names`` against ``reference`` (None: the working labels).
    ``working``: the study's whole working reference as just read, instead of a read."""
    threshold = study.settings.protocol().relevance_threshold
    if working is None:
        working = reference_columns(study, None)
    judged = frozenset(
        q
        for q, units in working.gains.items()
        if any((max(g) if isinstance(g, tuple) else g) >= threshold for g in units.values())
    )
    evaluated = working if reference is None else reference_columns(study, reference)
    per_run = {name: _run_queries(study, name) for name in run_names}
    answered = {name: queries[1] for name, queries in per_run.items()}
    removed = removed_query_ids(study)
    ranked = set().union(*(queries[0] for queries in per_run.values()))
    return QueryFacts(
        study_id=study.study_id,
        query_ids=_query_set(ranked, evaluated, removed),
        study_query_ids=frozenset(study_query_ids(study)),
        judged=judged,
        answered=answered,
        removed=removed,
    )

