"""Qrels and runs held in memory: the nested dicts and DataFrames other IR libraries use.

* nested dicts, as pytrec_eval and ir_measures take them: qrels
  ``{query_id: {doc_id: gain}}``, run ``{query_id: {doc_id: score}}``;
* a pandas DataFrame with one row per judgment or result: qrels columns
  ``query_id, doc_id, relevance`` and run columns ``query_id, doc_id, score``
  (ir_measures' names; ``qid``/``q_id`` and ``docno``/``docid`` and, for qrels,
  ``label`` are accepted too).

The rules are the TREC files' rules (:mod:`evalcore.io.trec`): IDs are
non-empty strings (integers are taken as their decimal text, as a TREC file
would spell them); a gain is an integer, mapped by ``gain_map`` and then in
0..4 (``True``, ``2.5``, ``"3"`` are refused); a score is a finite number.
Runs are ranked as trec_eval ranks them (score descending, doc ID
descending) and tied pairs are counted. Every error is reported, with where it
is (``query 'q1' doc 'd3'`` for a dict, the row number for a DataFrame), in
one :class:`~evalcore.io.errors.InputErrors`. pandas is never imported here:
a DataFrame is recognised by its shape.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from numbers import Integral, Real
from typing import Any

import numpy as np

from evalcore.contract.gains import MAX_GAIN
from evalcore.io.errors import ErrorLog, InputError, InputErrors
from evalcore.io.trec import Qrels, TrecRun, qrels_from_rows, run_from_rows

_QUERY_COLUMNS = ("query_id", "qid", "q_id")
_DOC_COLUMNS = ("doc_id", "docno", "docid")
_GAIN_COLUMNS = ("relevance", "label")
_SCORE_COLUMNS = ("score",)
_GAINS = f"0..{MAX_GAIN}"


def is_dataframe(value: object) -> bool:
    """A pandas DataFrame (recognised without importing pandas)."""
    return type(value).__module__.startswith("pandas") and hasattr(value, "columns")


def qrels_from_mapping(
    value: Any, gain_map: Mapping[int, int] | None = None, *, name: str = "qrels"
) -> Qrels:
    """Qrels from a nested dict or a DataFrame (see the module docstring)."""
    rows = _rows(value, name, _GAIN_COLUMNS)
    log = ErrorLog(rows.name)
    gains = _gains(rows, gain_map or {}, log)
    converted = _check_ids(rows, log)
    log.raise_if_any()
    if not rows.doc_ids:
        log.add(None, None, "no judgments", "give at least one query with one judged doc")
        log.raise_if_any()
    if rows.lengths is not None and not converted:
        return _qrels_of_dict(rows, gains)
    return qrels_from_rows(rows.name, rows.query_ids, rows.doc_ids, gains)


def _qrels_of_dict(rows: _Rows, gains: list[int]) -> Qrels:
    """Qrels straight from a dict's groups (its keys are unique: no repeated rows)."""
    doc_ids: dict[str, list[str]] = {}
    by_query: dict[str, list[int]] = {}
    a = 0
    for n in rows.lengths or ():
        if n:
            q = rows.query_ids[a]
            doc_ids[q] = rows.doc_ids[a : a + n]
            by_query[q] = gains[a : a + n]
        a += n
    return Qrels(rows.name, doc_ids, by_query, len(gains))


def run_from_mapping(value: Any, *, name: str = "run") -> TrecRun:
    """A run from a nested dict or a DataFrame (see the module docstring)."""
    rows = _rows(value, name, _SCORE_COLUMNS)
    log = ErrorLog(rows.name)
    scores = _scores(rows, log)
    _check_ids(rows, log)
    log.raise_if_any()
    if not rows.doc_ids:
        log.add(None, None, "no results", "give at least one query with one scored doc")
        log.raise_if_any()
    return run_from_rows(rows.name, rows.query_ids, rows.doc_ids, scores)


class _Rows:
    """Parallel columns, and how to name row ``i`` in a message."""

    def __init__(
        self,
        name: str,
        query_ids: list,
        doc_ids: list,
        values: Any,
        columns: tuple | None,
        lengths: list[int] | None = None,
    ) -> None:
        self.name = name
        self.query_ids = query_ids
        self.doc_ids = doc_ids
        self.values = values
        self.columns = columns  # a DataFrame's (query, doc, value) column names; None: a dict
        self.lengths = lengths  # a dict's rows per query, in key order; None: a DataFrame

    def where(self, i: int, column: int) -> tuple[int | None, str]:
        """(line, field) of row ``i``'s column 0 (query), 1 (doc) or 2 (value).

        DataFrame rows are numbered from 0, as ``DataFrame.iloc`` numbers them.
        """
        if self.columns is not None:
            return None, f"row {i} ({self.columns[column]})"
        return None, f"query {self.query_ids[i]!r} doc {self.doc_ids[i]!r}"


def _rows(value: Any, name: str, value_columns: tuple[str, ...]) -> _Rows:
    if is_dataframe(value):
        return _frame_rows(value, f"{name} (DataFrame)", value_columns)
    if isinstance(value, Mapping):
        return _dict_rows(value, f"{name} (dict)")
    raise InputErrors(
        [InputError(file=name, message="expected a file path, a nested dict or a DataFrame, "
                    f"got {type(value).__name__}")]
    )


def _dict_rows(value: Mapping, name: str) -> _Rows:
    query_ids: list = []
    doc_ids: list = []
    values: list = []
    lengths: list[int] = []
    for q, inner in value.items():
        if not isinstance(inner, Mapping):
            raise InputErrors(
                [InputError(file=name, field=f"query {q!r}",
                            message=f"expected a dict of doc ID -> value, got {type(inner).__name__}")]
            )
        lengths.append(len(inner))
        query_ids.extend([q] * len(inner))
        doc_ids.extend(inner.keys())
        values.extend(inner.values())
    return _Rows(name, query_ids, doc_ids, values, None, lengths)


def _frame_rows(frame: Any, name: str, value_columns: tuple[str, ...]) -> _Rows:
    names = [str(c) for c in frame.columns]
    picked = tuple(_column(names, options, name) for options in
                   (_QUERY_COLUMNS, _DOC_COLUMNS, value_columns))
    q, d, v = (frame[c] for c in picked)
    values = v.to_numpy() if v.dtype.kind in "iuf" else v.tolist()
    return _Rows(name, _ids(q), _ids(d), values, picked)


def _column(columns: list[str], options: tuple[str, ...], name: str) -> str:
    found = [c for c in options if c in columns]
    if len(found) == 1:
        return found[0]
    problem = "has none of the columns" if not found else "has more than one of the columns"
    raise InputErrors(
        [InputError(file=name,
                    message=f"{problem} {', '.join(options)}; its columns are: {', '.join(columns)}",
                    hint=f"name the column {options[0]}")]
    )


def _ids(column: Any) -> list:
    """A DataFrame ID column as a list; integer columns become their decimal text."""
    if column.dtype.kind in "iu":
        return column.astype(str).tolist()
    return column.tolist()


def _check_ids(rows: _Rows, log: ErrorLog) -> bool:
    """Every ID a non-empty string (an integer becomes its decimal text, in place).

    Returns whether an integer was converted (two keys may then read alike).
    """
    converted = False
    for c, column in enumerate((rows.query_ids, rows.doc_ids)):
        if set(map(type, column)) <= {str} and all(column):  # the common case, in C loops
            continue
        for i, x in enumerate(column):
            if _is_integer(x):
                column[i] = str(int(x))
                converted = True
            elif not (isinstance(x, str) and x):
                line, field = rows.where(i, c)
                what = "query ID" if c == 0 else "doc ID"
                log.add(line, field, f"{what} must be a non-empty string, got {_show(x)}")
    return converted


def _show(x: Any) -> str:
    """A value as Python would write it (numpy scalars as plain numbers), at most 60 characters."""
    text = repr(x.item() if isinstance(x, np.generic) else x)
    return text if len(text) <= 60 else text[:57] + "..."


def _is_integer(x: Any) -> bool:
    return isinstance(x, Integral) and not isinstance(x, bool | np.bool_)


def _gains(rows: _Rows, gain_map: Mapping[int, int], log: ErrorLog) -> list[int]:
    """Every gain, mapped and checked; each bad row is logged (and given gain 0)."""
    values = rows.values
    integers = (
        values.dtype.kind in "iu"
        if isinstance(values, np.ndarray)
        else set(map(type, values)) <= {int} or all(map(_is_integer, values))
    )
    if integers:  # one check per distinct value (a bool is never here: it hashes like 0/1)
        table = {raw: _gain(raw, gain_map) for raw in set(values)}
        if all(isinstance(g, int) for g in table.values()):
            return list(map(table.__getitem__, values))  # type: ignore[arg-type]
    out = []
    for i, raw in enumerate(values):
        gain = _gain(raw, gain_map)
        if isinstance(gain, tuple):
            line, field = rows.where(i, 2)
            log.add(line, field, *gain)
            gain = 0
        out.append(gain)
    return out


def _gain(raw: Any, gain_map: Mapping[int, int]) -> int | tuple[str, str]:
    """The gain of ``raw``, or (message, hint) saying why it is not one."""
    if not _is_integer(raw):
        return f"gain must be an integer, got {_show(raw)}", f"gains are integers {_GAINS}"
    value = gain_map.get(int(raw), int(raw))
    if 0 <= value <= MAX_GAIN:
        return value
    if int(raw) in gain_map:
        return f"gain {int(raw)} is mapped to {value}, outside {_GAINS}", f"map it into {_GAINS}"
    return (
        f"gain {int(raw)} is outside {_GAINS}",
        f"map it with gain_map={{{int(raw)}: N}}, N in {_GAINS}",
    )


def _scores(rows: _Rows, log: ErrorLog) -> np.ndarray:
    values = rows.values
    scores = None
    if isinstance(values, np.ndarray) or set(map(type, values)) <= {float, int}:
        try:
            scores = np.asarray(values, dtype=np.float64)
        except OverflowError:  # an integer beyond float range: named below
            scores = None
    if scores is not None:
        bad = np.flatnonzero(~np.isfinite(scores)).tolist()
    else:
        scores = np.zeros(len(values), dtype=np.float64)
        bad = []
        for i, x in enumerate(values):
            score = _finite(x)
            if score is None:
                bad.append(i)
            else:
                scores[i] = score
    for i in bad:
        line, field = rows.where(i, 2)
        log.add(line, field, f"score must be a finite number, got {_show(values[i])}",
                "items are ranked by score")
    return scores


def _finite(x: Any) -> float | None:
    """``x`` as a finite float, or None (booleans, text, NaN, infinities, huge integers)."""
    if not isinstance(x, Real) or isinstance(x, bool | np.bool_):
        return None
    try:
        value = float(x)
    except OverflowError:
        return None
    return value if math.isfinite(value) else None
