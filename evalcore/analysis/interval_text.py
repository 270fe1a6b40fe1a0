"""The one way an unavailable measure is written: the interval the truth lies in, or why none.

Every screen and report card writes an unavailable value with these functions, so they
read alike (``unavailable · 0.41 to 0.58, 23 unlabeled, 2 in conflict``). Bounds are
rounded outwards, so the printed interval still holds the truth; the counts are the
unknown units behind the missing values (unlabeled and in conflict apart). Without bounds
the text says why: the reasons other than unknown labels (those alone always give
bounds). :func:`aggregate_card` gives the words of a dashboard card: the mean, or ``unavailable —
13 of 50 queries missing (9 unlabeled results in the top k, ...)`` with the reasons in
plain words, counted per reason. Formats only; never computes a measure.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence

from evalcore.contract.frozen import FrozenModel
from evalcore.contract.reasons import Reason, reason_words
from evalcore.contract.results import AggregateValue, MetricValue

#: The word every unavailable value starts with, and the separator before its interval.
UNAVAILABLE = "unavailable"
SEPARATOR = " · "
#: Decimals of a printed bound.
BOUND_DIGITS = 2
#: Reasons that only unknown labels cause: they leave the value bounded.
_UNKNOWN_REASONS = frozenset({Reason.UNLABELED_RETURNED.value, Reason.LABEL_CONFLICT.value})


def _outwards(x: float, rounding: Callable[[float], int]) -> str:
    """``x`` rounded down (``math.floor``) or up (``math.ceil``) to :data:`BOUND_DIGITS`."""
    scale = 10**BOUND_DIGITS
    return f"{rounding(round(x * scale, 6)) / scale:.{BOUND_DIGITS}f}"


def unknown_counts(values: Iterable[MetricValue | None]) -> tuple[int, int]:
    """(unlabeled, in conflict): the unknown units behind the unavailable ``values``
    (one per query and unit; a unit counts once per query it is unknown in)."""
    unlabeled = conflicts = 0
    for mv in values:
        if mv is not None and not mv.available:
            unlabeled += len(mv.blocking_ids)
            conflicts += len(mv.conflict_ids)
    return unlabeled, conflicts


def interval_text(lower: float, upper: float, unlabeled: int | None, conflicts: int = 0) -> str:
    """``0.41 to 0.58, 23 unlabeled`` (``, 2 in conflict`` when there are some; no counts
    when ``unlabeled`` is None: not known to the caller)."""
    text = f"{_outwards(lower, math.floor)} to {_outwards(upper, math.ceil)}"
    if unlabeled is None:
        return text
    if unlabeled or not conflicts:
        text += f", {unlabeled} unlabeled"
    if conflicts:
        text += f", {conflicts} in conflict"
    return text


def why_unbounded(reasons: Mapping[str, int] | Sequence[str]) -> str:
    """Why a value has no bounds: ``population incomplete on 9 queries`` for an aggregate's
    reason counts, ``population incomplete`` for one query's reasons."""
    if isinstance(reasons, Mapping):
        items = [(code, n) for code, n in reasons.items() if code not in _UNKNOWN_REASONS] or list(
            reasons.items())
        items.sort(key=lambda kv: (-kv[1], kv[0]))
        return ", ".join(f"{_words(code)} on {n} {_queries(n)}"
                         for code, n in items) or "no bounds"
    codes = [code for code in reasons if code not in _UNKNOWN_REASONS] or list(reasons)
    return ", ".join(_words(code) for code in codes) or "no bounds"


def _words(code: str) -> str:
    return code.replace("_", " ")


def unavailable_detail(
    lower: float | None,
    upper: float | None,
    unlabeled: int | None,
    conflicts: int,
    reasons: Mapping[str, int] | Sequence[str],
) -> str:
    """What follows ``unavailable · ``: the interval when bounded, else why not."""
    if lower is not None and upper is not None:
        return interval_text(lower, upper, unlabeled, conflicts)
    return why_unbounded(reasons)


def metric_value_text(value: MetricValue | None, digits: int = 4) -> str:
    """One query's value: ``0.5000``, or ``unavailable · 0.20 to 0.60, 4 unlabeled``."""
    if value is None:
        return "not computed"
    if value.available and value.value is not None:
        return f"{value.value:.{digits}f}"
    unlabeled, conflicts = unknown_counts([value])
    return UNAVAILABLE + SEPARATOR + unavailable_detail(
        value.lower, value.upper, unlabeled, conflicts, value.reasons)


def aggregate_value_text(value: AggregateValue, unlabeled: int | None, conflicts: int = 0) -> str:
    """An aggregate: ``0.5320``, or ``unavailable · 0.41 to 0.58, 23 unlabeled`` (``unlabeled``
    and ``conflicts`` counted over the missing queries, see :func:`unknown_counts`)."""
    return aggregate_card(value, (unlabeled, conflicts)).status_line


class AggregateCard(FrozenModel):
    """The texts of one card."""

    available: bool
    #: "0.5320" or "unavailable"
    headline: str
    #: "mean over 50 queries" or "13 of 50 queries missing (9 unlabeled_returned, ...)"
    detail: str
    #: "bounds 0.4100–0.6300" when defined, else None
    bounds: str | None = None
    #: beside "unavailable": "0.41 to 0.58, 23 unlabeled" or "population incomplete on 9
    #: queries" (None when available)
    interval: str | None = None

    @property
    def status_line(self) -> str:
        """``0.5320``, or ``unavailable · 0.41 to 0.58, 23 unlabeled``."""
        return self.headline if self.interval is None else (
            f"{UNAVAILABLE}{SEPARATOR}{self.interval}")

    @property
    def sentence(self) -> str:
        """The card in one line, e.g. ``unavailable — 13 of 50 queries missing (...)``."""
        text = f"{self.headline} — {self.detail}"
        return f"{text}; {self.bounds}" if self.bounds else text


def aggregate_card(value: AggregateValue, unknowns: tuple[int | None, int] | None = None
                   ) -> AggregateCard:
    """The card texts of an aggregate (section 6 of the contract).

    ``unknowns`` is (unlabeled, in conflict) over the missing queries
    (:func:`evalcore.analysis.interval_text.unknown_counts`); without it the interval
    carries no counts.
    """
    if value.available and value.value is not None:
        return AggregateCard(
            available=True,
            headline=f"{value.value:.4f}",
            detail=f"mean over {value.n_queries} {_queries(value.n_queries)}",
        )
    if value.n_queries == 0:
        return AggregateCard(available=False, headline="unavailable", detail="no queries",
                             interval="no queries")
    reasons = ", ".join(f"{n} {reason_words(code)}" for code, n in sorted(value.reasons.items(),
                                                             key=lambda kv: (-kv[1], kv[0])))
    detail = f"{value.n_missing} of {value.n_queries} {_queries(value.n_queries)} missing"
    if reasons:
        detail += f" ({reasons})"
    bounds = None
    if value.lower is not None and value.upper is not None:
        bounds = f"bounds {value.lower:.4f}–{value.upper:.4f}"
    unlabeled, conflicts = unknowns if unknowns is not None else (None, 0)
    interval = unavailable_detail(value.lower, value.upper, unlabeled, conflicts, value.reasons)
    return AggregateCard(available=False, headline="unavailable", detail=detail, bounds=bounds,
                         interval=interval)


def _queries(n: int) -> str:
    return "query" if n == 1 else "queries"
