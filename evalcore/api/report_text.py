"""The section-7 JSON of an evaluation, written from the metric computer's arrays.

One writer for every evaluation's JSON: ``evalcore evaluate`` (the honest default and
``--trec-eval`` alike; TREC files, observations or a store) and
``EvaluationResult.to_json()``. It builds no report model: the inputs were checked where
they were read and packed, so writing is formatting, and a report of 10,000 queries
costs no 50,000 model objects (nor, from TREC files, the import of pydantic). The
shapes are :mod:`evalcore.contract.report_shapes`, the report models' own; numbers are
written as pydantic writes them (:func:`number`), so the bytes are those of the models'
JSON (:func:`evalcore.api.result.report_json`; ``tests/api/test_report_text.py``
checks the two on random inputs).

Each distinct available value is written once (``"name":{"status":"available",
"value":v}``) and shared; an unavailable one is its reasons (one text per reason set),
its blocking unit IDs, the units in conflict, its bounds and RBP's residual.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from json.encoder import encode_basestring as _string
from os import PathLike
from typing import TYPE_CHECKING, Any

import numpy as np

from evalcore.compute.evaluate import BatchResult, compute, packing_depth
from evalcore.compute.measures.base import METRIC_REASON_LISTS
from evalcore.compute.validity import observation_reasons
from evalcore.contract.protocol_choices import ProtocolChoices
from evalcore.contract.report_shapes import aggregate_shape, metric_shape
from evalcore.io.trec import files_input

if TYPE_CHECKING:
    from evalcore.contract.evaluation_protocol import EvalProtocol
    from evalcore.contract.measures import Measure


def trec_files_json(
    qrels: str | PathLike[str],
    run: str | PathLike[str],
    k: int,
    *,
    complete: bool,
    protocol: ProtocolChoices,
    all_queries: bool = False,
    gain_map: Mapping[float, int] | None = None,
    measures: Sequence[Measure] | None = None,
) -> str:
    """The report JSON of TREC files (as ``evalcore evaluate`` prints it, without the final
    line end); raises :class:`~evalcore.io.errors.InputErrors` naming every bad line."""
    parts = files_input(
        qrels,
        run,
        k,
        complete=complete,
        protocol=protocol,  # type: ignore[arg-type]  # the plain choices: same fields
        all_queries=all_queries,
        gain_map=gain_map,
        min_depth=packing_depth(measures),
    )
    result = compute(parts.batch, protocol, measures)  # type: ignore[arg-type]
    return report_text(result, parts.tied_score_pairs, parts.notes)


def report_text(result: BatchResult, tied_score_pairs: int, notes: Sequence[str]) -> str:
    """The report JSON of ``result`` with the reader's facts (section 7, every case)."""
    batch = result.batch
    n = len(batch)
    names = list(result.metrics)
    keys = [_string(name) + ":" for name in names]
    listed: dict[str, Any] = {}  # the text of every blocking unit, made once
    columns = [
        _metric_texts(result, name, key, listed) for name, key in zip(names, keys, strict=True)
    ]
    obits = result.observation_bits.tolist()
    has_dup = (np.bincount(result.ranking.query[batch.pos_dup], minlength=n) > 0).tolist()
    rows = map(",".join, zip(*columns, strict=True)) if columns else iter([""] * n)
    queries = []
    for q, (qid, k, metrics) in enumerate(
        zip(batch.query_ids, batch.k.tolist(), rows, strict=True)
    ):
        valid, reasons = "true", "[]"
        if obits[q]:  # an invalid observation: every measure unavailable for its reasons
            valid, reasons = "false", _json(observation_reasons(obits[q]))
            invalid = (
                f'{{"status":"unavailable","value":null,"reasons":{reasons},"blocking_ids":[]}}'
            )
            metrics = ",".join(key + invalid for key in keys)
        duplicates = _duplicates(batch, q) if has_dup[q] else ""
        queries.append(
            f'{{"query_id":{_string(qid)},"k":{k},"valid":{valid},"reasons":{reasons},'
            f'"duplicates":[{duplicates}],"metrics":{{{metrics}}}}}'
        )
    aggregates = {name: aggregate_shape(f) for name, f in result.aggregate_fields().items()}
    diagnostics = {
        "tied_score_pairs": tied_score_pairs,
        "returned_duplicates": result.n_returned_duplicates,
        "notes": list(notes),
    }
    return (
        f'{{"protocol":{_json(_reported(result.protocol))},"queries":[{",".join(queries)}],'
        f'"aggregates":{_json(aggregates)},"diagnostics":{_json(diagnostics)}}}'
    )


def _reported(protocol: ProtocolChoices | EvalProtocol) -> dict[str, Any]:
    """The ``protocol`` object of the JSON (the model's fields are the plain choices')."""
    if not isinstance(protocol, ProtocolChoices):
        fields = dataclasses.fields(ProtocolChoices)
        protocol = ProtocolChoices(**{f.name: getattr(protocol, f.name) for f in fields})
    return protocol.reported()


def _metric_texts(result: BatchResult, name: str, key: str, listed: dict[str, Any]) -> list[str]:
    """Every query's ``"name":{...}`` text of one measure (an invalid query's is unused)."""
    m = result.metrics[name]
    available = result.available(name)
    lower, upper = result.bounds(name)
    open_rows = np.flatnonzero(~available & result.valid)
    blocking = _blocking_texts(result, name, listed) if open_rows.size else [""] * len(m.value)
    conflicts = result.conflict_ids(name) if open_rows.size else {}
    bounds: dict[tuple[float, float], str] = {}
    residual = [None] * len(m.value) if m.residual is None else m.residual.tolist()
    heads: dict[int, str] = {}  # per reason bits: the text up to the blocking IDs
    texts: dict[tuple[float, float | None], str] = {}
    column = []
    values, bits = m.value.tolist(), m.reason_bits.tolist()
    lows, highs, is_open = lower.tolist(), upper.tolist(), (~available).tolist()
    for q, (v, res) in enumerate(zip(values, residual, strict=True)):
        if not is_open[q]:
            text = texts.get((v, res))
            if text is None:
                shape = metric_shape("available", v, (), (), (), None, None, res)
                text = texts[v, res] = key + _json(shape)
            column.append(text)
            continue
        head = heads.get(bits[q])
        if head is None:
            why = _json(METRIC_REASON_LISTS[bits[q]])
            head = heads[bits[q]] = (
                f'{key}{{"status":"unavailable","value":null,"reasons":{why},"blocking_ids":['
            )
        text = head + blocking[q] + "]"
        if conflicts.get(q):
            text += f',"conflict_ids":{_json(conflicts[q])}'
        lo, hi = lows[q], highs[q]
        if lo == lo and hi == hi:  # not NaN: bounded
            pair = bounds.get((lo, hi))
            if pair is None:
                pair = bounds[lo, hi] = f',"lower":{number(lo)},"upper":{number(hi)}'
            text += pair
        if res is not None:
            text += f',"residual":{number(res)}'
        column.append(text + "}")
    return column


def _blocking_texts(result: BatchResult, name: str, listed: dict[str, Any]) -> list[str]:
    """Every query's ``blocking_ids`` of measure ``name`` as JSON list items: slices of one
    text of every unit of :meth:`~evalcore.compute.evaluate.BatchResult.blocking_units`
    (the same for every measure: made once, into ``listed``)."""
    units, starts, counts = result.blocking_units(name)
    if not listed:
        together = "".join(units)
        if len(_string(together)) == len(together) + 2:  # nothing escaped: as they are
            text, items, extra = '"' + '","'.join(units) + '",', units, 3  # (quotes, comma)
        else:
            items = list(map(_string, units))
            text, extra = ",".join(items) + ",", 1
        ends = np.zeros(len(items) + 1, dtype=np.int64)
        np.cumsum(np.fromiter(map(len, items), dtype=np.int64, count=len(items)), out=ends[1:])
        ends += np.arange(len(items) + 1) * extra
        listed.update(text=text, ends=ends)
    text, ends = listed["text"], listed["ends"]
    first = ends[starts[:-1]]
    last = np.maximum(ends[starts[:-1] + counts] - 1, first)  # (the last comma left out)
    return [text[a:b] for a, b in zip(first.tolist(), last.tolist(), strict=True)]


def _duplicates(batch: Any, q: int) -> str:
    """The ``duplicates`` of query ``q``: every returned duplicate, in position order."""
    lo, hi = int(batch.pos_offsets[q]), int(batch.pos_offsets[q + 1])
    at = np.flatnonzero(batch.pos_dup[lo:hi]).tolist()
    units = batch.top_units[q]
    first = batch.dup_first[lo:hi].tolist()
    return ",".join(
        f'{{"id":{_string(units[j])},"position":{j + 1},"first_position":{first[j]}}}' for j in at
    )


def number(x: float) -> str:
    """A float as pydantic writes it in JSON: Python's ``repr``, except that a decimal
    exponent of -5 is written out (``0.00005``) and others lose their padding (``1e-7``)."""
    text = repr(x)
    if "e-" not in text:
        return text
    mantissa, exponent = text.split("e-")
    if exponent == "05":
        sign = "-" if mantissa.startswith("-") else ""
        return sign + "0.0000" + mantissa.lstrip("-").replace(".", "")
    return f"{mantissa}e-{int(exponent)}"


def _json(value: Any) -> str:
    """Compact JSON as pydantic writes it: non-ASCII text as it is, numbers by :func:`number`."""
    if isinstance(value, str):
        return _string(value)
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return number(value)
    if isinstance(value, Mapping):
        return "{" + ",".join(f"{_string(k)}:{_json(v)}" for k, v in value.items()) + "}"
    return "[" + ",".join(map(_json, value)) + "]"
