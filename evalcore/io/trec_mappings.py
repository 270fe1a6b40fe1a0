"""Qrels and runs held in memory: the nested dicts and tables other IR libraries use.

* nested dicts, as pytrec_eval and ir_measures take them: qrels
  ``{query_id: {doc_id: gain}}``, run ``{query_id: {doc_id: score}}``;
* a pandas DataFrame or a pyarrow Table with one row per judgment or result:
  qrels columns ``query_id, doc_id, relevance`` and run columns ``query_id,
  doc_id, score`` (ir_measures' names; ``qid``/``q_id`` and
  ``docno``/``docid`` and, for qrels, ``label`` are accepted too).

The rules are the TREC files' rules (:mod:`evalcore.io.trec`): IDs are
non-empty strings (integers are taken as their decimal text, as a TREC file
would spell them); a gain is an integer, mapped by ``gain_map`` and then in
0..4 (``True``, ``2.5``, ``"3"`` are refused); a whole float (``2.0``, below 2**53) is
read as the integer it equals, in a table as in a dict, since pandas and pyarrow store
an integer column with a gap as floats; a missing gain (``None``, NaN, pandas' ``NA``)
is named as missing, on its own row; a score is a finite number.
Runs are ranked as trec_eval ranks them (score descending, doc ID
descending) and tied pairs are counted. Every error is reported, with where it
is (``query 'q1' doc 'd3'`` for a dict, the row number for a table), in one
:class:`~evalcore.io.errors.InputErrors`. A table is recognised by its shape
(pandas and pyarrow are imported only to read one).

Each input is read once and checked once per column in bulk; only a column that fails
the bulk check is walked row by row, to name each wrong row. It becomes arrays
(:class:`~evalcore.io.ranked.Judged`, :class:`~evalcore.io.ranked.Ranked`), or, for a
run table against qrels given as a table or prepared, the columns the TREC files are
joined as, read from the table's own bytes (:func:`table_input`). Only input whose rows
may repeat a ``(query, doc)`` pair (a table's, or a dict whose integer keys read like
other keys) goes through the file rules for repeated rows, which name each repeat.
"""

from __future__ import annotations

import math
import sys
from bisect import bisect_right
from collections.abc import Callable, Mapping
from functools import cached_property
from itertools import accumulate, chain, repeat
from numbers import Integral, Real
from operator import contains, methodcaller
from typing import Any

import numpy as np

from evalcore.contract.gains import MAX_GAIN
from evalcore.io.errors import ErrorLog, InputErrors
from evalcore.io.ranked import DictKeys, Judged, Ranked, join, judged_from_qrels, rank_rows
from evalcore.io.trec import (
    ColumnarInput,
    Labels,
    Windows,
    assemble,
    qrels_from_rows,
    query_codes,
    read_both,
    reduce_block,
)
from evalcore.io.trec_bytes import Decline, field_words
from evalcore.io.trec_format import (
    DOC_COLUMNS,
    GAIN_COLUMNS,
    QUERY_COLUMNS,
    SCORE_COLUMNS,
    is_arrow_table,
    is_dataframe,
)

_GAINS = f"0..{MAX_GAIN}"
_values = methodcaller("values")
_EXACT = 2.0**53  # a whole float below this is read as the integer it equals


def judged_from_mapping(
    value: Any,
    gain_map: Mapping[int, int] | None = None,
    *,
    name: str = "qrels",
    copy: bool = True,
) -> Judged:
    """Qrels from a nested dict or a table (see the module docstring). A dict's inner dicts
    are copied unless ``copy=False`` (the caller keeps them unchanged while it uses them)."""
    return _judged(*_checked_qrels(value, gain_map, name), gain_map, copy)


def ranked_from_mapping(value: Any, *, name: str = "run", depth: int = 0) -> Ranked:
    """A run from a nested dict or a table (see the module docstring), each query held to
    its top ``depth`` positions (0: every position). A dict's doc IDs are read from its
    inner dicts when asked (:class:`DictKeys`), never copied."""
    return _ranked(*_checked_run(value, name), depth)


def _checked_qrels(
    value: Any, gain_map: Mapping[int, int] | None, name: str = "qrels"
) -> tuple[_Rows, np.ndarray, bool]:
    """(rows, their gains, whether an integer ID became text); raises every error."""
    rows = _rows(value, name, GAIN_COLUMNS)
    log = ErrorLog(rows.name)
    gains = _gains(rows, gain_map or {}, log)
    converted = _check_ids(rows, log)
    log.raise_if_any()
    if not gains.size:
        log.add(None, None, "no judgments", "give at least one query with one judged doc")
        log.raise_if_any()
    return rows, gains, converted


def _checked_run(value: Any, name: str = "run") -> tuple[_Rows, np.ndarray, bool]:
    """(rows, their scores, whether an integer ID became text); raises every error."""
    rows = _rows(value, name, SCORE_COLUMNS)
    log = ErrorLog(rows.name)
    scores = _scores(rows, log)
    converted = _check_ids(rows, log)
    log.raise_if_any()
    if not scores.size:
        log.add(None, None, "no results", "give at least one query with one scored doc")
        log.raise_if_any()
    return rows, scores, converted


def _judged(
    rows: _Rows, gains: np.ndarray, converted: bool, gain_map: Mapping | None, copy: bool = True
) -> Judged:
    if rows.inner is not None and not converted and not gain_map and rows.value_types <= {int}:
        # the usual dict: its inner dicts are the labels as they are
        pairs = zip(rows.keys, rows.inner, strict=True)
        keep = not copy and set(map(type, rows.inner)) <= {dict}
        return Judged.of_dicts(rows.name, {q: b if keep else dict(b) for q, b in pairs if b})
    if not converted:
        gains_of = rows.grouped(gains)
        if sum(map(len, gains_of.values())) == gains.size:  # no (query, doc) repeated
            return Judged.of_dicts(rows.name, gains_of)
    return judged_from_qrels(
        qrels_from_rows(rows.name, rows.query_column(), rows.doc_ids, gains.tolist())
    )


def _ranked(rows: _Rows, scores: np.ndarray, converted: bool, depth: int) -> Ranked:
    if converted:  # integer keys may now read alike: regroup by the IDs' text
        rows = rows.regrouped()
    if rows.inner is not None:  # queries without results are left out
        keys = [q for q, b in zip(rows.keys, rows.inner, strict=True) if b]
        inner = [b for b in rows.inner if b]
        offsets = np.zeros(len(inner) + 1, dtype=np.int64)
        np.cumsum(np.fromiter(map(len, inner), dtype=np.int64, count=len(inner)), out=offsets[1:])
        docs = DictKeys(inner, offsets)
        positions, order, tied_pairs = rank_rows(scores, offsets, docs, depth)
        return Ranked(rows.name, keys, positions, docs, order, tied_pairs, False)
    keys, edges, grouped = rows.blocks()
    offsets = np.asarray(edges, dtype=np.int64)
    scores = rows.in_blocks(scores)
    positions, order, tied_pairs = rank_rows(scores, offsets, DictKeys.of(grouped, offsets), depth)
    codes = _factorize(grouped, rows.from_pandas)[0]
    return Ranked(rows.name, keys, positions, grouped, order, tied_pairs, True, codes)


class _Rows:
    """Parallel columns grouped by query, and how to name row ``i`` in a message.

    A dict's rows come grouped (``keys``, ``inner``: one mapping per key) and are read from
    its inner mappings in C loops, listed only to name an error. A table's ID columns are
    taken as pyarrow text arrays when they are text without a null or an empty value (the
    words of :func:`table_input`, no Python object per row), else read as Python values
    (``read``: column -> its values); its rows are grouped here by a stable sort of their
    query IDs (``order``: the table row of every grouped row), so the messages still name
    the table's row numbers.
    """

    def __init__(
        self,
        name: str,
        keys: list,
        inner: list | None,
        columns: tuple | None = None,
        read: Callable[[int], Any] | None = None,
    ) -> None:
        self.name = name
        self.keys = keys  # a dict's query IDs (its keys, in order); a table's: see blocks()
        self.inner = inner  # a dict's inner mappings (its rows, query by query); None: a table
        self.columns = columns  # a table's (query, doc, value) column names; None: a dict
        self.read = read
        self.text: list = [None, None]  # a table's clean query and doc ID columns (pyarrow)
        self.lengths = None if inner is None else list(map(len, inner))
        self.starts = None if inner is None else [0, *accumulate(self.lengths)]
        self.order: np.ndarray | None = None  # grouped row -> input row (tables)
        self.from_pandas = False  # a DataFrame's rows: pandas' hash table is at hand

    @cached_property
    def query_ids(self) -> list:
        """A table's query ID of every row."""
        return self.read(0)  # type: ignore[misc]

    @cached_property
    def doc_ids(self) -> list:
        """Every row's doc ID (listed when first asked)."""
        return self.read(1) if self.read else list(chain.from_iterable(self.inner or ()))

    @cached_property
    def values(self) -> Any:
        """Every row's value (a dict's listed when first asked; a table's may be an array)."""
        return self.read(2) if self.read else list(chain.from_iterable(map(_values, self.inner)))

    @cached_property
    def value_types(self) -> set[type]:
        """The types of the values (not asked of a table's numeric array)."""
        if self.inner is not None:
            return set(map(type, chain.from_iterable(map(_values, self.inner))))
        return set(map(type, self.values))

    def as_array(self, dtype: type) -> np.ndarray:
        """Every value as ``dtype``, in C loops (raises OverflowError for a huge integer)."""
        if self.inner is None:
            return np.asarray(self.values, dtype=dtype)
        count = self.starts[-1]  # type: ignore[index]
        return np.fromiter(chain.from_iterable(map(_values, self.inner)), dtype, count=count)

    def clean_ids(self, column: int) -> bool:
        """Whether column 0 (query) or 1 (doc) holds only non-empty strings (C loops)."""
        if self.text[column] is not None:
            return True
        if column == 0:
            ids = self.keys if self.inner is not None else self.query_ids
            return set(map(type, ids)) <= {str} and all(ids)  # type: ignore[arg-type]
        if self.inner is None:
            return set(map(type, self.doc_ids)) <= {str} and all(self.doc_ids)
        docs = chain.from_iterable(self.inner)
        return set(map(type, docs)) <= {str} and not any(map(contains, self.inner, repeat("")))

    def query_of(self, i: int) -> Any:
        """The query ID of input row ``i``."""
        if self.inner is None:
            return self.query_ids[i]
        return self.keys[bisect_right(self.starts, i) - 1]  # type: ignore[arg-type]

    def query_column(self) -> list:
        """The query ID of every row, as a list (for the file rules on repeated rows)."""
        if self.inner is None:
            return self.query_ids
        return list(chain.from_iterable(map(repeat, self.keys, self.lengths or ())))

    def where(self, i: int, column: int) -> tuple[int | None, str]:
        """(line, field) of row ``i``'s column 0 (query), 1 (doc) or 2 (value).

        Table rows are numbered from 0, as ``DataFrame.iloc`` numbers them.
        """
        if self.columns is not None:
            return None, f"row {i} ({self.columns[column]})"
        if column == 0 and self.inner is not None and i < 0:
            return None, f"query {self.keys[-i - 1]!r}"
        return None, f"query {self.query_of(i)!r} doc {self.doc_ids[i]!r}"

    def blocks(self) -> tuple[list, list[int], list]:
        """(query ID of each block, block edges, the doc IDs grouped by query); a table's
        rows are grouped by a stable sort (``order``: the input row of each grouped row)."""
        if self.lengths is not None:
            kept = [k for k, n in zip(self.keys, self.lengths, strict=True) if n]
            return kept, [0, *accumulate(n for n in self.lengths if n)], self.doc_ids
        codes, keys = _factorize(self.query_ids or [], self.from_pandas)
        counts = np.bincount(codes, minlength=len(keys))
        docs = self.doc_ids
        if codes.size > 1 and (codes[1:] < codes[:-1]).any():  # some query's rows interleaved
            self.order = np.argsort(codes, kind="stable")
            docs = list(map(docs.__getitem__, self.order.tolist()))
        return keys, [0, *accumulate(counts.tolist())], docs

    def in_blocks(self, values: np.ndarray) -> np.ndarray:
        """``values`` (one per input row) in the order :meth:`blocks` grouped the rows."""
        return values if self.order is None else values[self.order]

    def regrouped(self) -> _Rows:
        """These rows as a table's (queries that read alike after conversion merge)."""
        columns = (self.query_column(), self.doc_ids, self.values)
        return _Rows(self.name, [], None, None, columns.__getitem__)

    def grouped(self, gains: np.ndarray) -> dict[str, dict[str, int]]:
        """query -> doc -> gain (a repeated ``(query, doc)`` leaves fewer entries than rows)."""
        keys, edges, docs = self.blocks()
        values = self.in_blocks(gains).tolist()
        return {
            q: dict(zip(docs[a:b], values[a:b], strict=True))
            for q, a, b in zip(keys, edges, edges[1:], strict=False)
        }


def _factorize(values: list, with_pandas: bool) -> tuple[np.ndarray, list]:
    """(code of every value, distinct values in order of first appearance); ``with_pandas``:
    the values come from a DataFrame, so pandas' hash table is used."""
    if with_pandas and len(values) > 1000:
        import pandas as pd

        codes, uniques = pd.factorize(np.asarray(values, dtype=object), sort=False)
        return codes.astype(np.int64, copy=False), uniques.tolist()
    code_of = {v: i for i, v in enumerate(dict.fromkeys(values))}
    codes = np.fromiter(map(code_of.__getitem__, values), dtype=np.int64, count=len(values))
    return codes, list(code_of)


def _rows(value: Any, name: str, value_columns: tuple[str, ...]) -> _Rows:
    if is_dataframe(value):
        return _frame_rows(value, f"{name} (DataFrame)", value_columns)
    if is_arrow_table(value):
        return _frame_rows(value, f"{name} (Table)", value_columns)
    if isinstance(value, Mapping):
        return _dict_rows(value, f"{name} (dict)")
    raise InputErrors.one(
        name,
        "expected a file path, a nested dict, a DataFrame or a "
        f"pyarrow Table, got {type(value).__name__}",
    )


def _dict_rows(value: Mapping, name: str) -> _Rows:
    keys = list(value)
    inner = list(value.values())
    if not all(isinstance(x, dict) for x in inner):
        for q, x in zip(keys, inner, strict=True):
            if not isinstance(x, Mapping):
                raise InputErrors.one(
                    name,
                    f"expected a dict of doc ID -> value, got {type(x).__name__}",
                    field=f"query {q!r}",
                )
    return _Rows(name, keys, inner)


def _frame_rows(frame: Any, name: str, value_columns: tuple[str, ...]) -> _Rows:
    """The rows of a DataFrame (``frame``) or a pyarrow Table."""
    pandas = is_dataframe(frame)
    picked = _columns(frame, name, value_columns)

    def read(j: int) -> Any:
        if j < 2 and rows.text[j] is not None:  # (integers read as their text, as checked)
            return rows.text[j].to_numpy(zero_copy_only=False).tolist()
        c = picked[j]
        column = frame[c].to_numpy() if pandas else frame.column(c).to_numpy(zero_copy_only=False)
        if j == 2:
            return column if column.dtype.kind in "iuf" else column.tolist()
        return column.astype(str).tolist() if column.dtype.kind in "iu" else column.tolist()

    rows = _Rows(name, [], None, picked, read)
    rows.text = [_text(frame[c] if pandas else frame.column(c)) for c in picked[:2]]
    rows.from_pandas = pandas
    return rows


def _columns(frame: Any, name: str, value_columns: tuple[str, ...]) -> tuple[str, str, str]:
    """The names of a table's query, doc and value columns (each one of the names accepted)."""
    columns = [str(c) for c in (frame.columns if is_dataframe(frame) else frame.column_names)]
    picked = []
    for options in (QUERY_COLUMNS, DOC_COLUMNS, value_columns):
        found = [c for c in options if c in columns]
        if len(found) != 1:
            problem = "has none of the columns" if not found else "has more than one of the columns"
            raise InputErrors.one(
                name,
                f"{problem} {', '.join(options)}; its columns are: {', '.join(columns)}",
                f"name the column {options[0]}",
            )
        picked.append(found[0])
    return picked[0], picked[1], picked[2]


def _check_ids(rows: _Rows, log: ErrorLog) -> bool:
    """Every ID a non-empty string (an integer becomes its decimal text, in place).

    Returns whether an integer was converted (two keys may then read alike).
    """
    converted = False
    for c in (0, 1):
        if rows.clean_ids(c):  # the common case, in C loops
            continue
        column = rows.doc_ids if c else rows.keys if rows.inner is not None else rows.query_ids
        for i, x in enumerate(column):  # type: ignore[arg-type]
            if _is_integer(x):
                column[i] = str(int(x))
                converted = True
            elif not (isinstance(x, str) and x):
                # a dict's query keys are named by themselves (row -1 - i: key i)
                line, field = rows.where(-1 - i if c == 0 and rows.inner is not None else i, c)
                what = "query ID" if c == 0 else "doc ID"
                log.add(line, field, f"{what} must be a non-empty string, got {_show(x)}")
    return converted


def _show(x: Any) -> str:
    """A value as Python would write it (numpy scalars as plain numbers), at most 60 characters."""
    text = repr(x.item() if isinstance(x, np.generic) else x)
    return text if len(text) <= 60 else text[:57] + "..."


def _is_integer(x: Any) -> bool:
    return isinstance(x, Integral) and not isinstance(x, bool | np.bool_)


def _gains(rows: _Rows, gain_map: Mapping[int, int], log: ErrorLog) -> np.ndarray:
    """Every gain, mapped and checked (int8); each bad row is logged (and given gain 0)."""
    if rows.inner is None and isinstance(rows.values, np.ndarray):
        integers = rows.values.dtype.kind in "iu" or _whole(rows.values)
    else:
        integers = rows.value_types <= {int} or all(map(_is_integer, rows.values))
    if integers:
        raw = _int64(rows)
        if (
            raw is not None
            and not gain_map
            and raw.size
            and (0 <= raw.min() and raw.max() <= MAX_GAIN)
        ):
            return raw.astype(np.int8)
        # one check per distinct value (a bool is never here: it hashes like 0/1)
        values = rows.values
        listed = values.tolist() if isinstance(values, np.ndarray) else values
        table = {r: _gain(r, gain_map) for r in set(listed)}
        if all(isinstance(g, int) for g in table.values()):
            return np.fromiter(map(table.__getitem__, listed), dtype=np.int8, count=len(listed))
    values = rows.values
    out = np.zeros(len(values), dtype=np.int8)
    for i, raw_value in enumerate(values):
        gain = _gain(raw_value, gain_map)
        if isinstance(gain, tuple):
            line, field = rows.where(i, 2)
            log.add(line, field, *gain)
        else:
            out[i] = gain
    return out


def _whole(values: np.ndarray) -> bool:
    """Whether a float array holds only whole numbers below ``_EXACT`` (no NaN, no infinity):
    the gains of an integer column pandas or pyarrow stored as floats."""
    if values.dtype.kind != "f":
        return False
    return bool((np.abs(values) < _EXACT).all() and (values == np.trunc(values)).all())


def _int64(rows: _Rows) -> np.ndarray | None:
    """Integer gains as int64, or None when one is beyond int64 (named by the slow check)."""
    try:
        return rows.as_array(np.int64)
    except OverflowError:
        return None


def _gain(raw: Any, gain_map: Mapping[int, int]) -> int | tuple[str, str]:
    """The gain of ``raw``, or (message, hint) saying why it is not one."""
    if isinstance(raw, float | np.floating) and raw.is_integer() and abs(raw) < _EXACT:
        raw = int(raw)  # a whole float: how pandas stores an integer column with gaps
    elif not _is_integer(raw):
        if _missing(raw):
            return (
                f"gain is missing, got {_show(raw)}",
                f"give it a gain {_GAINS} or leave the row out",
            )
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


def _missing(x: Any) -> bool:
    """Whether ``x`` stands for no value: None, NaN or pandas' NA (pandas is imported only
    when a DataFrame was given)."""
    if x is None or (isinstance(x, float | np.floating) and math.isnan(x)):
        return True
    pandas = sys.modules.get("pandas")
    return pandas is not None and x is getattr(pandas, "NA", None)


def _scores(rows: _Rows, log: ErrorLog) -> np.ndarray:
    scores = None
    table = rows.inner is None and isinstance(rows.values, np.ndarray)
    if table or rows.value_types <= {float, int}:
        try:
            scores = rows.as_array(np.float64)
        except OverflowError:  # an integer beyond float range: named below
            scores = None
    if scores is not None:
        bad = np.flatnonzero(~np.isfinite(scores)).tolist()
    else:
        scores = np.zeros(len(rows.values), dtype=np.float64)
        bad = []
        for i, x in enumerate(rows.values):
            score = _finite(x)
            if score is None:
                bad.append(i)
            else:
                scores[i] = score
    for i in bad:
        line, field = rows.where(i, 2)
        log.add(
            line,
            field,
            f"score must be a finite number, got {_show(rows.values[i])}",
            "items are ranked by score",
        )
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


# --- tables ----------------------------------------------------------------------------------


def table_input(qrels: Judged | Any, run: Any, k: int, **rules: Any) -> ColumnarInput:
    """The packed batch of a run table (a DataFrame or a pyarrow Table) against qrels given
    as a table or prepared (a :class:`Judged`), each read and checked once (the errors of
    both raised together). Joined column by column as TREC files are
    (:func:`~evalcore.io.trec.assemble`) when the words hold every ID, else (an ID with a
    NUL, integers among text IDs, no pyarrow) as Python rows (:func:`~evalcore.io.ranked.join`).
    ``rules``: ``gain_map`` and the arguments of :func:`~evalcore.io.ranked.join`."""
    gain_map = rules.pop("gain_map", None)
    depth = max(k, rules.get("min_depth", 0))
    checked, (rows, scores, converted) = read_both(
        lambda: qrels if isinstance(qrels, Judged) else _checked_qrels(qrels, gain_map),
        lambda: _checked_run(run),
    )
    try:
        labels = checked.words if isinstance(checked, Judged) else _labels(*checked[:2])
        if labels is None:
            raise Decline("prepared qrels the words cannot hold")
        return assemble(labels, _windows(rows, scores, depth), k, **rules)
    except Decline:
        judged = checked if isinstance(checked, Judged) else _judged(*checked, gain_map)
        return join(judged, _ranked(rows, scores, converted, depth), k, **rules)


def _labels(rows: _Rows, gains: np.ndarray) -> Labels:
    """Checked qrels table rows as columns; raises :class:`Decline` when not words."""
    query, docs = (_words(array) for array in rows.text)
    code_of: dict[str, int] = {}
    codes = query_codes(query, code_of).astype(np.int32)
    return Labels(rows.name, list(code_of), codes, [docs], gains)


def _windows(rows: _Rows, scores: np.ndarray, depth: int) -> Windows:
    """Checked run table rows as columns, each query held to ``depth`` positions; raises
    :class:`Decline` when not words."""
    query, docs = (_words(array) for array in rows.text)
    out = Windows(rows.name)
    reduce_block(out, query_codes(query, out.code_of), scores, docs, depth)
    out.query_ids = list(out.code_of)
    return out


def _text(column: Any) -> Any:
    """A table's ID column as a pyarrow string array (integers as their decimal text), or
    None when it is not text without a null or an empty value (or pyarrow is absent): its
    Python values are then checked, and name each wrong row."""
    try:
        import pyarrow as pa
        import pyarrow.compute as pc
    except ImportError:
        return None
    try:
        array = column if isinstance(column, pa.Array | pa.ChunkedArray) else pa.array(column)
    except (pa.ArrowException, TypeError, ValueError):
        return None
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks() if array.num_chunks != 1 else array.chunk(0)
    kind = array.type
    if pa.types.is_integer(kind) or pa.types.is_large_string(kind) or pa.types.is_string_view(kind):
        array = pc.cast(array, pa.string())
    if not pa.types.is_string(array.type) or array.null_count:
        return None
    offsets = np.frombuffer(array.buffers()[1], dtype=np.int32)[
        array.offset : array.offset + len(array) + 1
    ]
    return None if (offsets[1:] == offsets[:-1]).any() else array


def _words(array: Any) -> np.ndarray:
    """A clean pyarrow string array's values (:func:`_text`) as rows of 64-bit words; raises
    :class:`Decline` when there is none or one holds a NUL (the words cannot hold it)."""
    if array is None:
        raise Decline("not text")
    offsets = np.frombuffer(array.buffers()[1], dtype=np.int32)[
        array.offset : array.offset + len(array) + 1
    ].astype(np.int64)
    start, end = int(offsets[0]), int(offsets[-1])
    data = (
        np.frombuffer(array.buffers()[2], dtype=np.uint8)[start:end]
        if end > start
        else (np.zeros(0, dtype=np.uint8))
    )
    if (data == 0).any():
        raise Decline("NUL")
    padded = np.concatenate((data, np.zeros(8, dtype=np.uint8)))
    return field_words(padded, offsets[:-1] - start, offsets[1:] - start)
