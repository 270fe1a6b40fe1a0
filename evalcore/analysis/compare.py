"""Comparing runs: per-query deltas, paired significance, a results table.

A comparison never replaces a run's score: each run's score stays the contract's
aggregate. A paired test needs both runs' values on the same queries, so it is computed
**only on the queries where both runs have the metric available**, and every
:class:`MetricComparison` says on how many and why the others were excluded; its
``mean_delta`` is the mean difference on those paired queries, labelled as such.

Deltas are ``run - reference run``: every run against the baseline (``mode="baseline"``)
or every pair ``(later run, earlier run)`` (``mode="pairwise"``). Significance marks in
the :class:`ResultsTable` follow ranx: each run gets a letter and a cell carries the
letters of the runs it is significantly *higher* than, after correcting the p-values per
metric over the table's comparisons (Holm-Bonferroni by default) at threshold ``alpha``.
"""

from collections import Counter
from collections.abc import Mapping, Sequence
from itertools import combinations
from string import ascii_lowercase
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from evalcore.analysis.stats.correction import CORRECTION_LABELS, Correction, adjust_p_values
from evalcore.analysis.stats.significance import (
    DEFAULT_PERMUTATIONS,
    DEFAULT_SEED,
    TEST_LABELS,
    SignificanceResult,
    TestName,
    paired_tests,
)
from evalcore.contract.frozen import FrozenModel
from evalcore.contract.query_order import natural_key
from evalcore.contract.results import (
    AGGREGATE_LABELS,
    METRIC_LABELS,
    METRICS,
    AggregateValue,
    EvaluationReport,
    MetricName,
    MetricValue,
)

#: Exclusion reasons that are not metric reason codes.
NOT_IN_RUN = "not_in_run"
DIFFERENT_K = "different_k"
ComparisonMode = Literal["baseline", "pairwise"]


class ComparisonSettings(BaseModel):
    """How runs are compared: which pairs, which test marks the table, at what threshold."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    metrics: tuple[MetricName, ...] = METRICS
    mode: ComparisonMode = "baseline"
    test: TestName = "randomization"
    alpha: float = Field(default=0.05, gt=0, lt=1)
    correction: Correction = "holm"
    permutations: int = Field(default=DEFAULT_PERMUTATIONS, ge=1)
    seed: int = DEFAULT_SEED


class ExclusionCount(FrozenModel):
    """How many excluded queries had ``reason`` in ``side`` (a run's name, or "both runs")."""

    reason: str
    side: str
    n: int


class ExcludedQuery(FrozenModel):
    """A query left out of a paired comparison, with each run's reasons."""

    query_id: str
    reasons_a: list[str]
    reasons_b: list[str]


class MetricComparison(FrozenModel):
    """Run ``run_a`` against run ``run_b`` on one metric, on the queries both have."""

    #: A section-7 key (``ndcg``) or a catalogue measure's canonical name (``nDCG@10``).
    metric: str
    label: str
    run_a: str
    run_b: str
    n_queries: int
    n_paired: int
    n_excluded: int
    exclusions: list[ExclusionCount]
    excluded: list[ExcludedQuery]
    #: The paired queries, and ``value_a - value_b`` on each.
    query_ids: list[str]
    deltas: list[float]
    #: Mean of ``deltas``: a difference on the paired subset, never a run's score.
    mean_delta: float | None
    tests: dict[str, SignificanceResult]
    summary: str
    #: Said wherever the tests are shown when queries were left out: the paired subset is
    #: selected by judging completeness and can be biased (None when none was left out).
    selection_note: str | None = None


class TableCell(FrozenModel):
    """One run's aggregate for one metric, as the contract gives it, with marks."""

    aggregate: AggregateValue
    text: str
    #: Letters of the runs this run is significantly higher than.
    marks: list[str]


class TableRow(FrozenModel):
    run: str
    letter: str
    cells: dict[str, TableCell]


class ResultsTable(FrozenModel):
    """Rows = runs, columns = metrics, like a paper's results table."""

    metrics: list[MetricName]
    column_labels: dict[str, str]
    rows: list[TableRow]
    legend: str


class RunComparison(FrozenModel):
    """Every metric comparison of a set of runs, and the results table."""

    runs: list[str]
    mode: ComparisonMode
    baseline: str | None
    test: TestName
    alpha: float
    correction: Correction
    permutations: int
    seed: int
    comparisons: list[MetricComparison]
    #: Adjusted p-values of ``test``, parallel to ``comparisons`` (None: not computable).
    adjusted_p_values: list[float | None]
    table: ResultsTable

    def comparison(self, metric: str, run_a: str, run_b: str) -> MetricComparison:
        """The comparison of ``run_a`` against ``run_b`` on ``metric``."""
        for item in self.comparisons:
            if (item.metric, item.run_a, item.run_b) == (metric, run_a, run_b):
                return item
        raise KeyError(f"no comparison of {run_a!r} against {run_b!r} on {metric!r}")


def cutoff_label(metric: MetricName, reports: Sequence[EvaluationReport], *, aggregate: bool) -> str:
    """The readable metric name, e.g. ``nDCG@10``; ``@k`` when the cutoffs differ."""
    return metric_label(metric, {q.k for report in reports for q in report.queries},
                        aggregate=aggregate)


def metric_label(metric: MetricName, ks: set[int], *, aggregate: bool) -> str:
    """:func:`cutoff_label` given the cutoffs ``ks`` of the runs' queries."""
    k = str(next(iter(ks))) if len(ks) == 1 else "k"
    if metric not in METRIC_LABELS:  # a catalogue measure: its canonical name is its label
        return metric
    template = AGGREGATE_LABELS[metric] if aggregate else METRIC_LABELS[metric]
    return template.format(k=k)


def compare_metric(
    metric: MetricName,
    run_a: str,
    report_a: EvaluationReport,
    run_b: str,
    report_b: EvaluationReport,
    *,
    permutations: int = DEFAULT_PERMUTATIONS,
    seed: int = DEFAULT_SEED,
) -> MetricComparison:
    """Per-query deltas and both paired tests of ``run_a - run_b`` on ``metric``.

    Pairs only the queries present in both runs, at the same ``k``, where
    both runs have the metric available; every other query is excluded and
    counted by reason and side.
    """
    label = cutoff_label(metric, [report_a, report_b], aggregate=False)
    by_a = {q.query_id: q for q in report_a.queries}
    by_b = {q.query_id: q for q in report_b.queries}
    query_ids = sorted(by_a.keys() | by_b.keys(), key=natural_key)
    paired: list[str] = []
    values_a: list[float] = []
    values_b: list[float] = []
    excluded: list[ExcludedQuery] = []
    for query_id in query_ids:
        qa, qb = by_a.get(query_id), by_b.get(query_id)
        reasons_a = _reasons(None if qa is None else qa.metrics.get(metric))
        reasons_b = _reasons(None if qb is None else qb.metrics.get(metric))
        if qa is not None and qb is not None and qa.k != qb.k:
            reasons_a, reasons_b = reasons_a + [DIFFERENT_K], reasons_b + [DIFFERENT_K]
        if reasons_a or reasons_b:
            excluded.append(ExcludedQuery.model_construct(
                query_id=query_id, reasons_a=reasons_a, reasons_b=reasons_b))
            continue
        paired.append(query_id)
        values_a.append(float(qa.metrics[metric].value))  # type: ignore[union-attr,arg-type]
        values_b.append(float(qb.metrics[metric].value))  # type: ignore[union-attr,arg-type]
    return metric_comparison(metric, label, run_a, run_b, len(query_ids), paired,
                             np.asarray(values_a), np.asarray(values_b), excluded,
                             permutations=permutations, seed=seed)


def metric_comparison(
    metric: MetricName,
    label: str,
    run_a: str,
    run_b: str,
    n_queries: int,
    paired: list[str],
    a: np.ndarray,
    b: np.ndarray,
    excluded: list[ExcludedQuery],
    *,
    permutations: int = DEFAULT_PERMUTATIONS,
    seed: int = DEFAULT_SEED,
) -> MetricComparison:
    """:func:`compare_metric`'s result once the queries are sorted: the ``paired`` ones
    with both runs' values (``a``, ``b``: float64, in ``paired`` order) and the
    ``excluded`` ones with their reasons, of ``n_queries`` in all."""
    deltas = (a - b).tolist()
    exclusions = _count_exclusions(excluded, run_a, run_b)
    return MetricComparison(
        metric=metric,
        label=label,
        run_a=run_a,
        run_b=run_b,
        n_queries=n_queries,
        n_paired=len(paired),
        n_excluded=len(excluded),
        exclusions=exclusions,
        excluded=excluded,
        query_ids=paired,
        deltas=deltas,
        mean_delta=float(np.mean(a - b)) if paired else None,
        tests=paired_tests(a, b, permutations=permutations, seed=seed),
        summary=_summary(label, n_queries, len(paired), len(excluded), exclusions),
        selection_note=selection_note(n_queries, len(excluded)),
    )


def selection_note(n_queries: int, n_excluded: int) -> str | None:
    """The caveat every display of a paired test carries when queries were left out."""
    if not n_excluded:
        return None
    return (
        f"{n_excluded} of {n_queries} queries left out: the paired queries are those that "
        "happen to be fully judged, a subset selected by judging completeness that can be "
        "biased; what the evidence decides over all queries is the decided-comparison verdict"
    )


def _reasons(value: MetricValue | None) -> list[str]:
    if value is None:
        return [NOT_IN_RUN]
    if value.available:
        return []
    return list(value.reasons) or ["unavailable"]


def _count_exclusions(
    excluded: Sequence[ExcludedQuery], run_a: str, run_b: str
) -> list[ExclusionCount]:
    counts: Counter[tuple[str, str]] = Counter()
    # Queries share a few combinations of reasons: each combination is counted once.
    combinations = Counter((tuple(q.reasons_a), tuple(q.reasons_b)) for q in excluded)
    for (reasons_a, reasons_b), n in combinations.items():
        in_a, in_b = set(reasons_a), set(reasons_b)
        for reason in in_a | in_b:
            side = "both runs" if reason in in_a and reason in in_b else (
                f"run {run_a}" if reason in in_a else f"run {run_b}"
            )
            counts[(reason, side)] += n
    return [
        ExclusionCount(reason=reason, side=side, n=n)
        for (reason, side), n in sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    ]


def _summary(
    label: str, n_queries: int, n_paired: int, n_excluded: int, exclusions: list[ExclusionCount]
) -> str:
    text = f"computed on {n_paired} of {n_queries} queries where both runs have {label}"
    if n_excluded == 0:
        return text
    parts = ", ".join(f"{item.n} {item.reason} in {item.side}" for item in exclusions)
    text += f"; {n_excluded} excluded: {parts}"
    if sum(item.n for item in exclusions) > n_excluded:
        text += " (a query can have several reasons)"
    return text


def compare_runs(
    reports: Mapping[str, EvaluationReport],
    *,
    metrics: Sequence[MetricName] = METRICS,
    mode: ComparisonMode = "baseline",
    baseline: str | None = None,
    test: TestName = "randomization",
    alpha: float = 0.05,
    correction: Correction = "holm",
    permutations: int = DEFAULT_PERMUTATIONS,
    seed: int = DEFAULT_SEED,
) -> RunComparison:
    """Compare two or more runs' :class:`EvaluationReport` over the same queries.

    ``reports`` maps run name to report, in table order. ``test`` chooses
    which test drives the table's marks (both are always reported).
    """
    names = list(reports)
    if len(names) < 2:
        raise ValueError(f"a comparison needs at least two runs, got {names}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie strictly between 0 and 1, got {alpha}")
    if mode == "baseline":
        base = baseline if baseline is not None else names[0]
        if base not in reports:
            raise ValueError(f"baseline {base!r} is not one of the runs {names}")
        pairs = [(name, base) for name in names if name != base]
    elif mode == "pairwise":
        base = None
        pairs = [(later, earlier) for earlier, later in combinations(names, 2)]
    else:
        raise ValueError(f"unknown comparison mode {mode!r}; use baseline or pairwise")

    comparisons: list[MetricComparison] = []
    adjusted: list[float | None] = []
    for metric in metrics:
        block = [
            compare_metric(
                metric, a, reports[a], b, reports[b], permutations=permutations, seed=seed
            )
            for a, b in pairs
        ]
        comparisons.extend(block)
        adjusted.extend(adjust_p_values([c.tests[test].p_value for c in block], correction))
    settings = ComparisonSettings(metrics=tuple(metrics), mode=mode, test=test, alpha=alpha,
                                  correction=correction, permutations=permutations, seed=seed)
    return RunComparison(
        runs=names,
        baseline=base,
        comparisons=comparisons,
        adjusted_p_values=adjusted,
        table=_table(reports, comparisons, adjusted, settings, base),
        **settings.model_dump(exclude={"metrics"}),
    )


def aggregate_text(value: AggregateValue) -> str:
    """A table cell: the mean, or "unavailable (13 of 50 missing)"; never a subset mean."""
    if value.available and value.value is not None:
        return f"{value.value:.4f}"
    if value.n_queries == 0:
        return "unavailable (no queries)"
    return f"unavailable ({value.n_missing} of {value.n_queries} missing)"


def _table(
    reports: Mapping[str, EvaluationReport],
    comparisons: Sequence[MetricComparison],
    adjusted: Sequence[float | None],
    settings: ComparisonSettings,
    baseline: str | None,
) -> ResultsTable:
    metrics, alpha = settings.metrics, settings.alpha
    names = list(reports)
    letters = {name: _letter(i) for i, name in enumerate(names)}
    marks: dict[tuple[str, str], list[str]] = {}
    for item, p in zip(comparisons, adjusted, strict=True):
        if p is None or p >= alpha or not item.mean_delta:
            continue
        higher, lower = (item.run_a, item.run_b) if item.mean_delta > 0 else (item.run_b, item.run_a)
        marks.setdefault((higher, item.metric), []).append(letters[lower])
    rows = []
    for name in names:
        cells = {}
        for metric in metrics:
            if metric not in reports[name].aggregates:
                raise ValueError(f"run {name!r} has no aggregate for {metric!r}")
            value = reports[name].aggregates[metric]
            cells[metric] = TableCell(
                aggregate=value,
                text=aggregate_text(value),
                marks=sorted(marks.get((name, metric), [])),
            )
        rows.append(TableRow(run=name, letter=letters[name], cells=cells))
    scope = (
        f"each run against the baseline {baseline!r}"
        if settings.mode == "baseline"
        else "every pair of runs"
    )
    legend = (
        f"Each cell is the run's aggregate over all its queries; 'unavailable' means some "
        f"queries lack the metric (no mean of the rest is shown). A superscript letter marks "
        f"a significant difference: the run is higher than the run with that letter "
        f"({TEST_LABELS[settings.test]}, two-sided, p < {alpha} after "
        f"{CORRECTION_LABELS[settings.correction]} "
        f"per metric over {scope}). Each test is computed only on the queries where both "
        f"runs have the metric available; the number of paired queries is stated with "
        f"each comparison."
    )
    column_labels = {
        metric: cutoff_label(metric, list(reports.values()), aggregate=True) for metric in metrics
    }
    return ResultsTable(
        metrics=list(metrics), column_labels=column_labels, rows=rows, legend=legend
    )


def _letter(index: int) -> str:
    letters = ascii_lowercase
    if index < len(letters):
        return letters[index]
    return letters[index // len(letters) - 1] + letters[index % len(letters)]
