"""The live dashboard's state: every run's per-query results, kept current cheaply.

:meth:`LiveDashboard.build` evaluates every run of a study against the
working reference (exactly what :func:`evalcore.analysis.run_evaluation.evaluate_run`
computes) and keeps, per run, the per-query :class:`QueryResult` objects and
the per-metric arrays the aggregates are made of.

:meth:`LiveDashboard.refresh` brings the state up to date with the store:

* nothing changed (the store's highest label event id, completeness event id
  and the study's run ids are as last seen) -> nothing is read or computed;
* label or completeness events were appended -> only the queries they touch
  are re-read and re-evaluated, for every run, and the aggregates are rebuilt
  from the arrays (section 6 of the contract, :func:`evalcore.compute.aggregate.aggregate_arrays`);
* a run was added or removed, a touched query is new to the study, or very many
  queries changed -> a full rebuild.

Aggregates are never a mean of the available subset: they come from
:mod:`evalcore.compute.aggregate`, which gives the mean only when every query has the
metric. Label coverage counts the pool (every unit a run returned in its top
k) and how much of it has a resolved gain (units in conflict count as
unlabeled).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
import sqlite_utils
from pydantic import BaseModel, ConfigDict

from evalcore.annotation.blocking import (
    BlockingItem,
    BlockingKey,
    merge_blocking,
    query_blocking_keys,
)
from evalcore.compute.aggregate import aggregate_arrays
from evalcore.compute.batch import ObservationBatch, conflict_code
from evalcore.compute.evaluate import compute
from evalcore.contract.evaluation_protocol import EvalProtocol
from evalcore.contract.query_order import natural_key
from evalcore.contract.reasons import Reason
from evalcore.contract.results import (
    METRICS,
    AggregateValue,
    Diagnostics,
    EvaluationReport,
    QueryResult,
)
from evalcore.store.marks import StoreMarks, store_marks, touched_queries
from evalcore.store.observations import (
    ReferenceColumns,
    RunColumns,
    reference_columns,
    run_columns,
)
from evalcore.store.runs import RunInfo, list_runs
from evalcore.store.studies import get_study, query_registered

#: Above this many touched queries a refresh rebuilds everything instead.
FULL_REBUILD_THRESHOLD = 2000
_REASON_CODES = [r.value for r in Reason]
_REASON_COLUMN = {code: i for i, code in enumerate(_REASON_CODES)}


class QueryCoverage(BaseModel):
    """How much of one query's pool has a resolved gain."""

    model_config = ConfigDict(frozen=True)

    pooled: int
    labeled: int
    #: pooled units whose annotators disagree and no reviewer has decided (not labeled)
    in_conflict: int = 0


class Coverage(BaseModel):
    """Label coverage of the study's pools."""

    model_config = ConfigDict(frozen=True)

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
    """One run's per-query results and the arrays its aggregates are made of."""

    run: RunInfo
    results: list[QueryResult]
    top_units: list[list[str]]
    #: query_id -> position in ``results`` (the run's own query set, sorted by id)
    index: dict[str, int] = field(default_factory=dict)
    available: dict[str, np.ndarray] = field(default_factory=dict)
    value: dict[str, np.ndarray] = field(default_factory=dict)
    lower: dict[str, np.ndarray] = field(default_factory=dict)
    upper: dict[str, np.ndarray] = field(default_factory=dict)
    #: metric -> bool[n, len(Reason)]: the reasons of each query's value
    reasons: dict[str, np.ndarray] = field(default_factory=dict)

    @classmethod
    def from_results(
        cls, run: RunInfo, results: list[QueryResult], top_units: list[list[str]]
    ) -> RunState:
        n = len(results)
        state = cls(run=run, results=results, top_units=top_units,
                    index={r.query_id: i for i, r in enumerate(results)})
        for metric in METRICS:
            state.available[metric] = np.zeros(n, dtype=bool)
            state.value[metric] = np.zeros(n, dtype=np.float64)
            state.lower[metric] = np.full(n, np.nan)
            state.upper[metric] = np.full(n, np.nan)
            state.reasons[metric] = np.zeros((n, len(_REASON_CODES)), dtype=bool)
        for i, result in enumerate(results):
            state._set_arrays(i, result)
        return state

    def _set_arrays(self, i: int, result: QueryResult) -> None:
        for metric in METRICS:
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

    def replace(self, i: int, result: QueryResult, top_units: list[str]) -> None:
        """Put a re-evaluated query at index ``i``."""
        self.results[i] = result
        self.top_units[i] = top_units
        self._set_arrays(i, result)

    def aggregates(self) -> dict[str, AggregateValue]:
        """Section-6 aggregates of every metric (same rule and numbers as ``evaluate``)."""
        out = {}
        for metric in METRICS:
            available = self.available[metric]
            missing = self.reasons[metric][~available]
            counts = missing.sum(axis=0).tolist() if missing.size else [0] * len(_REASON_CODES)
            out[metric] = aggregate_arrays(
                available,
                self.value[metric],
                self.lower[metric],
                self.upper[metric],
                {code: int(c) for code, c in zip(_REASON_CODES, counts, strict=True) if c},
            )
        return out


class RefreshOutcome(BaseModel):
    """What a refresh did."""

    model_config = ConfigDict(frozen=True)

    changed: bool
    full: bool
    queries: list[str]
    seconds: float


def _label_columns(reference: ReferenceColumns) -> dict[str, tuple[list[str], list[int]]]:
    """query_id -> (labeled unit ids, their gains; a unit in conflict has its conflict code)."""
    out = {}
    for query_id, gains in reference.gains.items():
        values = list(gains.values())
        if not all(type(g) is int for g in values):
            values = [g if isinstance(g, int) else conflict_code(g) for g in values]
        out[query_id] = (list(gains), values)
    return out


def _evaluate(
    columns: RunColumns,
    reference: ReferenceColumns,
    labels: dict[str, tuple[list[str], list[int]]],
    protocol: EvalProtocol,
) -> tuple[list[QueryResult], list[list[str]]]:
    """The run's per-query results and top-k units, packed straight from the store's columns
    (the same batch :func:`observations_for_run` observations would pack to)."""
    none: tuple[list[str], list[int]] = ([], [])
    label_ids: list[list[str]] = []
    label_gains: list[list[int]] = []
    for query_id in columns.query_ids:
        ids, gains = labels.get(query_id, none)
        label_ids.append(ids)
        label_gains.append(gains)
    n = len(columns.query_ids)
    batch = ObservationBatch.from_columns(
        columns.query_ids, columns.run.k, columns.returned_ids, label_ids, label_gains,
        [reference.complete.get(q, False) for q in columns.query_ids],
        scan_complete=columns.run.scan_complete,
        permitted_ids=None if columns.permitted_ids is None else [columns.permitted_ids] * n,
        protocol=protocol,
    )
    results = compute(batch, protocol)
    return results.query_results(), [list(units) for units in batch.top_units]


class LiveDashboard:
    """The dashboard state of one study on the working reference (see the module docstring)."""

    def __init__(self, study_id: str, protocol: EvalProtocol) -> None:
        self.study_id = study_id
        self.protocol = protocol
        self.marks = StoreMarks(0, 0, ())
        self.query_ids: list[str] = []
        self.index: dict[str, int] = {}
        self.runs: dict[str, RunState] = {}
        self._aggregates: dict[str, dict[str, AggregateValue]] = {}
        self._blocking: dict[str, list[BlockingKey]] = {}
        self._coverage: dict[str, QueryCoverage] = {}
        self._complete: dict[str, bool] = {}
        self.last_refresh: RefreshOutcome | None = None

    # --- building and refreshing ------------------------------------------------

    @classmethod
    def build(cls, db: sqlite_utils.Database, study_id: str) -> LiveDashboard:
        """Evaluate every run of the study in full."""
        state = cls(study_id, get_study(db, study_id).protocol())
        state._full(db)
        return state

    def _full(self, db: sqlite_utils.Database) -> None:
        started = time.perf_counter()
        marks = store_marks(db, self.study_id)
        self.runs = {}
        reference = reference_columns(db, self.study_id)
        labels = _label_columns(reference)
        for run in list_runs(db, self.study_id):
            columns = run_columns(db, self.study_id, run.name, reference)
            results, tops = _evaluate(columns, reference, labels, self.protocol)
            self.runs[run.name] = RunState.from_results(run, results, tops)
        # Each run's query set is its own (its answered queries plus the study's registered,
        # labeled and complete ones, as evaluate_run has it); the dashboard lists the union.
        self.query_ids = sorted({q for rs in self.runs.values() for q in rs.index}, key=natural_key)
        self.index = {q: i for i, q in enumerate(self.query_ids)}
        self._blocking = {}
        self._coverage = {}
        self._complete = {}
        for query_id in self.query_ids:
            self._update_query(query_id, reference)
        self._aggregates = {name: rs.aggregates() for name, rs in self.runs.items()}
        self.marks = marks
        self.last_refresh = RefreshOutcome(
            changed=True, full=True, queries=[], seconds=time.perf_counter() - started
        )

    def _update_query(self, query_id: str, reference: ReferenceColumns) -> None:
        runs = {name: rs for name, rs in self.runs.items() if query_id in rs.index}
        per_run = {
            name: (rs.results[rs.index[query_id]], rs.top_units[rs.index[query_id]])
            for name, rs in runs.items()
        }
        items = query_blocking_keys(query_id, per_run)
        if items:
            self._blocking[query_id] = items
        else:
            self._blocking.pop(query_id, None)
        pooled: set[str] = set()
        for _, top in per_run.values():
            pooled.update(top)
        # A unit in conflict is in the labels (section 9) but has no resolved gain.
        gains = reference.gains.get(query_id, {}) if per_run else {}
        labeled = {unit for unit, gain in gains.items() if isinstance(gain, int)}
        conflicting = gains.keys() - labeled
        self._coverage[query_id] = QueryCoverage(pooled=len(pooled), labeled=len(pooled & labeled),
                                                 in_conflict=len(pooled & conflicting))
        self._complete[query_id] = reference.complete.get(query_id, False) if per_run else False

    def _changes_query_sets(self, db: sqlite_utils.Database, touched: Sequence[str]) -> bool:
        """Whether an event on ``touched`` may add or remove a query of some run's set.

        A registered query is in every run's set; an unregistered one is in a run's set
        only while the run answers it or it has labels or a completeness claim.
        """
        for query_id in touched:
            if any(query_id not in rs.index for rs in self.runs.values()):
                return True
            if any(not rs.top_units[rs.index[query_id]] for rs in self.runs.values()) and not (
                query_registered(db, self.study_id, query_id)
            ):
                return True
        return False

    def refresh(self, db: sqlite_utils.Database) -> RefreshOutcome:
        """Bring the state up to date with the store (see the module docstring)."""
        started = time.perf_counter()
        marks = store_marks(db, self.study_id)
        if marks == self.marks:
            outcome = RefreshOutcome(
                changed=False, full=False, queries=[], seconds=time.perf_counter() - started
            )
            self.last_refresh = outcome
            return outcome
        touched = sorted(touched_queries(db, self.study_id, self.marks))
        if (
            marks.run_ids != self.marks.run_ids
            or len(touched) > FULL_REBUILD_THRESHOLD
            or self._changes_query_sets(db, touched)
        ):
            self._full(db)
            outcome = RefreshOutcome(
                changed=True, full=True, queries=touched, seconds=time.perf_counter() - started
            )
            self.last_refresh = outcome
            return outcome
        if touched:
            self.update_queries(db, touched)
        self.marks = marks
        outcome = RefreshOutcome(
            changed=True, full=False, queries=touched, seconds=time.perf_counter() - started
        )
        self.last_refresh = outcome
        return outcome

    def update_queries(self, db: sqlite_utils.Database, query_ids: Iterable[str]) -> None:
        """Re-read and re-evaluate the given queries in every run whose query set has them."""
        wanted = [q for q in dict.fromkeys(query_ids) if q in self.index]
        if not wanted:
            return
        reference = reference_columns(db, self.study_id, None, wanted)
        labels = _label_columns(reference)
        for name, rs in self.runs.items():
            mine = [q for q in wanted if q in rs.index]
            if not mine:
                continue
            columns = run_columns(db, self.study_id, name, reference, mine)
            results, tops = _evaluate(columns, reference, labels, self.protocol)
            for j, query_id in enumerate(mine):
                rs.replace(rs.index[query_id], results[j], tops[j])
        for query_id in wanted:
            self._update_query(query_id, reference)
        self._aggregates = {name: rs.aggregates() for name, rs in self.runs.items()}

    # --- what the dashboard shows -------------------------------------------------

    @property
    def run_names(self) -> list[str]:
        return list(self.runs)

    def aggregates(self, run_name: str) -> dict[str, AggregateValue]:
        """The run's section-6 aggregates (mean only when every query has the metric)."""
        return self._aggregates[run_name]

    def k(self, run_name: str) -> int:
        return self.runs[run_name].run.k

    def evaluation(self, run_name: str) -> EvaluationReport:
        """The run's evaluation as :func:`evalcore.analysis.run_evaluation.evaluate_run` returns it
        on the working labels (same queries, metrics and aggregates; the reader diagnostic
        ``tied_score_pairs`` is not tracked and left at 0)."""
        rs = self.runs[run_name]
        return EvaluationReport.model_construct(
            protocol=self.protocol,
            queries=list(rs.results),
            aggregates=dict(self._aggregates[run_name]),
            diagnostics=Diagnostics(),
        )

    def query_result(self, run_name: str, query_id: str) -> QueryResult | None:
        """The query's result in the run, or None when the query is not in the run's set."""
        rs = self.runs[run_name]
        i = rs.index.get(query_id)
        return None if i is None else rs.results[i]

    def per_query(self, run_name: str, metric: str) -> list[tuple[str, float | None, list[str]]]:
        """(query_id, value or None, reasons) of every query, in query order."""
        out = []
        for result in self.runs[run_name].results:
            mv = result.metrics[metric]
            out.append((result.query_id, mv.value if mv.available else None, list(mv.reasons)))
        return out

    def coverage(self) -> Coverage:
        values = self._coverage.values()
        return Coverage(
            queries=len(self.query_ids),
            pooled=sum(c.pooled for c in values),
            labeled=sum(c.labeled for c in values),
            in_conflict=sum(c.in_conflict for c in values),
            queries_fully_labeled=sum(1 for c in values if c.pooled and c.labeled == c.pooled),
            queries_complete=sum(1 for v in self._complete.values() if v),
        )

    def query_coverage(self, query_id: str) -> QueryCoverage:
        return self._coverage[query_id]

    def blocking_list(self, limit: int | None = 50) -> list[BlockingItem]:
        """The unlabeled items to label first (see :mod:`evalcore.annotation.blocking`)."""
        return merge_blocking(self._blocking.values(), limit)

    def query_blocking_list(self, query_id: str) -> list[BlockingItem]:
        """One query's blocking items, in blocking-list order."""
        return merge_blocking([self._blocking.get(query_id, [])])

    def n_blocking_items(self) -> int:
        return sum(len(items) for items in self._blocking.values())
