"""What the metric computer is handed: a packed batch and the reader's diagnostics.

Qrels and runs come as paths to TREC files, nested dicts, DataFrames, pyarrow Tables
(:mod:`evalcore.io.trec_mappings`), already-read :class:`~evalcore.io.trec.Qrels`
/ :class:`~evalcore.io.trec.TrecRun` or, for qrels, prepared once
(:class:`evalcore.api.qrels.Qrels`); observations come as a list. Both
``evalcore.evaluate`` and ``evalcore evaluate`` build their input here.

**trec_eval compatibility** (``trec_eval=True``, ``--trec-eval``) on the input
side: run lines with text after the tag are read as trec_eval reads them,
only the queries trec_eval evaluates are kept
(:mod:`evalcore.io.trec_eval_scope`; ``all_queries`` is its ``-c``), and every
qrels population is complete. The protocol side (unjudged units non-relevant,
a query without relevant units valued 0) is ``EvalProtocol(trec_eval=True)``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from numbers import Integral, Real
from os import PathLike
from typing import TYPE_CHECKING, Any

import numpy as np

from evalcore.compute.batch import ObservationBatch
from evalcore.contract.evaluation_protocol import EvalProtocol
from evalcore.contract.gains import MAX_GAIN
from evalcore.contract.results import Diagnostics
from evalcore.io.ranked import (
    Judged,
    Ranked,
    join,
    judged_from_qrels,
    ranked_from_run,
)
from evalcore.io.trec import Qrels, TrecRun, read_both, read_qrels, read_run

if TYPE_CHECKING:
    from evalcore.contract.observation import Observation
    from evalcore.io.trec import ColumnarInput

def checked_gain_map(gain_map: object) -> Mapping[Any, int] | None:
    """``gain_map`` when it maps gains (numbers: integers, or decimal gains such as 0.5, as
    ``--gain-map`` takes them) to integers 0..4, else ValueError naming every wrong entry: a
    target such as 1.5 would otherwise be cut to an integer without a word."""
    if gain_map is None:
        return None
    example = "e.g. gain_map={-1: 0, 5: 4}"
    if isinstance(gain_map, str):
        raise ValueError(f"gain_map is a dict, {example}, not the text {gain_map[:60]!r} "
                         "(the command line's --gain-map form)")
    if not isinstance(gain_map, Mapping):
        raise ValueError(f"gain_map must be a dict of gain -> gain 0..{MAX_GAIN}, {example}; "
                         f"got {type(gain_map).__name__}")
    wrong = [
        f"{source!r}: {target!r}"
        for source, target in gain_map.items()
        if not (isinstance(source, Real) and not isinstance(source, bool | np.bool_))
        or not (isinstance(target, Integral) and not isinstance(target, bool | np.bool_)
                and 0 <= target <= MAX_GAIN)
    ]
    if wrong:
        raise ValueError(f"gain_map maps gains (numbers) to integers 0..{MAX_GAIN}, {example}; "
                         f"not {', '.join(wrong[:5])}")
    return gain_map


#: What a qrels or run argument may be: a path, a nested dict, a pandas DataFrame, a pyarrow
#: Table, already-read :class:`Qrels` / :class:`TrecRun`, or prepared qrels
#: (:class:`evalcore.api.qrels.Qrels`, qrels only).
TrecSource = Any


@dataclass(frozen=True, eq=False)
class EvalInput:
    """What a source hands to the metric computer."""

    batch: ObservationBatch
    diagnostics: Diagnostics

    @classmethod
    def from_columnar(cls, parts: ColumnarInput) -> EvalInput:
        """The input a join gave (its diagnostics as the model)."""
        return cls(
            parts.batch, Diagnostics(tied_score_pairs=parts.tied_score_pairs, notes=parts.notes)
        )


def packed(
    observations: Sequence[Observation], protocol: EvalProtocol, *, min_depth: int = 0
) -> EvalInput:
    """An :class:`EvalInput` from validated observations, packed to ``max(k, min_depth)``."""
    batch = ObservationBatch.from_observations(observations, protocol, min_depth=min_depth)
    return EvalInput(batch, Diagnostics())


def as_judged(
    value: TrecSource, gain_map: Mapping[int, int] | None = None, *, keep: bool = False
) -> Judged:
    """Qrels ready to join, from a path, a nested dict, a table, read or prepared qrels.

    ``keep``: the result outlives the call (prepared qrels), so a dict's inner dicts are
    copied; one evaluation only reads them while it runs."""
    prepared = getattr(value, "judged", None)  # evalcore.Qrels (which imports this module)
    if isinstance(prepared, Judged):
        if gain_map:
            raise ValueError(
                "gain_map applies when qrels are read: give it to "
                "evalcore.Qrels(..., gain_map=...), not to evaluate"
            )
        return prepared
    if isinstance(value, Judged):
        return value
    if isinstance(value, str | PathLike):
        value = read_qrels(value, gain_map)
    if isinstance(value, Qrels):
        return judged_from_qrels(value)
    from evalcore.io.trec_mappings import judged_from_mapping  # not needed for files

    return judged_from_mapping(value, gain_map, copy=keep)


def as_ranked(value: TrecSource, *, extra_columns: bool = False, depth: int = 0) -> Ranked:
    """A ranked run from a path, a nested dict, a table or a read :class:`TrecRun`; a dict or
    a table is held to its top ``depth`` positions (0: all)."""
    if isinstance(value, str | PathLike):
        value = read_run(value, extra_columns=extra_columns)
    if isinstance(value, TrecRun):
        return ranked_from_run(value)
    from evalcore.io.trec_mappings import ranked_from_mapping  # not needed for files

    return ranked_from_mapping(value, depth=depth)


def _is_table(value: TrecSource) -> bool:
    if isinstance(value, str | PathLike | Mapping | TrecRun | Qrels):
        return False
    from evalcore.io.trec_format import is_arrow_table, is_dataframe

    return is_dataframe(value) or is_arrow_table(value)


def trec_input(
    qrels: TrecSource,
    run: TrecSource,
    k: int,
    *,
    complete: bool,
    protocol: EvalProtocol,
    all_queries: bool = False,
    gain_map: Mapping[int, int] | None = None,
    min_depth: int = 0,
) -> EvalInput:
    """Qrels + run read (:func:`as_judged`, :func:`as_ranked`; the errors of both raised
    together), joined per query (contract section 8) and packed to ``max(k, min_depth)`` by
    :func:`evalcore.io.ranked.join`.

    Two TREC file paths are read and joined column by column
    (:func:`evalcore.io.trec.files_input`), and so is a run table (a DataFrame or a
    pyarrow Table) with qrels given as a table or prepared
    (:func:`evalcore.io.trec_mappings.table_input`).

    Under ``protocol.trec_eval`` run lines may have text after the tag, only
    trec_eval's queries are kept (``all_queries``: its ``-c``) and every qrels
    population is complete; the queries left out are counted in the diagnostics' notes.
    """
    rules: dict[str, Any] = {
        "complete": complete,
        "protocol": protocol,
        "all_queries": all_queries,
        "min_depth": min_depth,
    }
    if isinstance(qrels, str | PathLike) and isinstance(run, str | PathLike):
        from evalcore.io.trec import files_input

        return EvalInput.from_columnar(files_input(qrels, run, k, gain_map=gain_map, **rules))
    prepared = isinstance(getattr(qrels, "judged", None), Judged)
    if _is_table(run) and (prepared or _is_table(qrels)):
        from evalcore.io.trec_mappings import table_input

        checked = as_judged(qrels, gain_map) if prepared else qrels
        return EvalInput.from_columnar(table_input(checked, run, k, gain_map=gain_map, **rules))
    depth = max(k, min_depth)
    judged, ranked = read_both(
        lambda: as_judged(qrels, gain_map),
        lambda: as_ranked(run, extra_columns=protocol.trec_eval, depth=depth),
    )
    return EvalInput.from_columnar(join(judged, ranked, k, **rules))
