"""The measure catalogue as data (evidence contract section 10).

A :class:`Measure` names one measure: its family, an optional cutoff ``k``,
and the family's parameters (``rel`` overrides the relevance threshold, ``p``
is RBP's persistence). Measures print in a canonical form that parses back
unchanged::

    P@5  P(rel=2)@5  R@100  nDCG@10  RR@10  AP@100  Success@10  Judged@10  RBP(p=0.8)@10

Without ``@k`` the observation's ``k`` is the cutoff (``P``, ``nDCG``, ...).
``MRR@k`` is read as ``RR@k`` (the mean of reciprocal rank is MRR; the
per-query measure is RR). Family names are matched case-insensitively
(``ndcg@10`` is ``nDCG@10``); the canonical spelling is the one printed.
:func:`parse_measure` raises :class:`UnknownMeasure` (a ``ValueError``) that
says what is wrong and lists the known forms.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from numbers import Integral

from evalcore.contract.gains import MAX_GAIN
from evalcore.contract.limits import MAX_K

#: Family -> the parameters it accepts (in canonical print order).
FAMILIES: dict[str, tuple[str, ...]] = {
    "P": ("rel",),
    "R": ("rel",),
    "nDCG": (),
    "RR": ("rel",),
    "AP": ("rel",),
    "Success": ("rel",),
    "Judged": (),
    "RBP": ("p", "rel"),
}
#: Aliases read by :func:`parse_measure` (lower case) -> canonical family.
_ALIASES: dict[str, str] = {name.lower(): name for name in FAMILIES} | {"mrr": "RR"}
#: RBP's persistence when ``p`` is not given.
DEFAULT_RBP_P = 0.8

KNOWN_FORMS = (
    "P@k, P(rel=r)@k, R@k, nDCG@k, RR@k (or MRR@k), AP@k, Success@k, Judged@k, RBP(p=0.8)@k; "
    "k is a positive integer cutoff, omit @k to use each observation's k; "
    f"r is a relevance threshold 1..{MAX_GAIN}, p a persistence 0 < p < 1"
)

_SYNTAX = re.compile(r"(?P<family>[A-Za-z]+)(?:\((?P<params>[^()]*)\))?(?:@(?P<k>[^@]*))?")


class UnknownMeasure(ValueError):
    """A measure name that does not parse; the message names the problem and the known forms."""

    def __init__(self, text: str, problem: str) -> None:
        self.text = text
        self.problem = problem
        super().__init__(f"unknown measure {text!r}: {problem}; known measures: {KNOWN_FORMS}")


@dataclass(frozen=True)
class Measure:
    """One measure of the catalogue; ``str(m)`` is its canonical name."""

    family: str
    k: int | None = None
    rel: int | None = None
    p: float | None = None

    def __post_init__(self) -> None:
        allowed = FAMILIES.get(self.family)
        if allowed is None:
            raise UnknownMeasure(self.family, f"no measure family {self.family!r}")
        for name in ("k", "rel"):  # a numpy integer is the integer it holds (never a bool)
            value = getattr(self, name)
            if isinstance(value, Integral) and not isinstance(value, bool | int):
                object.__setattr__(self, name, int(value))
        if self.k is not None and (
            isinstance(self.k, bool) or not isinstance(self.k, int) or self.k < 1
        ):
            raise UnknownMeasure(self.family, f"cutoff k must be a positive integer, got {self.k!r}")
        if self.k is not None and self.k > MAX_K:
            raise UnknownMeasure(self.family, f"cutoff {self.k} is deeper than the deepest "
                                 f"cutoff {MAX_K} (2^63 - 1)")
        if self.rel is not None:
            if "rel" not in allowed:
                raise UnknownMeasure(self.family, f"{self.family} takes no rel= parameter")
            if (
                isinstance(self.rel, bool)
                or not isinstance(self.rel, int)
                or not 1 <= self.rel <= MAX_GAIN
            ):
                raise UnknownMeasure(
                    self.family, f"rel must be an integer 1..{MAX_GAIN}, got {self.rel!r}"
                )
        if self.family == "RBP":
            p = DEFAULT_RBP_P if self.p is None else self.p
            if isinstance(p, bool) or not isinstance(p, int | float) or not 0.0 < p < 1.0:
                raise UnknownMeasure("RBP", f"p must be a number with 0 < p < 1, got {p!r}")
            object.__setattr__(self, "p", float(p))
        elif self.p is not None:
            raise UnknownMeasure(self.family, f"{self.family} takes no p= parameter")

    @property
    def canonical(self) -> str:
        given = {"rel": self.rel, "p": self.p}
        params = [f"{name}={given[name]!r}" for name in FAMILIES[self.family] if given[name] is not None]
        text = self.family + (f"({','.join(params)})" if params else "")
        return text if self.k is None else f"{text}@{self.k}"

    @property
    def aggregate_name(self) -> str:
        """The name of the measure's mean: ``MRR@k`` for ``RR@k``, else the canonical name."""
        name = self.canonical
        return "M" + name if self.family == "RR" else name

    def __str__(self) -> str:
        return self.canonical


def parse_measure(text: str) -> Measure:
    """The :class:`Measure` named by ``text`` (see the module docstring for the forms)."""
    if not isinstance(text, str):
        raise UnknownMeasure(repr(text), "a measure name is text, like 'nDCG@10'")
    stripped = text.strip()
    match = _SYNTAX.fullmatch(stripped)
    if match is None:
        raise UnknownMeasure(text, "it is not of the form NAME, NAME@k or NAME(param=value)@k")
    family = _ALIASES.get(match["family"].lower())
    if family is None:
        raise UnknownMeasure(text, f"no measure family {match['family']!r}")
    k = None
    if match["k"] is not None:
        if not re.fullmatch(r"[0-9]+", match["k"]) or int(match["k"]) < 1:
            raise UnknownMeasure(text, f"cutoff {match['k']!r} is not a positive integer")
        k = int(match["k"])
    values: dict[str, str] = {}
    if match["params"] is not None:
        for part in match["params"].split(","):
            name, eq, value = (s.strip() for s in part.partition("="))
            if not eq or not name or not value:
                raise UnknownMeasure(text, f"parameter {part.strip()!r} is not name=value")
            if name not in FAMILIES[family]:
                takes = ", ".join(f"{p}=" for p in FAMILIES[family]) or "no parameters"
                raise UnknownMeasure(text, f"{family} takes {takes}, not {name}=")
            if name in values:
                raise UnknownMeasure(text, f"parameter {name}= is given twice")
            values[name] = value
    rel = p = None
    if "rel" in values:
        if not re.fullmatch(r"[0-9]+", values["rel"]):
            raise UnknownMeasure(
                text, f"rel must be an integer 1..{MAX_GAIN}, got {values['rel']!r}"
            )
        rel = int(values["rel"])
    if "p" in values:
        try:
            p = float(values["p"])
        except ValueError:
            raise UnknownMeasure(text, f"p must be a number, got {values['p']!r}") from None
        if not math.isfinite(p):
            raise UnknownMeasure(text, f"p must be a number with 0 < p < 1, got {values['p']!r}")
    try:
        return Measure(family, k, rel, p)
    except UnknownMeasure as exc:
        raise UnknownMeasure(text, exc.problem) from None


#: The section-7 default set: each observation's own k (outputs keep their legacy keys).
DEFAULT_MEASURES: tuple[Measure, ...] = (
    Measure("P"),
    Measure("R"),
    Measure("nDCG"),
    Measure("RR"),
)
