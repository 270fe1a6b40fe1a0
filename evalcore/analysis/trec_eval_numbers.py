"""The trec_eval-compatible numbers of a compared pair: each run's means with unjudged
units counted as non-relevant (never evidence, never beside the verdicts).

:func:`trec_eval_compat` gives exactly what ``evalcore evaluate --trec-eval`` gives on the
exported qrels and run (trec_eval's query scope, each population complete, a unit in
conflict left out of the qrels). It computes from the columns' unit codes with numpy
(:func:`_compat_side_coded`), or, where the codes cannot hold what trec_eval input must be
judged on (a unit ranked twice, an empty id), through ``evalcore.evaluate``'s dicts
(:func:`_compat_side_from_dicts`); the two are tested equal.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from evalcore.analysis.pair_units import NamedCodes
from evalcore.api.evaluate import evaluate as evaluate_trec
from evalcore.compute.batch import CONFLICT_BASE, ObservationBatch
from evalcore.compute.evaluate import compute, packing_depth
from evalcore.contract.evaluation_protocol import EvalProtocol
from evalcore.contract.frozen import FrozenModel
from evalcore.contract.measures import Measure
from evalcore.io.errors import InputErrors
from evalcore.io.trec_eval_scope import scope_of_ids
from evalcore.store.observations import RunColumns

#: The name of the compatibility numbers, wherever they are shown.
COMPAT_LABEL = "unjudged counted as non-relevant (trec_eval compatibility)"
#: The note when trec_eval would have no query to evaluate.
_NOTHING = "no labeled query with results: trec_eval has nothing to evaluate"


class TrecEvalCompat(FrozenModel):
    """One measure's means with unjudged units counted as non-relevant (never evidence)."""

    measure: str
    value_a: float | None
    value_b: float | None
    #: ``value_a - value_b`` (None when a side is missing).
    difference: float | None
    n_queries_a: int
    n_queries_b: int


def trec_eval_compat(
    columns: Sequence[RunColumns],
    measures: Sequence[Measure],
    relevance_threshold: int,
    gain: str,
) -> tuple[list[TrecEvalCompat], list[str]]:
    """Both runs' means as ``evalcore evaluate --trec-eval`` computes them on the runs and
    labels exported as TREC files (see the module docstring), and its notes."""
    names = [m.canonical for m in measures]
    means: list[dict[str, tuple[float | None, int]]] = []
    notes: list[str] = []
    protocol = EvalProtocol(trec_eval=True, relevance_threshold=relevance_threshold,
                            gain=gain)  # type: ignore[arg-type]
    for side in columns:
        found = _compat_side_coded(side, measures, protocol)
        if found is None:
            found = _compat_side_from_dicts(side, names, relevance_threshold, gain)
        side_means, side_notes = found
        means.append(side_means)
        notes.extend(side_notes)
    rows = []
    for name in names:
        (va, na), (vb, nb) = (m.get(name, (None, 0)) for m in means)
        rows.append(TrecEvalCompat(
            measure=name, value_a=va, value_b=vb, n_queries_a=na, n_queries_b=nb,
            difference=None if va is None or vb is None else va - vb,
        ))
    return rows, list(dict.fromkeys(notes))


_Means = tuple[dict[str, tuple[float | None, int]], list[str]]


def _means(batch: ObservationBatch, measures: Sequence[Measure], protocol: EvalProtocol,
           notes: list[str]) -> _Means:
    aggregates = compute(batch, protocol, list(measures)).aggregates()
    return ({m.canonical: (aggregates[m.canonical].value, aggregates[m.canonical].n_queries)
             for m in measures}, notes)


def _compat_side_coded(side: RunColumns, measures: Sequence[Measure],
                       protocol: EvalProtocol) -> _Means | None:
    """One run's compatibility means from the unit codes the columns hold, with numpy: the
    qrels are the labels without the units in conflict, the queries in trec_eval's scope
    taken from both (each population complete, in the columns' natural order), packed with
    :meth:`ObservationBatch.from_unit_codes`. None when the dict path must judge the input
    (a repeated unit, an empty id)."""
    ranking, labels = side.coded, side.coded_labels
    query_ids = side.query_ids
    n = len(query_ids)
    rank_len = np.diff(ranking.offsets)
    kept = labels.gain < CONFLICT_BASE  # a unit in conflict is not in the qrels
    label_query = np.repeat(np.arange(n, dtype=np.int64), np.diff(labels.offsets))
    n_kept = np.bincount(label_query[kept], minlength=n)
    judged, ranked = n_kept > 0, rank_len > 0
    if not judged.any() or not ranked.any():
        return {}, [_NOTHING]
    if _empty_id(side, judged | ranked) or _repeats_a_unit(ranking.offsets, ranking.codes):
        return None
    judged_ids = [query_ids[i] for i in np.flatnonzero(judged).tolist()]
    ranked_ids = [query_ids[i] for i in np.flatnonzero(ranked).tolist()]
    scope = scope_of_ids(set(judged_ids), set(ranked_ids), all_queries=False)
    rows = np.flatnonzero(judged & ranked)  # in natural order, as the columns' queries
    rank_offsets, rank_at = _csr_rows(ranking.offsets, rows)
    label_offsets, label_at = _csr_rows(np.concatenate(([0], np.cumsum(n_kept))), rows)
    kept_at = np.flatnonzero(kept)[label_at]
    depth = packing_depth(measures)
    # The labels' ids, named only if read (only a label in conflict is, and none is left).
    label_ids = NamedCodes(kept_at, lambda at: [labels.ids[i] for i in at.tolist()])
    batch = ObservationBatch.from_unit_codes(
        [query_ids[i] for i in rows.tolist()], depth, rank_offsets, ranking.codes[rank_at],
        label_offsets, labels.units[kept_at], labels.gain[kept_at], label_ids,
        np.ones(rows.size, dtype=bool), ranking.names, protocol=protocol, min_depth=depth)
    return _means(batch, measures, protocol, scope.notes)


def _empty_id(side: RunColumns, used: np.ndarray) -> bool:
    """Whether the query id ``""`` is judged or ranked, or a unit id ``""`` is ranked or
    labeled (not in conflict): trec_eval input cannot hold it."""
    query_ids = side.query_ids
    if "" in query_ids and bool(used[query_ids.index("")]):
        return True
    if any(type(units.get("", None)) is int for units in side.gains):
        return True
    ranking = side.coded
    empty = ranking.names.code_of("")
    return empty is not None and bool(np.any(ranking.codes == empty))


def _repeats_a_unit(offsets: np.ndarray, codes: np.ndarray) -> bool:
    """Whether some ranking (``codes[offsets[i]:offsets[i + 1]]``) holds a code twice."""
    if codes.size < 2:
        return False
    # (ranking position, code) pairs as one integer: positions, not query ids, are sorted
    ranking = np.repeat(np.arange(offsets.size - 1, dtype=np.int64), np.diff(offsets))
    key = np.sort(ranking * (int(codes.max()) + 1) + codes.astype(np.int64))
    return bool(np.any(key[1:] == key[:-1]))


def _csr_rows(offsets: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The offsets of the segments ``rows`` of ``offsets`` taken in that order, and the
    flat indices of their items."""
    lengths = np.diff(offsets)[rows]
    out = np.zeros(rows.size + 1, dtype=np.int64)
    np.cumsum(lengths, out=out[1:])
    at = np.arange(int(out[-1]), dtype=np.int64) + np.repeat(offsets[:-1][rows] - out[:-1],
                                                             lengths)
    return out, at


def _trec_input(
    side: RunColumns,
) -> tuple[dict[str, Mapping[str, int | tuple[int, ...]]], dict[str, Sequence[str]]]:
    """One run's trec_eval input, as the exported TREC files hold it: the qrels (each
    query's labels without the units in conflict, queries left with none dropped) and the
    non-empty rankings."""
    judged: dict[str, Mapping[str, int | tuple[int, ...]]] = {}
    for q, units in zip(side.query_ids, side.gains, strict=True):
        if tuple in set(map(type, units.values())):  # a unit in conflict: not in the qrels
            units = {u: g for u, g in units.items() if type(g) is int}
        if units:
            judged[q] = units
    ranked = {q: r for q, r in zip(side.query_ids, side.returned_ids, strict=True) if r}
    return judged, ranked


def _compat_side_from_dicts(side: RunColumns, names: list[str],
                            relevance_threshold: int, gain: str) -> _Means:
    """One run's compatibility means through the nested dicts of ``evalcore.evaluate``, which
    judges what the codes cannot hold as trec_eval input."""
    qrels, ranked = _trec_input(side)
    run = {q: {u: float(len(r) - i) for i, u in enumerate(r)} for q, r in ranked.items()}
    try:
        result = evaluate_trec(qrels, run, measures=names, trec_eval=True,
                               relevance_threshold=relevance_threshold, gain=gain)
    except (InputErrors, ValueError) as exc:  # e.g. an id trec_eval's format cannot hold
        return {}, [f"not computable as trec_eval input: {exc}"]
    report = result.report
    return ({n: (report.aggregates[n].value, report.aggregates[n].n_queries) for n in names},
            list(report.diagnostics.notes))
