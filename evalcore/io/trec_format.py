"""The TREC formats' rules: the fields of a line, the gain table (and the gain map), the
notes on a run's tags, the blanks that are no separator, a table's column names.

The TREC reader (:mod:`evalcore.io.trec`), the in-memory inputs
(:mod:`evalcore.io.trec_mappings`) and the label imports read them from here; this
module imports neither the error log nor the report models (pydantic).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

from evalcore.contract.gains import MAX_GAIN

QRELS_FIELDS = ("query_id", "iteration", "doc_id", "gain")
RUN_FIELDS = ("query_id", "Q0", "doc_id", "rank", "score", "tag")

#: Characters ``str.split()`` treats as whitespace that are *not* TREC separators.
_OTHER_WHITESPACE = re.compile(
    "[\x0b\x0c\x1c\x1d\x1e\x1f\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]"
)
#: An integer as trec_eval's ``atol`` reads one (ASCII digits); 18 digits at most.
INTEGER = re.compile(r"[+-]?[0-9]{1,18}")
#: A gain written as a decimal (``1.0``, ``0.000000``, ``.5``), as SMART-converted judgments are.
DECIMAL = re.compile(r"[+-]?(?:[0-9]{1,18}\.[0-9]{0,18}|\.[0-9]{1,18})")


def gain_number(token: str) -> int | float | None:
    """The number a gain token writes: an int for ``2`` and for an exact decimal such as
    ``2.0`` or ``0.000000``, a float for ``0.5``, None for anything else."""
    if INTEGER.fullmatch(token):
        return int(token)
    if DECIMAL.fullmatch(token):
        value = float(token)
        return int(value) if value.is_integer() else value
    return None


def run_notes(name: str, tags: Sequence[str], extra_column_lines: int = 0) -> list[str]:
    """The notes of a run named ``name`` with these distinct tags (in order of appearance)."""
    out = []
    if len(tags) > 1:
        shown = ", ".join(tags[:5]) + (", ..." if len(tags) > 5 else "")
        out.append(f"{name}: {len(tags)} different run tags: {shown}")
    if extra_column_lines:
        out.append(
            f"{name}: {extra_column_lines} line(s) have text after the tag; "
            "it was ignored, as trec_eval ignores it"
        )
    return out


def has_other_whitespace(text: str) -> bool:
    if text.isascii():
        return any(c in text for c in "\x0b\x0c\x1c\x1d\x1e\x1f")
    return _OTHER_WHITESPACE.search(text) is not None


def gain_map_note(name: str, gain_map: Mapping[int, int], mapped: Mapping[int, int]) -> str:
    """The note on a gain map applied: ``mapped`` counts rows per raw gain, in order of appearance."""
    applied = ", ".join(f"{raw}->{gain_map[raw]} ({n} rows)" for raw, n in mapped.items())
    return f"{name}: gain map applied: {applied}"


def gain_table(tokens: set[str], gain_map: Mapping[float, int]) -> dict[str, int | str]:
    """Each distinct gain token -> its gain, or -> an error message.

    An exact decimal (``1.0``, ``0.000000``) is its integer; another decimal
    (``0.5``) is refused unless the gain map maps it (``--gain-map 0.5:1``).
    """
    out: dict[str, int | str] = {}
    for tok in tokens:
        raw = gain_number(tok)
        if raw is None:
            long = INTEGER.fullmatch(tok[:18]) and tok.lstrip("+-").isdigit() and tok.isascii()
            out[tok] = (
                f"gain {tok[:20]}... ({len(tok)} digits) is outside 0..4"
                if long
                else f"must be an integer, got '{tok[:40]}'"
            )
            continue
        gain = gain_map.get(raw, raw)
        if isinstance(gain, float):
            out[tok] = f"gain {tok} is not an integer"
        elif 0 <= gain <= MAX_GAIN:
            out[tok] = gain
        elif raw in gain_map:
            out[tok] = f"gain {raw} is mapped to {gain}, outside 0..4"
        else:
            out[tok] = f"gain {raw} is outside 0..4"
    return out


def gain_hint(token: str) -> str:
    raw = gain_number(token)
    if raw is not None:
        return f"map it with --gain-map '{raw}:N', N in 0..4"
    return "gains are integers 0..4"


def decimal_gain_note(name: str, tokens: Mapping[str, int] | Iterable[str]) -> str | None:
    """The note on the gains written as exact decimals (``1.0``) among ``tokens`` (or rows per
    token), or None when there is none."""
    counts = tokens if isinstance(tokens, Mapping) else Counter(t for t in tokens if "." in t)
    exact = {t: n for t, n in counts.items() if "." in t and isinstance(gain_number(t), int)}
    if not exact:
        return None
    read = ", ".join(f"{tok} -> {gain_number(tok)} ({n} rows)" for tok, n in exact.items())
    return f"{name}: gains written as decimals read as their integers: {read}"


def parse_gain_map(spec: str) -> dict[float, int]:
    """Parse ``"-1:0,5:4,0.5:1"`` into ``{-1: 0, 5: 4, 0.5: 1}``; raise ValueError with what is
    wrong. A source may be a decimal gain (SMART-converted judgments write ``0.5``)."""
    out: dict[float, int] = {}
    for part in spec.split(","):
        part = part.strip()
        if not part:
            continue
        raw, sep, mapped = part.partition(":")
        source = gain_number(raw.strip())
        if not sep or source is None or not INTEGER.fullmatch(mapped.strip()):
            raise ValueError(
                f"'{part[:60]}' is not FROM:TO with integers (FROM may be a "
                "decimal gain), e.g. '-1:0,5:4,0.5:1'"
            )
        src, dst = source, int(mapped)
        if not 0 <= dst <= MAX_GAIN:
            raise ValueError(f"'{part}' maps to {dst}; gains must be mapped into 0..4")
        if src in out and out[src] != dst:
            raise ValueError(f"gain {src} is mapped twice ({out[src]} and {dst})")
        out[src] = dst
    if not out:
        raise ValueError("empty gain map; give FROM:TO pairs, e.g. '-1:0,5:4'")
    return out


# --- tables (DataFrames, pyarrow Tables) -------------------------------------------------

#: The column names a table's query, doc, gain and score columns may have (ir_measures').
QUERY_COLUMNS = ("query_id", "qid", "q_id")
DOC_COLUMNS = ("doc_id", "docno", "docid")
GAIN_COLUMNS = ("relevance", "label")
SCORE_COLUMNS = ("score",)


def is_dataframe(value: object) -> bool:
    """A pandas DataFrame (recognised without importing pandas)."""
    return type(value).__module__.startswith("pandas") and hasattr(value, "columns")


def is_arrow_table(value: object) -> bool:
    """A pyarrow Table (recognised without importing pyarrow)."""
    return type(value).__module__.startswith("pyarrow") and hasattr(value, "column_names")
