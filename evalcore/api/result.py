"""What ``evalcore.evaluate`` returns: the report, seen as Python values and a DataFrame.

:class:`EvaluationResult` wraps the contract's
:class:`~evalcore.contract.results.EvaluationReport` (``.report``):

* ``.aggregates``: measure name -> the mean as a ``float``, or an
  :class:`Unavailable` saying how many queries miss it, why, and the bounds
  the mean lies in (when every missing query has bounds). Never a number that
  the evidence does not support;
* ``.per_query``: a pandas DataFrame, one row per query: ``query_id``, ``k``,
  ``valid``, then per measure ``m``: ``m`` (the value, NaN when
  unavailable), ``m.status``, ``m.reasons`` (comma-separated codes, empty
  when available), ``m.lower`` and ``m.upper`` (an available value is its own
  lower and upper bound, as in contract section 11; NaN when unavailable
  without bounds) and, for RBP, ``m.residual``. pandas is imported here
  only when the table is asked for;
* ``.to_json()``: the contract's JSON (section 7), as ``evalcore evaluate`` prints it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

from evalcore.contract.protocol_choices import REPORTED_WHEN_ON
from evalcore.contract.results import AggregateValue, Diagnostics, EvaluationReport

if TYPE_CHECKING:
    import pandas as pd

    from evalcore.compute.evaluate import BatchResult


@dataclass(frozen=True)
class Unavailable:
    """An aggregate the evidence cannot give: what is missing and where the mean lies."""

    n_queries: int
    n_available: int
    n_missing: int
    reasons: dict[str, int]
    lower: float | None = None
    upper: float | None = None

    @classmethod
    def of(cls, value: AggregateValue) -> Unavailable:
        return cls(
            value.n_queries,
            value.n_available,
            value.n_missing,
            dict(value.reasons),
            value.lower,
            value.upper,
        )

    def __repr__(self) -> str:
        reasons = (
            ", ".join(r if n == self.n_missing else f"{r} x{n}" for r, n in self.reasons.items())
            or "no queries"
        )
        text = f"Unavailable({self.n_missing} of {self.n_queries} queries missing: {reasons}"
        if self.lower is not None and self.upper is not None:
            text += f"; between {self.lower:.4g} and {self.upper:.4g}"
        return text + ")"


def report_json(report: EvaluationReport) -> str:
    """The section-7 JSON; ``unjudged_as_nonrelevant`` appears in ``protocol`` only when on."""
    exclude = None
    if not getattr(report.protocol, REPORTED_WHEN_ON):
        exclude = {"protocol": {REPORTED_WHEN_ON}}
    return report.model_dump_json(exclude=exclude)


class EvaluationResult:
    """The answer of ``evalcore.evaluate`` (see the module docstring).

    Made of the metric computer's arrays: the aggregates are read from them, and the
    per-query report models are built when ``.report`` or ``.per_query`` first asks for
    them (``.to_json()`` is written from the arrays).
    """

    def __init__(self, arrays: BatchResult, diagnostics: Diagnostics | None = None) -> None:
        self.arrays = arrays
        self._diagnostics = diagnostics

    @cached_property
    def report(self) -> EvaluationReport:
        """The contract's report (every query's values, reasons, bounds, blocking IDs)."""
        return self.arrays.to_report(self._diagnostics)

    @property
    def measures(self) -> list[str]:
        """The measure names, in the order they were asked for."""
        return list(self.arrays.metrics)

    @cached_property
    def aggregates(self) -> dict[str, float | Unavailable]:
        out: dict[str, float | Unavailable] = {}
        for name, agg in self.arrays.aggregates().items():
            available = agg.available and agg.value is not None
            out[name] = agg.value if available else Unavailable.of(agg)  # type: ignore[assignment]
        return out

    @cached_property
    def per_query(self) -> pd.DataFrame:
        import pandas as pd

        columns: dict[str, list[Any]] = {
            "query_id": [q.query_id for q in self.report.queries],
            "k": [q.k for q in self.report.queries],
            "valid": [q.valid for q in self.report.queries],
        }
        nan = float("nan")
        for name in self.measures:
            values = [q.metrics[name] for q in self.report.queries]
            columns[name] = [v.value if v.available else nan for v in values]
            columns[f"{name}.status"] = [v.status for v in values]
            columns[f"{name}.reasons"] = [",".join(v.reasons) for v in values]
            columns[f"{name}.lower"] = [_bound(v, v.lower) for v in values]
            columns[f"{name}.upper"] = [_bound(v, v.upper) for v in values]
            residuals = [v.residual for v in values]
            if any(r is not None for r in residuals):
                columns[f"{name}.residual"] = [nan if r is None else r for r in residuals]
        return pd.DataFrame(columns)

    def to_json(self) -> str:
        """The contract's JSON (section 7), exactly as ``evalcore evaluate`` prints it
        (written from the arrays by :func:`evalcore.api.report_text.report_text`)."""
        from evalcore.api.report_text import report_text

        diagnostics = self._diagnostics or Diagnostics()
        return report_text(self.arrays, diagnostics.tied_score_pairs, diagnostics.notes)

    def __repr__(self) -> str:
        shown = ", ".join(
            f"{name}={value:.4f}" if isinstance(value, float) else f"{name}={value!r}"
            for name, value in self.aggregates.items()
        )
        return f"EvaluationResult({len(self.arrays.batch)} queries: {shown})"


def _bound(value: Any, bound: float | None) -> float:
    if value.available:
        return value.value
    both = value.lower is not None and value.upper is not None
    return bound if both and bound is not None else float("nan")
