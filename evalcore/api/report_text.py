"""The section-7 JSON of TREC files, written from the computed arrays without the report models.

``evalcore evaluate --qrels F --run F`` (JSON out) prints what
:func:`trec_files_json` returns: the files read column by column
(:func:`~evalcore.io.trec_columnar.columnar_trec_input`), the arrays computed
(:func:`~evalcore.compute.evaluate.compute`) and, in the plain case, the JSON written
straight from them (:func:`plain_report_json`), so the command never imports
pydantic (a third of its start-up) nor builds the ~50,000 models of 10,000 queries
that it would only serialise. The bytes are those of
:func:`evalcore.api.result.report_json` of :meth:`BatchResult.to_report`
(``tests/api/test_report_text.py`` checks both paths against each other).

The plain case: every query valid, no returned duplicate, no unit in conflict, and
every number written as pydantic writes it (Python's ``repr``; pydantic writes floats
under 1e-4 without an exponent, so any such value leaves the case). Values may be
unavailable: the honest default (unjudged documents unknown) is written here too, with
each value's reasons, blocking doc IDs and bounds. Otherwise the same arrays are turned into the report models and
written by pydantic. When the columnar reader declines, :func:`trec_files_json`
returns None and the caller takes the general path (the careful reader, which
names every bad line).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from json.encoder import encode_basestring as _string
from os import PathLike
from typing import TYPE_CHECKING, Any

import numpy as np

from evalcore.compute.evaluate import (
    METRIC_REASON_LISTS,
    BatchResult,
    compute,
    packing_depth,
)
from evalcore.compute.measures.base import CONFLICT_BIT
from evalcore.contract.protocol_choices import ProtocolChoices
from evalcore.contract.report_shapes import aggregate_shape, metric_shape
from evalcore.io.trec import files_input

if TYPE_CHECKING:
    from evalcore.contract.measures import Measure

#: Floats pydantic and ``repr`` write alike: 0 and magnitudes from this up (``1e-05`` is
#: pydantic's ``0.00001``).
_SMALLEST_ALIKE = 1e-4


def trec_files_json(
    qrels: str | PathLike[str],
    run: str | PathLike[str],
    k: int,
    *,
    complete: bool,
    protocol: ProtocolChoices,
    all_queries: bool = False,
    gain_map: Mapping[int, int] | None = None,
    measures: Sequence[Measure] | None = None,
) -> str:
    """The report JSON of TREC files (as ``evalcore evaluate`` prints it, without the final
    line end); raises :class:`~evalcore.io.errors.InputErrors` naming every bad line."""
    parts = files_input(
        qrels,
        run,
        k,
        complete=complete,
        protocol=protocol,
        all_queries=all_queries,
        gain_map=gain_map,
        min_depth=packing_depth(measures),
    )
    result = compute(parts.batch, protocol, measures)
    text = plain_report_json(result, parts.tied_score_pairs, parts.notes)
    if text is not None:
        return text
    from evalcore.api.result import report_json
    from evalcore.contract.evaluation_protocol import EvalProtocol
    from evalcore.contract.results import Diagnostics

    model = replace(result, protocol=EvalProtocol.of(protocol))
    return report_json(
        model.to_report(Diagnostics(tied_score_pairs=parts.tied_score_pairs, notes=parts.notes))
    )


def plain_report_json(result: BatchResult, tied_score_pairs: int, notes: list[str]) -> str | None:
    """The report JSON of ``result`` in the plain case (module docstring), else None.
    ``result.protocol`` is a :class:`ProtocolChoices`.

    Each distinct available value is encoded once (``"name":{"status":"available",
    "value":v}``); an unavailable one is its reasons (one text per reason set), its
    blocking doc IDs and its bounds; a query's line is its id, k and those texts joined."""
    if not result.valid.all() or result.n_returned_duplicates or not result.metrics:
        return None
    columns: list[list[str]] = []
    for name in result.metrics:
        column = _metric_texts(result, name)
        if column is None:
            return None
        columns.append(column)
    aggregates = result.aggregate_fields()
    for f in aggregates.values():
        numbers = [x for x in (f["value"], f.get("lower"), f.get("upper")) if x is not None]
        if numbers and not _alike(np.array(numbers, dtype=np.float64)):
            return None
    batch = result.batch
    # A query's fields in QueryResult's order; valid, no reasons, no duplicates (above).
    queries = ",".join(
        f'{{"query_id":{_string(qid)},"k":{k},"valid":true,"reasons":[],"duplicates":[],'
        f'"metrics":{{{metrics}}}}}'
        for qid, k, metrics in zip(
            batch.query_ids,
            batch.k.tolist(),
            map(",".join, zip(*columns, strict=True)),
            strict=True,
        )
    )
    aggregates_text = _dumps({name: aggregate_shape(f) for name, f in aggregates.items()})
    diagnostics = _dumps(
        {
            "tied_score_pairs": tied_score_pairs,
            "returned_duplicates": result.n_returned_duplicates,
            "notes": list(notes),
        }
    )
    return (
        f'{{"protocol":{_dumps(result.protocol.reported())},"queries":[{queries}],'
        f'"aggregates":{aggregates_text},"diagnostics":{diagnostics}}}'
    )


def _metric_texts(result: BatchResult, name: str) -> list[str] | None:
    """Every query's ``"name":{...}`` text of one measure, or None when one needs the models
    (a unit in conflict, a number ``repr`` and pydantic write differently)."""
    m = result.metrics[name]
    available = result.available(name)
    if (m.reason_bits[~available] & CONFLICT_BIT).any():
        return None
    lower, upper = result.bounds(name)
    bounded = ~available & ~np.isnan(lower) & ~np.isnan(upper)
    if not (_alike(m.value[available]) and _alike(lower[bounded]) and _alike(upper[bounded])):
        return None
    if m.residual is not None and not _alike(m.residual):
        return None
    residual = [None] * len(m.value) if m.residual is None else m.residual.tolist()
    key = _dumps(name) + ":"
    open_rows = np.flatnonzero(~available)
    blocking = result.blocking_ids(name) if open_rows.size else {}
    reasons: dict[int, str] = {}
    texts: dict[tuple[float, float | None], str] = {}
    column = []
    values, bits = m.value.tolist(), m.reason_bits.tolist()
    lows, highs, is_open = lower.tolist(), upper.tolist(), (~available).tolist()
    for q, (v, res) in enumerate(zip(values, residual, strict=True)):
        if not is_open[q]:
            text = texts.get((v, res))
            if text is None:
                text = texts[v, res] = key + _dumps(
                    metric_shape("available", v, (), (), (), None, None, res)
                )
            column.append(text)
            continue
        b = bits[q]
        why = reasons.get(b)
        if why is None:
            why = reasons[b] = _dumps(METRIC_REASON_LISTS[b])
        ids = blocking.get(q)
        text = (
            f'{key}{{"status":"unavailable","value":null,"reasons":{why},'
            f'"blocking_ids":[{",".join(map(_string, ids)) if ids else ""}]'
        )
        lo, hi = lows[q], highs[q]
        if lo == lo and hi == hi:  # not NaN: bounded
            text += f',"lower":{lo!r},"upper":{hi!r}'  # finite (checked): as JSON writes it
        if res is not None:
            text += f',"residual":{res!r}'
        column.append(text + "}")
    return column


def _dumps(value: Any) -> str:
    """JSON as pydantic writes it: compact, non-ASCII text as it is."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _alike(values: np.ndarray) -> bool:
    """Whether every value is finite and written alike by pydantic and ``repr``."""
    magnitude = np.abs(values)
    return bool(
        np.isfinite(values).all() and not ((magnitude < _SMALLEST_ALIKE) & (magnitude > 0)).any()
    )
