"""The live dashboard's state: every run's per-query results, kept current cheaply.

:meth:`LiveDashboard.build` evaluates every run of a study against the working reference
(the numbers :func:`evalcore.analysis.run_evaluation.evaluate_run` gives) and keeps, per
run, the per-metric arrays the aggregates are made of; per-query :class:`QueryResult`
objects and the blocking list are made when a page first asks for them.

:meth:`LiveDashboard.refresh` brings it up to date: nothing is read when the store's marks
have not moved; appended label or completeness events re-evaluate only the queries they
touch; a run added or removed, a new query, another corpus size or other chosen measures,
or very many touched queries rebuild everything.

It shows the study's chosen measures with Judged@k beside them. One state per run holds
them all: the section-7 metrics (P, R, nDCG and RR at the run's own k) under their
section-7 keys, every other shown measure under its canonical name, computed in the same
pass unless deeper than the run was stored. Aggregates are never a mean of the
available subset (:mod:`evalcore.compute.aggregate`). Label coverage counts the pool (every
unit a run returned in its top k) and how much of it has a resolved gain.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from evalcore.analysis.comparability import RunTerms
from evalcore.analysis.decision import fits_depth
from evalcore.analysis.interval_text import unknown_counts
from evalcore.analysis.shared_evidence import shared_evidence
from evalcore.annotation.blocking import BlockingItem
from evalcore.annotation.blocking_table import BlockingTable, RunBlocking, blocking_table
from evalcore.annotation.progress import QueryLabels
from evalcore.compute.aggregate import aggregate_arrays
from evalcore.compute.batch import CONFLICT_BASE, UNLABELED
from evalcore.compute.evaluate import BatchResult, compute, compute_more, evaluate
from evalcore.compute.measures import LEGACY_NAMES
from evalcore.compute.measures.base import reason_masks
from evalcore.compute.unit_pairs import group_heads, pair_groups
from evalcore.contract.evaluation_protocol import EvalProtocol
from evalcore.contract.frozen import FrozenModel
from evalcore.contract.measures import Measure
from evalcore.contract.query_order import natural_key
from evalcore.contract.reasons import Reason
from evalcore.contract.results import (
    METRICS,
    AggregateValue,
    Diagnostics,
    EvaluationReport,
    MetricValue,
    QueryResult,
)
from evalcore.store.marks import StoreMarks, current_marks, touched_queries
from evalcore.store.observations import (
    ReferenceColumns,
    RunColumns,
    observations_for_runs,
    run_columns,
    study_evidence,
)
from evalcore.store.population import study_population
from evalcore.store.query_reads import query_registered
from evalcore.store.resolution import gains_with_conflicts
from evalcore.store.runs import RunInfo, list_runs
from evalcore.store.study_handle import Study
from evalcore.store.study_measures import DEFAULT_STUDY_MEASURES, shown_measures, study_measures

#: Above this many touched queries a refresh rebuilds everything instead.
FULL_REBUILD_THRESHOLD = 2000
_REASON_CODES = [r.value for r in Reason]
_REASON_COLUMN = {code: i for i, code in enumerate(_REASON_CODES)}
#: Measure family -> its section-7 key (the same measure when at the run's own k, no rel=).
_LEGACY_KEY = {m.family: key for key, m in LEGACY_NAMES.items()}


class QueryCoverage(FrozenModel):
    """How much of one query's pool has a resolved gain."""

    pooled: int
    labeled: int
    #: pooled units whose annotators disagree and no reviewer has decided (not labeled)
    in_conflict: int = 0


class Coverage(FrozenModel):
    """Label coverage of the study's pools."""

    queries: int
    pooled: int
    labeled: int
    #: pooled items in conflict (counted apart from the unlabeled ones)
    in_conflict: int
    #: queries whose whole pool is labeled
    queries_fully_labeled: int
    #: queries declared population-complete
    queries_complete: int

    @property
    def share(self) -> float | None:
        return self.labeled / self.pooled if self.pooled else None


@dataclass
class RunState:
    """One run's per-query results of every shown measure and the arrays its aggregates are
    made of.

    A full build fills the arrays straight from the computer's :class:`BatchResult`;
    the per-query :class:`QueryResult` objects are made from it the first time a page
    asks for them (:attr:`results`), with the queries re-evaluated since put in place.
    """

    run: RunInfo
    top_units: list[Sequence[str]]
    #: query_id -> position in ``results`` (the run's own query set, sorted by id)
    index: dict[str, int] = field(default_factory=dict)
    available: dict[str, np.ndarray] = field(default_factory=dict)
    value: dict[str, np.ndarray] = field(default_factory=dict)
    lower: dict[str, np.ndarray] = field(default_factory=dict)
    upper: dict[str, np.ndarray] = field(default_factory=dict)
    #: metric -> bool[n, len(Reason)]: the reasons of each query's value
    reasons: dict[str, np.ndarray] = field(default_factory=dict)
    #: the metric keys of ``results`` this state holds arrays of
    metrics: tuple[str, ...] = ()
    #: the per-query results once made (see :attr:`results`)
    _results: list[QueryResult] | None = None
    #: what they are made from until then (None once made), and the queries re-evaluated since
    _source: BatchResult | None = None
    _replaced: dict[int, QueryResult] = field(default_factory=dict)
    #: the results with the section-7 metrics alone, once asked for (see :attr:`section7`)
    _section7: list[QueryResult] | None = None
    #: metric -> per query (unlabeled, in conflict) units behind an unavailable value
    _unknowns: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)

    @property
    def results(self) -> list[QueryResult]:
        """Per-query results, in the run's query order."""
        if self._results is None:
            made = self._source.query_results()
            for i, result in self._replaced.items():
                made[i] = result
            self._results, self._source, self._replaced = made, None, {}
        return self._results

    @property
    def section7(self) -> list[QueryResult]:
        """Per-query results with the section-7 metrics alone (what ``evaluate_run`` gives)."""
        if self._section7 is not None:
            return self._section7
        if self._results is None:
            # made from the section-7 columns alone: the other measures' objects are not needed
            source = self._source
            made = replace(source, metrics={k: source.metrics[k] for k in METRICS}).query_results()
            for i, result in self._replaced.items():
                made[i] = _section7(result)
        else:
            made = [_section7(result) for result in self.results]
        self._section7 = made
        return made

    def results_at(self, rows: Sequence[int]) -> list[QueryResult]:
        """The results of the queries at ``rows`` (in that order), made for them alone
        while the whole list is not made (a chart of 50 queries of 10,000)."""
        if self._results is not None:
            return [self._results[i] for i in rows]
        fresh = [i for i in rows if i not in self._replaced]
        made = dict(zip(fresh, self._source.query_results(fresh), strict=True))
        return [self._replaced[i] if i in self._replaced else made[i] for i in rows]

    def unknown_counts(self, metric: str) -> tuple[int, int]:
        """(unlabeled, in conflict): the unknown units behind the metric's unavailable values,
        as :func:`evalcore.analysis.interval_text.unknown_counts` counts them over
        :attr:`results`, from the computer's arrays while the results are not made."""
        found = self._unknowns.get(metric)
        if found is None:
            found = self._unknowns[metric] = self._unknown_columns(metric)
        return int(found[0].sum()), int(found[1].sum())

    def _unknown_columns(self, metric: str) -> tuple[np.ndarray, np.ndarray]:
        n = len(self.index)
        unlabeled = np.zeros(n, dtype=np.int64)
        conflicts = np.zeros(n, dtype=np.int64)
        if self._results is not None:
            for i, result in enumerate(self._results):
                _set_unknowns(unlabeled, conflicts, i, result.metrics[metric])
            return unlabeled, conflicts
        blocking, conflict, beyond = self._source.blocker_masks(metric)
        query = self._source.ranking.query
        unlabeled = np.bincount(query[blocking], minlength=n).astype(np.int64)
        conflicts = np.bincount(query[conflict], minlength=n).astype(np.int64)
        for i, units in beyond.items():
            conflicts[i] += len(units)
        for i, result in self._replaced.items():
            _set_unknowns(unlabeled, conflicts, i, result.metrics[metric])
        return unlabeled, conflicts

    @classmethod
    def from_batch(
        cls, run: RunInfo, query_ids: list[str], result: BatchResult, top_units: list[Sequence[str]]
    ) -> RunState:
        """The state of every measure of ``result``, arrays filled column by column as
        :meth:`_set_arrays` fills them per query."""
        index = {q: i for i, q in enumerate(query_ids)}
        state = cls(run, top_units, index, metrics=tuple(result.metrics), _source=result)
        n = len(query_ids)
        for metric in state.metrics:
            m = result.metrics[metric]
            ok = result.available(metric)
            lower, upper = result.bounds(metric)
            both = ~(np.isnan(lower) | np.isnan(upper))
            state.available[metric] = ok
            state.value[metric] = np.where(ok, m.value, 0.0)
            state.lower[metric] = np.where(both, lower, np.nan)
            state.upper[metric] = np.where(both, upper, np.nan)
            reasons = np.zeros((n, len(_REASON_CODES)), dtype=bool)
            for reason, mask in reason_masks(result.observation_bits, m.reason_bits).items():
                reasons[:, _REASON_COLUMN[reason.value]] = mask
            state.reasons[metric] = reasons
        return state

    def _set_arrays(self, i: int, result: QueryResult) -> None:
        for metric in self.metrics:
            mv = result.metrics[metric]
            ok = mv.available and mv.value is not None
            self.available[metric][i] = ok
            self.value[metric][i] = mv.value if ok else 0.0
            both = mv.lower is not None and mv.upper is not None
            self.lower[metric][i] = mv.lower if both else np.nan
            self.upper[metric][i] = mv.upper if both else np.nan
            row = self.reasons[metric][i]
            row[:] = False
            if not ok:
                for code in mv.reasons:
                    row[_REASON_COLUMN[code]] = True
            if metric in self._unknowns:
                _set_unknowns(*self._unknowns[metric], i, mv)

    def replace(self, i: int, result: QueryResult, top_units: Sequence[str]) -> None:
        """Put a re-evaluated query at index ``i``."""
        if self._results is None:
            self._replaced[i] = result
        else:
            self._results[i] = result
        if self._section7 is not None:
            self._section7[i] = _section7(result)
        self.top_units[i] = top_units
        self._set_arrays(i, result)

    def aggregates(self) -> dict[str, AggregateValue]:
        """Section-6 aggregates of every metric (same rule and numbers as ``evaluate``)."""
        return {
            metric: aggregate_arrays(
                self.available[metric],
                self.value[metric],
                self.lower[metric],
                self.upper[metric],
                self.reason_counts(metric),
            )
            for metric in self.metrics
        }

    def reason_counts(self, metric: str) -> dict[str, int]:
        """Reason code -> how many queries without a value of ``metric`` have it."""
        counts = self.reasons[metric][~self.available[metric]].sum(axis=0).tolist()
        return {code: int(n) for code, n in zip(_REASON_CODES, counts, strict=True) if n}


def _set_unknowns(unlabeled: np.ndarray, conflicts: np.ndarray, i: int, mv: MetricValue) -> None:
    unlabeled[i], conflicts[i] = unknown_counts([mv])


@dataclass(frozen=True)
class MeasureColumns:
    """One run's per-query values of one measure as arrays (row i: the run's i-th query)."""

    #: each row's position in :attr:`LiveDashboard.query_ids`
    positions: np.ndarray
    available: np.ndarray
    #: the value where available (0.0 elsewhere: a filler, never to be shown)
    value: np.ndarray
    #: reason code -> how many unavailable rows have it (a row may have several)
    reasons: dict[str, int]

    @property
    def n_unavailable(self) -> int:
        return int(self.available.size - np.count_nonzero(self.available))


class RefreshOutcome(FrozenModel):
    """What a refresh did."""

    changed: bool
    full: bool
    queries: list[str]
    seconds: float


def _evaluate(
    columns: RunColumns, protocol: EvalProtocol, extra: Sequence[Measure]
) -> tuple[BatchResult, BatchResult, Sequence[Sequence[str]]]:
    """The run's section-7 metrics (what the blocking list ranks by), the same with the
    ``extra`` measures beside them (every measure its state shows) and the top-k units,
    packed straight from the store's unit codes (the same batch :func:`observations_for_run`
    observations would pack to)."""
    batch = columns.packed(protocol)
    results = compute(batch, protocol)
    if not extra:
        return results, results, batch.top_units
    shown = replace(results, metrics={**results.metrics, **compute_more(results, extra).metrics})
    return results, shown, batch.top_units  # named when read


def _section7(result: QueryResult) -> QueryResult:
    """``result`` with the section-7 metrics alone (what ``evaluate_run`` gives a query)."""
    if len(result.metrics) == len(METRICS):
        return result
    return result.model_copy(update={"metrics": {key: result.metrics[key] for key in METRICS}})


def _legacy_key(measure: Measure, k: int) -> str | None:
    """The section-7 key that is ``measure`` at a run stored to depth ``k``, if any."""
    if measure.rel is None and measure.k in (None, k):
        return _LEGACY_KEY.get(measure.family)
    return None


class LiveDashboard:
    """The dashboard state of one study on the working reference (see the module docstring)."""

    def __init__(
        self, study_id: str, protocol: EvalProtocol, measures: Sequence[Measure] | None = None
    ) -> None:
        self.study_id = study_id
        self.protocol = protocol
        #: the study's chosen measures (what the lead set, or the default set)
        self.chosen: list[Measure] = list(measures or DEFAULT_STUDY_MEASURES)
        #: what the dashboard shows: the chosen measures and Judged beside them
        self.measures: list[Measure] = shown_measures(self.chosen)
        self.marks = StoreMarks(0, 0, ())
        self.query_ids: list[str] = []
        self.index: dict[str, int] = {}
        self.runs: dict[str, RunState] = {}
        #: run name -> the section-6 aggregate of every measure of its state
        self._aggregates: dict[str, dict[str, AggregateValue]] = {}
        #: the blocking list once made (see _blocking_table); until then what it is made
        #: of: every run's evaluation and the tables of the queries re-evaluated since
        self._blocking: BlockingTable | None = None
        self._blocking_source: dict[str, RunBlocking] = {}
        #: the queries re-evaluated since (their positions) and their items now
        self._blocking_updates: tuple[set[int], BlockingTable] | None = None
        #: per query (its position in query_ids): pooled, labeled, in conflict
        self._pool = np.zeros((3, 0), dtype=np.int64)
        self._complete: dict[str, bool] = {}
        #: run name -> the positions of its queries in query_ids (see _query_rows)
        self._rows: dict[str, np.ndarray] = {}
        self.last_refresh: RefreshOutcome | None = None
        #: the corpus size every batch was packed with (:attr:`ReferenceColumns.corpus_size`)
        self._corpus_size: int | None = None

    # --- building and refreshing ------------------------------------------------

    @classmethod
    def build(cls, study: Study) -> LiveDashboard:
        """Evaluate every run of the study in full."""
        state = cls(
            study.study_id, study.settings.protocol(), study_measures(study)
        )
        state._full(study)
        return state

    def _full(self, study: Study) -> None:
        started = time.perf_counter()
        marks = current_marks(study)
        self.runs = {}
        evidence = shared_evidence(study, marks=marks)
        reference = evidence.reference
        self._corpus_size = reference.corpus_size
        evaluated: dict[str, BatchResult] = {}
        order: list[str] | None = None
        for run in list_runs(study):
            extra = self._extra_measures(run.k)
            columns = run_columns(study, evidence, run, order=order)
            order = columns.query_ids
            evaluated[run.name], shown, tops = _evaluate(columns, self.protocol, extra)
            self.runs[run.name] = RunState.from_batch(run, columns.query_ids, shown, tops)
        # Each run's query set is its own (its answered queries plus the study's registered,
        # labeled and complete ones, as evaluate_run has it); the dashboard lists the union.
        sets = [rs.index for rs in self.runs.values()]
        if sets and all(index.keys() == sets[0].keys() for index in sets):
            self.query_ids = list(sets[0])  # each is in query order already
        else:
            self.query_ids = sorted({q for index in sets for q in index}, key=natural_key)
        self.index = {q: i for i, q in enumerate(self.query_ids)}
        self._rows = {}
        self._blocking = None  # made when first asked (see _blocking_table)
        self._blocking_source = self._run_blocking(evaluated)
        self._blocking_updates = None
        self._pool = np.zeros((3, len(self.query_ids)), dtype=np.int64)
        self._complete = {}
        self._set_coverage(self.query_ids, self._blocking_source.values(), reference)
        self._set_aggregates()
        evidence.names.read_small(study)  # the blocking list names its units on this handle
        self.marks = marks
        self._outcome(started, changed=True, full=True, queries=[])

    def _outcome(self, started: float, *, changed: bool, full: bool, queries: list[str]
                 ) -> RefreshOutcome:
        """Record and return what a build or refresh begun at ``started`` did."""
        self.last_refresh = RefreshOutcome(changed=changed, full=full, queries=queries,
                                           seconds=time.perf_counter() - started)
        return self.last_refresh

    def _run_blocking(self, evaluated: dict[str, BatchResult]) -> dict[str, RunBlocking]:
        """Each evaluated run (the runs' batches of the queries they have, as the runs are
        now) with its queries' positions and its packed positions' unit codes (one code
        space: the study's)."""
        blocking = {}
        for name, result in evaluated.items():
            positions = self._positions(self.runs[name], result.batch.query_ids)
            blocking[name] = RunBlocking(result, positions, result.batch.pos_unit)
        return blocking

    def _set_coverage(self, query_ids: Sequence[str], runs: Iterable[RunBlocking],
                      reference: ReferenceColumns) -> None:
        """The pool coverage of ``query_ids`` from ``runs``, every run's evaluation of them.

        The pool is the distinct units of every run's top k (the packed positions); a unit
        is labeled when its gain is resolved: not unlabeled, and not in conflict (a unit
        in conflict is in the labels, section 9, but has no resolved gain)."""
        runs = list(runs)
        query = [np.repeat(run.positions, run.result.batch.n_positions) for run in runs]
        codes = [run.unit_codes for run in runs]
        gains = [run.result.batch.pos_gain for run in runs]
        if query:
            at = np.concatenate(query)
            heads = group_heads(pair_groups(at, np.concatenate(codes)))
            at, gain = at[heads], np.concatenate(gains)[heads]
            n = len(self.query_ids)
            pooled = np.bincount(at, minlength=n)
            labeled = np.bincount(at[(gain != UNLABELED) & (gain < CONFLICT_BASE)], minlength=n)
            in_conflict = np.bincount(at[gain >= CONFLICT_BASE], minlength=n)
            touched = np.asarray([self.index[q] for q in query_ids], dtype=np.int64)
            for row, counts in enumerate((pooled, labeled, in_conflict)):
                self._pool[row, touched] = counts[touched]
        for query_id in query_ids:
            self._complete[query_id] = reference.complete.get(query_id, False)

    def _query_rows(self, run_name: str) -> np.ndarray:
        """The positions in :attr:`query_ids` of the run's queries, made once per full build
        (read-only: shared by every :class:`MeasureColumns` of the run)."""
        found = self._rows.get(run_name)
        if found is None:
            found = self._rows[run_name] = self._positions(self.runs[run_name])
            found.flags.writeable = False
        return found

    def _positions(self, rs: RunState, query_ids: Iterable[str] | None = None) -> np.ndarray:
        """The positions in :attr:`query_ids` of the run's queries (or of ``query_ids``)."""
        queries = rs.index if query_ids is None else list(query_ids)
        return np.fromiter((self.index[q] for q in queries), dtype=np.int64,
                           count=len(queries))

    def _blocking_table(self) -> BlockingTable:
        """The blocking list's table, made from every run's evaluation when first asked."""
        if self._blocking is None:
            table = blocking_table(self.run_names, self._blocking_source, self.query_ids)
            if self._blocking_updates is not None:
                table = table.replace_queries(*self._blocking_updates)
            self._blocking, self._blocking_source, self._blocking_updates = table, {}, None
        return self._blocking

    def _changes_query_sets(self, study: Study, touched: Sequence[str]) -> bool:
        """Whether an event on ``touched`` may add or remove a query of some run's set.

        A registered query is in every run's set; an unregistered one is in a run's set
        only while the run answers it or it has labels or a completeness claim.
        """
        for query_id in touched:
            if any(query_id not in rs.index for rs in self.runs.values()):
                return True
            if any(not rs.top_units[rs.index[query_id]] for rs in self.runs.values()) and not (
                query_registered(study, query_id)
            ):
                return True
        return False

    def refresh(self, study: Study) -> RefreshOutcome:
        """Bring the state up to date with the store (see the module docstring). The state
        itself may be shared: each caller brings its own handle on the study."""
        self._same_study(study)
        started = time.perf_counter()
        marks = current_marks(study)
        chosen = study_measures(study)
        if chosen != self.chosen:  # a lead chose other measures: show them
            self.chosen, self.measures = chosen, shown_measures(chosen)
            self._full(study)
            return self._outcome(started, changed=True, full=True, queries=[])
        if marks == self.marks:
            return self._outcome(started, changed=False, full=False, queries=[])
        # a removed query's labels count nowhere
        touched = sorted(touched_queries(study, self.marks) - set(marks.removed))
        if (
            marks.run_ids != self.marks.run_ids
            or marks.removed != self.marks.removed
            or len(touched) > FULL_REBUILD_THRESHOLD
            or self._changes_query_sets(study, touched)
            or study_population(study).corpus_size != self._corpus_size
        ):
            self._full(study)
            return self._outcome(started, changed=True, full=True, queries=touched)
        if touched:
            self.update_queries(study, touched)
        self.marks = marks
        return self._outcome(started, changed=True, full=False, queries=touched)

    def update_queries(self, study: Study, query_ids: Iterable[str]) -> None:
        """Re-read and re-evaluate the given queries in every run whose query set has them."""
        self._same_study(study)
        wanted = [q for q in dict.fromkeys(query_ids) if q in self.index]
        if not wanted:
            return
        evidence = study_evidence(study, None, wanted)
        reference = evidence.reference
        if reference.corpus_size != self._corpus_size:  # bounds every query: all again
            self._full(study)
            return
        evaluated: dict[str, BatchResult] = {}
        for name, rs in self.runs.items():
            mine = [q for q in wanted if q in rs.index]
            if not mine:
                continue
            columns = run_columns(study, evidence, name, mine)
            extra = self._extra_measures(rs.run.k)
            evaluated[name], shown, tops = _evaluate(columns, self.protocol, extra)
            for query_id, result, top in zip(mine, shown.query_results(), tops, strict=True):
                rs.replace(rs.index[query_id], result, top)
        blocking = self._run_blocking(evaluated)
        self._set_coverage(wanted, blocking.values(), reference)
        positions = [self.index[q] for q in wanted]
        update = blocking_table(self.run_names, blocking, self.query_ids)
        if self._blocking is None:  # kept as one table of every query touched since
            touched, before = self._blocking_updates or (set(), update)
            self._blocking_updates = (touched | set(positions),
                                      before.replace_queries(positions, update))
        else:
            self._blocking = self._blocking.replace_queries(positions, update)
        self._set_aggregates()

    def _same_study(self, study: Study) -> None:
        if study.study_id != self.study_id:
            raise ValueError(
                f"a handle on study {study.study_id!r} given to the dashboard of "
                f"study {self.study_id!r}"
            )

    def _set_aggregates(self) -> None:
        self._aggregates = {name: rs.aggregates() for name, rs in self.runs.items()}

    def _extra_measures(self, k: int) -> list[Measure]:
        """The shown measures a run stored to depth ``k`` needs beyond the section-7 metrics."""
        return [m for m in self.measures
                if _legacy_key(m, k) is None and fits_depth(m, k)]

    # --- what the dashboard shows -------------------------------------------------

    @property
    def run_names(self) -> list[str]:
        return list(self.runs)

    def aggregates(self, run_name: str) -> dict[str, AggregateValue]:
        """The run's section-6 aggregates of the section-7 metrics (mean only when every query
        has the metric)."""
        return {key: self._aggregates[run_name][key] for key in METRICS}

    def k(self, run_name: str) -> int:
        return self.runs[run_name].run.k

    def run_terms(self, run: RunInfo) -> RunTerms:
        """``RunTerms.of(run.name, self.evaluation(run.name), run.corpus_fingerprint)``
        without the per-query results: every query of a run is packed at the run's own k
        (None for a run with no query, as ``RunTerms.of`` gives)."""
        return RunTerms(name=run.name, corpus_fingerprint=run.corpus_fingerprint,
                        protocol=self.protocol,
                        k=self.k(run.name) if self.runs[run.name].index else None)

    def evaluation(self, run_name: str) -> EvaluationReport:
        """The run's evaluation as :func:`evalcore.analysis.run_evaluation.evaluate_run` returns it
        on the working labels (same queries, metrics and aggregates; the reader diagnostic
        ``tied_score_pairs`` is not tracked and left at 0)."""
        rs = self.runs[run_name]
        return EvaluationReport.model_construct(
            protocol=self.protocol,
            queries=list(rs.section7),
            aggregates=self.aggregates(run_name),
            diagnostics=Diagnostics(),
        )

    def measure_key(self, run_name: str, measure: Measure) -> str | None:
        """The key of ``measure`` in the run's aggregates (a section-7 key when it is one at the
        run's k), or None when the run was stored too shallow for its cutoff."""
        key = _legacy_key(measure, self.k(run_name)) or measure.canonical
        return key if key in self.runs[run_name].metrics else None

    def measure_values(self, run_name: str, measure: Measure,
                       query_ids: Sequence[str] | None = None) -> list[tuple[str, MetricValue]]:
        """(query_id, value) of ``measure`` for every query of the run, in query order, or for
        those of ``query_ids`` in the run's set, in that order (empty when the run was
        stored too shallow for its cutoff)."""
        key = self.measure_key(run_name, measure)
        if key is None:
            return []
        rs = self.runs[run_name]
        results = (rs.results if query_ids is None
                   else rs.results_at([rs.index[q] for q in query_ids if q in rs.index]))
        return [(r.query_id, r.metrics[key]) for r in results]

    def measure_columns(self, run_name: str, measure: Measure) -> MeasureColumns | None:
        """The run's per-query arrays of ``measure`` (None: not computed for the run), read
        from the state's arrays without making a per-query result object."""
        key = self.measure_key(run_name, measure)
        if key is None:
            return None
        rs = self.runs[run_name]
        return MeasureColumns(
            positions=self._query_rows(run_name),
            available=rs.available[key],
            value=rs.value[key],
            reasons=rs.reason_counts(key),
        )

    def measure_aggregate(self, run_name: str, measure: Measure) -> AggregateValue | None:
        """The run's section-6 aggregate of ``measure`` (None: not computed for the run)."""
        key = self.measure_key(run_name, measure)
        if key is None:
            return None
        return self._aggregates[run_name][key]

    def measure_unknowns(self, run_name: str, measure: Measure) -> tuple[int, int]:
        """(unlabeled, in conflict): the unknown units behind the run's missing values of
        ``measure`` (see :func:`evalcore.analysis.interval_text.unknown_counts`)."""
        key = self.measure_key(run_name, measure)
        return (0, 0) if key is None else self.runs[run_name].unknown_counts(key)

    def query_result(self, run_name: str, query_id: str) -> QueryResult | None:
        """The query's section-7 result in the run (as ``evaluate_run`` gives it), or None when
        the query is not in the run's set."""
        rs = self.runs[run_name]
        i = rs.index.get(query_id)
        return None if i is None else _section7(rs.results[i])

    def coverage(self) -> Coverage:
        pooled, labeled, in_conflict = self._pool
        return Coverage(
            queries=len(self.query_ids),
            pooled=int(pooled.sum()),
            labeled=int(labeled.sum()),
            in_conflict=int(in_conflict.sum()),
            queries_fully_labeled=int(((pooled > 0) & (labeled == pooled)).sum()),
            queries_complete=sum(1 for v in self._complete.values() if v),
        )

    def query_coverage(self, query_id: str) -> QueryCoverage:
        pooled, labeled, in_conflict = self._pool[:, self.index[query_id]].tolist()
        return QueryCoverage(pooled=pooled, labeled=labeled, in_conflict=in_conflict)

    def blocking_list(self, limit: int | None = 50, offset: int = 0) -> list[BlockingItem]:
        """The unlabeled items to label first (see :mod:`evalcore.annotation.blocking`):
        ``limit`` of them (every one: None) from the ``offset``-th."""
        return self._blocking_table().page(offset, limit)

    def query_blocking_list(self, query_id: str) -> list[BlockingItem]:
        """One query's blocking items, in blocking-list order."""
        position = self.index.get(query_id)
        return [] if position is None else self._blocking_table().of_query(position)

    def n_blocking_items(self) -> int:
        return len(self._blocking_table())


def query_results_by_run(study: Study, query_id: str,
                         labels: QueryLabels | None = None) -> dict[str, QueryResult]:
    """Run name -> one query's result under every run of the study (what the Annotate page
    shows after each label): the metric computer on the store's observations of that
    query, under the study's protocol. ``labels``: the query's, when the caller read them."""
    protocol = study.settings.protocol()
    ref = None
    if labels is not None:
        gains = {query_id: gains_with_conflicts(labels.resolved)} if labels.resolved else {}
        ref = ReferenceColumns(gains=gains, complete={query_id: labels.complete},
                               population=study_population(study))
    by_run = observations_for_runs(study, list_runs(study), None, [query_id], ref=ref)
    return {name: evaluate(observations, protocol).queries[0]
            for name, observations in by_run.items()}
