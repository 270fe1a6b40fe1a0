"""Query sets: the queries a comparison or report is over, named once and resolved once.

A lead names the set with a short spec (:meth:`QuerySetSpec.parse`): ``all`` (the default:
every query the runs are compared over, removed ones left out), ``judged`` (a relevant
label in the working reference), ``answered`` (every compared run returned a result), or
an explicit list ``q1,q2`` or ``@FILE`` (one id a line; blank and ``#`` lines skipped).
:func:`resolve_query_set` resolves it against the store's facts into the ids, in natural
order, that every number is computed on; an unknown or removed id, or an empty set, is
refused with :class:`QuerySetError` naming the ids and, for a file, ``file:line``.
"""

from __future__ import annotations

import stat
from collections import Counter
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from evalcore.analysis.shared_evidence import shared_evidence
from evalcore.compute.aggregate import aggregate_arrays
from evalcore.contract.frozen import FrozenModel
from evalcore.contract.query_order import natural_key
from evalcore.contract.results import AggregateValue, EvaluationReport
from evalcore.store.observations import QueryFacts, query_facts
from evalcore.store.study_handle import Study

QuerySetKind = Literal["all", "judged", "answered", "list"]
KINDS: tuple[str, ...] = ("all", "judged", "answered")
#: What each named kind holds, in words (help texts, the page's chooser).
KIND_TEXT: dict[str, str] = {
    "all": "every query of the study",
    "judged": "queries with at least one relevant label",
    "answered": "queries every compared run returned a result for",
    "list": "the queries listed",
}
#: The most ids an explicit list may name (a file of a million lines is a mistake).
MAX_LISTED = 100_000
#: The largest query set file read (far above 100,000 ids of ordinary length).
MAX_FILE_BYTES = 16 * 2**20
#: The most unknown ids a refusal names (then "and N more").
SHOWN_UNKNOWN = 10


class QuerySetError(ValueError):
    """A query set that cannot be used: the message says what and where."""


class QuerySetSpec(BaseModel):
    """How a lead named a query set (before it is resolved against a study)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: QuerySetKind = "all"
    #: the ids of an explicit list, in the order given, duplicates dropped
    ids: tuple[str, ...] = ()
    #: the file the list was read from (``@FILE``), and each id's line in it
    source: str | None = None
    lines: tuple[int, ...] = ()

    @classmethod
    def parse(cls, text: str | None) -> QuerySetSpec:
        """``all`` / ``judged`` / ``answered`` / ``q1,q2`` / ``@FILE``; None or blank: all."""
        text = (text or "").strip()
        if not text or text.lower() in KINDS:
            return cls(kind=text.lower() or "all")  # type: ignore[arg-type]
        if text.startswith("@"):
            return cls._from_file(text[1:])
        ids = [part.strip() for part in text.split(",")]
        named = list(dict.fromkeys(i for i in ids if i))
        if not named:
            raise QuerySetError(
                f"the query set {text!r} names no query: give all, judged, "
                "answered, comma-separated query ids or @FILE"
            )
        if len(named) > MAX_LISTED:
            raise QuerySetError(f"the query set names {len(named)} queries; at most {MAX_LISTED}")
        return cls(kind="list", ids=tuple(named))

    @classmethod
    def _from_file(cls, name: str) -> QuerySetSpec:
        if not name.strip():
            raise QuerySetError("the query set '@' names no file: give @FILE, one query id a line")
        path = Path(name)
        try:
            info = path.stat()
        except FileNotFoundError:
            raise QuerySetError(
                f"query set file {path} does not exist: give @FILE of an "
                "existing file, one query id a line"
            ) from None
        except OSError as err:
            raise QuerySetError(f"query set file {path} cannot be read ({err.strerror})") from None
        if stat.S_ISDIR(info.st_mode):
            raise QuerySetError(
                f"query set file {path} is a folder: give a file, one query id a line"
            )
        if not stat.S_ISREG(info.st_mode):
            raise QuerySetError(
                f"query set file {path} is not a regular file (a device or a pipe): give a "
                "file, one query id a line"
            )
        try:
            with path.open("rb") as handle:
                raw = handle.read(MAX_FILE_BYTES + 1)
        except OSError as err:
            raise QuerySetError(f"query set file {path} cannot be read ({err.strerror})") from None
        if len(raw) > MAX_FILE_BYTES:
            raise QuerySetError(
                f"query set file {path} is over {MAX_FILE_BYTES // 2**20} MiB: a query set "
                f"file holds one query id a line, at most {MAX_LISTED} of them"
            )
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError as err:
            line = raw[: err.start].count(b"\n") + 1
            raise QuerySetError(
                f"{path}:{line}: not UTF-8 text; a query set file holds one query id a line"
            ) from None
        ids: dict[str, int] = {}
        for number, line in enumerate(text.splitlines(), start=1):
            item = line.strip()
            if item and not item.startswith("#"):
                ids.setdefault(item, number)
                if len(ids) > MAX_LISTED:
                    raise QuerySetError(f"{path}:{number}: more than {MAX_LISTED} query ids")
        if not ids:
            raise QuerySetError(
                f"query set file {path} names no query: one query id a line "
                "(lines starting with # are skipped)"
            )
        return cls(kind="list", ids=tuple(ids), source=str(path), lines=tuple(ids.values()))

    def text(self) -> str:
        """The spec as a lead writes it (``judged``; ``q1,q2``; ``@file``)."""
        if self.kind != "list":
            return self.kind
        if self.source is not None:
            return f"@{self.source}"
        return ",".join(self.ids)

    def where(self, query_id: str) -> str:
        """Where a listed id was given: ``file:line`` for a file, else the id quoted."""
        if self.source is not None and query_id in self.ids:
            return f"{self.source}:{self.lines[self.ids.index(query_id)]}: {query_id!r}"
        return repr(query_id)


class QuerySetRecord(FrozenModel):
    """The query set a report or comparison is over, as recorded with it."""

    kind: QuerySetKind = "all"
    #: the spec as given (``judged``, ``@topics.txt``, ``q1,q2``)
    spec: str = "all"
    #: how many queries the set resolved to
    n_queries: int = 0
    #: how many queries the runs could have been compared over (removed ones left out)
    n_study: int = 0
    #: the ids of an explicit list (empty for the named kinds)
    query_ids: list[str] = Field(default_factory=list)

    def describe(self) -> str:
        """``queries: judged (42 of 50 queries with at least one relevant label)``."""
        what = KIND_TEXT[self.kind]
        if self.kind == "all":
            noun = "query" if self.n_queries == 1 else "queries"
            return f"queries: all ({self.n_queries} {noun}; {what})"
        return f"queries: {self.spec} ({self.n_queries} of {self.n_study}; {what})"


class ResolvedQuerySet(FrozenModel):
    """A spec resolved against a study: the ids comparisons are computed on."""

    spec: QuerySetSpec
    #: in natural query order
    query_ids: tuple[str, ...]
    n_study: int

    @property
    def is_all(self) -> bool:
        return self.spec.kind == "all"

    @property
    def scope(self) -> list[str] | None:
        """The ids to read, or None for ``all`` (each read takes the study's queries)."""
        return None if self.is_all else list(self.query_ids)

    def record(self) -> QuerySetRecord:
        return QuerySetRecord(
            kind=self.spec.kind,
            spec=self.spec.text(),
            n_queries=len(self.query_ids),
            n_study=self.n_study,
            query_ids=list(self.query_ids) if self.spec.kind == "list" else [],
        )


def resolve_query_set(
    spec: QuerySetSpec, facts: QueryFacts, runs: Sequence[str] | None = None
) -> ResolvedQuerySet:
    """The queries of ``facts`` that ``spec`` names (``answered``: answered by every one of
    ``runs``, default every run of ``facts``). Raises :class:`QuerySetError` for an id that
    is not a query of the study or is removed, and for an empty set."""
    pool = facts.query_ids
    if spec.kind == "all":
        chosen = list(pool)
    elif spec.kind == "judged":
        chosen = [q for q in pool if q in facts.judged]
    elif spec.kind == "answered":
        names = list(facts.answered) if runs is None else list(runs)
        sets = [facts.answered[name] for name in names]
        chosen = [q for q in pool if all(q in s for s in sets)]
    else:
        chosen = _listed(spec, facts)
    if not chosen:
        why = {
            "all": "the runs rank no query and no query is labeled",
            "judged": "no query has a relevant label in the working reference yet",
            "answered": "no query was answered by every run compared",
        }.get(spec.kind, "")
        raise QuerySetError(
            f"the query set {spec.text()!r} is empty in study "
            f"{facts.study_id!r}: {why}; choose another set (--queries all)"
        )
    return ResolvedQuerySet(spec=spec, query_ids=tuple(chosen), n_study=len(pool))


def _listed(spec: QuerySetSpec, facts: QueryFacts) -> list[str]:
    pool = set(facts.query_ids)
    unknown = [q for q in spec.ids if q not in facts.study_query_ids]
    removed = [q for q in spec.ids if q in facts.removed]
    if unknown:
        shown = "; ".join(spec.where(q) for q in unknown[:SHOWN_UNKNOWN])
        more = f" and {len(unknown) - SHOWN_UNKNOWN} more" if len(unknown) > SHOWN_UNKNOWN else ""
        raise QuerySetError(
            f"{len(unknown)} listed quer{'y is' if len(unknown) == 1 else 'ies are'} not in "
            f"study {facts.study_id!r}: {shown}{more}; list only the study's query ids"
        )
    if removed:
        shown = "; ".join(spec.where(q) for q in removed[:SHOWN_UNKNOWN])
        raise QuerySetError(
            f"{len(removed)} listed quer{'y is' if len(removed) == 1 else 'ies are'} removed "
            f"from study {facts.study_id!r}: {shown}; restore "
            f"{'it' if len(removed) == 1 else 'them'} first (evalcore queries restore) or "
            f"leave {'it' if len(removed) == 1 else 'them'} out"
        )
    # A study query neither run ranks and no reference labels stays in the set: both runs
    # returned nothing for it.
    return sorted((q for q in spec.ids if q in pool or q in facts.study_query_ids), key=natural_key)


def resolve_stored_query_set(
    study: Study, runs: Sequence[str], spec: QuerySetSpec | str | None, reference: str | None = None
) -> ResolvedQuerySet:
    """:func:`resolve_query_set` of ``spec`` for stored ``runs`` compared against
    ``reference`` (None: the working labels), for a caller that authorised the read. The
    working labels are the study's shared evidence's
    (:func:`evalcore.analysis.shared_evidence.shared_evidence`)."""
    if not isinstance(spec, QuerySetSpec):
        spec = QuerySetSpec.parse(spec)
    working = shared_evidence(study).reference
    return resolve_query_set(spec, query_facts(study, runs, reference, working=working), runs)


def restrict_evaluation(report: EvaluationReport, query_ids: Collection[str]) -> EvaluationReport:
    """``report`` over the queries of ``query_ids`` only: its per-query results kept as they
    are, every aggregate computed again by the contract's rule (section 6) over them."""
    wanted = set(query_ids)
    queries = [q for q in report.queries if q.query_id in wanted]
    aggregates: dict[str, AggregateValue] = {}
    for name in report.aggregates:
        values = [q.metrics[name] for q in queries if name in q.metrics]
        available = np.fromiter((v.available for v in values), dtype=bool, count=len(values))
        value = np.array([v.value if v.available else np.nan for v in values], dtype=float)
        lower = np.array([np.nan if v.lower is None else v.lower for v in values], dtype=float)
        upper = np.array([np.nan if v.upper is None else v.upper for v in values], dtype=float)
        reasons = Counter(r for v in values if not v.available for r in dict.fromkeys(v.reasons))
        aggregates[name] = aggregate_arrays(available, value, lower, upper, reasons)
    return report.model_copy(update={"queries": queries, "aggregates": aggregates})
