"""``evalcore.evaluate``: one call from qrels and a run to an :class:`EvaluationResult`.

    >>> import evalcore
    >>> result = evalcore.evaluate("qrels.txt", "run.txt", measures=["nDCG@10", "P@5"])
    >>> result.aggregates["P@5"]          # a float, or Unavailable(...) with why and bounds

``qrels`` and ``run`` may each be a path to a TREC file, a nested dict
(``{query_id: {doc_id: gain}}`` / ``{query_id: {doc_id: score}}``, as
pytrec_eval and ir_measures take them), a pandas DataFrame or a pyarrow Table with
columns ``query_id, doc_id, relevance`` / ``query_id, doc_id, score``
(:mod:`evalcore.io.trec_mappings` lists the other names accepted); ``qrels`` may
also be an :class:`evalcore.Qrels`, prepared once for many runs. Runs are ranked
as trec_eval ranks them (score descending, doc ID descending) and the tied
pairs are reported in ``result.report.diagnostics``.

``measures`` names measures of the catalogue (contract section 10), as text
(``"nDCG@10"``, ``"P(rel=2)@5"``) or :class:`~evalcore.contract.measures.Measure`;
without it the section-7 set (precision, recall, ndcg, reciprocal_rank) is
computed at ``k``. ``k`` is the cutoff of measures named without ``@k``; it
defaults to the deepest named cutoff.

Evidence policy: a number is given only when the evidence is complete.
``complete=True`` declares every qrels population complete (recall, nDCG and
AP need it); ``unjudged_as_nonrelevant=True`` counts unlabeled returned units
as non-relevant; ``trec_eval=True`` is trec_eval's behaviour in one switch
(see :mod:`evalcore.api.inputs`), and ``trec_eval_all_queries=True`` adds its
``-c``. Every choice is recorded in ``result.report.protocol``.

A list of :class:`~evalcore.contract.observation.Observation` as the first
argument is evaluated by the metric computer as before
(:func:`evalcore.compute.evaluate.evaluate`), which returns the
:class:`~evalcore.contract.results.EvaluationReport` itself.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from numbers import Integral
from typing import Any, overload

import numpy as np

from evalcore.api.inputs import TrecSource, checked_gain_map, trec_input
from evalcore.api.result import EvaluationResult
from evalcore.compute import evaluate as compute
from evalcore.contract.evaluation_protocol import EvalProtocol, GainMode
from evalcore.contract.limits import MAX_K
from evalcore.contract.measures import Measure, parse_measure
from evalcore.contract.observation import Observation
from evalcore.contract.results import Diagnostics, EvaluationReport

MeasureNames = str | Measure | Iterable[str | Measure]


@overload
def evaluate(
    qrels: Sequence[Observation],
    run: EvalProtocol | None = None,
    measures: MeasureNames | None = None,
    **options: Any,
) -> EvaluationReport: ...


@overload
def evaluate(
    qrels: TrecSource,
    run: TrecSource,
    measures: MeasureNames | None = None,
    **options: Any,
) -> EvaluationResult: ...


def evaluate(
    qrels: Any,
    run: Any = None,
    measures: MeasureNames | None = None,
    *,
    k: int | None = None,
    trec_eval: bool = False,
    trec_eval_all_queries: bool = False,
    complete: bool = False,
    unjudged_as_nonrelevant: bool = False,
    relevance_threshold: int = 1,
    gain: GainMode = "linear",
    gain_map: Mapping[int, int] | None = None,
    protocol: EvalProtocol | None = None,
    diagnostics: Diagnostics | None = None,
) -> EvaluationResult | EvaluationReport:
    """Evaluate ``run`` against ``qrels`` (see the module docstring).

    Raises :class:`~evalcore.io.errors.InputErrors` listing every problem of
    the inputs, :class:`~evalcore.contract.measures.UnknownMeasure` for a name
    that does not parse, and ``ValueError`` for options that do not fit together.
    """
    parsed = _measures(measures)
    gain_map = checked_gain_map(gain_map)
    if isinstance(relevance_threshold, Integral) and not isinstance(relevance_threshold, bool):
        relevance_threshold = int(relevance_threshold)  # a numpy integer is the integer it holds
    chosen = {
        name: value
        for name, value, default in (
            ("relevance_threshold", relevance_threshold, 1),
            ("gain", gain, "linear"),
            ("unjudged_as_nonrelevant", unjudged_as_nonrelevant, False),
            ("trec_eval", trec_eval, False),
        )
        if value != default
    }
    if _are_observations(qrels):
        if run is not None and not isinstance(run, EvalProtocol):
            raise ValueError(
                "with a list of observations, the second argument is the EvalProtocol "
                f"(observations carry their own labels), got {type(run).__name__}"
            )
        file_only = [n for n, v in (("k", k), ("gain_map", gain_map)) if v is not None]
        file_only += [
            n
            for n, v in (("complete", complete), ("trec_eval_all_queries", trec_eval_all_queries))
            if v
        ]
        if file_only:
            raise ValueError(
                f"{', '.join(file_only)} apply to qrels and a run; observations carry their "
                "own k, gains and completeness"
            )
        protocol = _protocol(run or protocol, chosen)
        return compute.evaluate(qrels, protocol, measures=parsed, diagnostics=diagnostics)
    if run is None:
        raise ValueError(
            "evaluate(qrels, run, ...) needs a run: a path, a dict, a DataFrame or a pyarrow Table"
        )
    if trec_eval_all_queries and not trec_eval and not (protocol and protocol.trec_eval):
        raise ValueError("trec_eval_all_queries=True is trec_eval's -c: give trec_eval=True too")
    protocol = _protocol(protocol, chosen)
    if complete and not protocol.populations_declared_complete:  # printed: an assumption made
        protocol = protocol.model_copy(update={"populations_declared_complete": True})
    cutoff = _cutoff(k, parsed)
    source = trec_input(
        qrels,
        run,
        cutoff,
        complete=complete,
        protocol=protocol,
        all_queries=trec_eval_all_queries,
        gain_map=gain_map,
        min_depth=compute.packing_depth(parsed),
    )
    arrays = compute.compute(source.batch, protocol, parsed)
    return EvaluationResult(arrays, source.diagnostics)


def _protocol(protocol: EvalProtocol | None, chosen: dict[str, Any]) -> EvalProtocol:
    """The given protocol, or one made of the options; never both (one would be ignored)."""
    if protocol is None:
        return EvalProtocol(**chosen)
    if chosen:
        raise ValueError(
            f"give either protocol= or {', '.join(f'{n}=' for n in chosen)}, not both: "
            "the protocol already decides them"
        )
    return protocol


def _measures(measures: MeasureNames | None) -> tuple[Measure, ...] | None:
    if measures is None:
        return None
    if isinstance(measures, str | Measure):
        measures = [measures]
    out = tuple(m if isinstance(m, Measure) else parse_measure(m) for m in measures)
    if not out:
        raise ValueError("measures is empty: name at least one, e.g. measures=['nDCG@10']")
    return out


def _cutoff(k: int | None, measures: tuple[Measure, ...] | None) -> int:
    """The observations' k: given, or the deepest named cutoff."""
    if k is not None:
        if isinstance(k, bool | np.bool_) or not isinstance(k, Integral) or not 1 <= k <= MAX_K:
            raise ValueError(f"k must be an integer >= 1 and at most {MAX_K} (2^63 - 1), got {k!r}")
        return int(k)
    uncut = [str(m) for m in measures or () if m.k is None]
    if measures is None or uncut:
        named = f"measure {', '.join(uncut)} has no @k" if uncut else "no measures are named"
        raise ValueError(
            f"{named}: give k=N (the cutoff), or name measures with their cutoff, "
            "e.g. measures=['nDCG@10', 'P@5']"
        )
    return compute.packing_depth(measures)


def _are_observations(value: Any) -> bool:
    if isinstance(value, str | bytes | Mapping) or not isinstance(value, Sequence):
        return False
    return all(isinstance(o, Observation) for o in value)
