"""An aggregate as the words of a dashboard card: the mean, or why there is none.

Formats only what :mod:`evalcore.compute.aggregate` decided: an unavailable aggregate
reads ``unavailable — 13 of 50 queries missing (9 unlabeled results in the top k, ...)``,
reasons in plain words counted per reason, with its interval written by
:mod:`evalcore.analysis.interval_text`; bounds only when the aggregate defines them.
"""


from evalcore.analysis.frozen import FrozenModel
from evalcore.analysis.interval_text import SEPARATOR, UNAVAILABLE, unavailable_detail
from evalcore.contract.reasons import reason_words
from evalcore.contract.results import AggregateValue


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


def aggregate_card(value: AggregateValue, unknowns: tuple[int, int] | None = None
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
