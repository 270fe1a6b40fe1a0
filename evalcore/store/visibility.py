"""The access rule of a retrieval protocol as SQL: which documents of a corpus it may see.

A document is visible when it belongs to the corpus, its ``owner_org`` is one of the
protocol's organisations (an unowned one never is) and it was created at or before the
cutoff. Times are compared as instants: both sides are normalised to six fractional digits
first (as strings, ``...00.500000Z`` would sort before ``...00Z``)."""

import json
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime

from evalcore.store.document_imports import published

#: ``created_at`` of the ``documents`` row aliased ``d``, normalised to microseconds.
_CREATED_AT_US = (
    "(CASE WHEN length(d.created_at) = 20 "
    "THEN substr(d.created_at, 1, 19) || '.000000Z' ELSE d.created_at END)"
)


def cutoff_key(cutoff: datetime) -> str:
    """The cutoff as a ``YYYY-MM-DDTHH:MM:SS.ffffffZ`` string (naive means UTC)."""
    if cutoff.tzinfo is None:
        cutoff = cutoff.replace(tzinfo=UTC)
    return cutoff.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass(frozen=True)
class Visibility:
    """A corpus, an optional organisation set and an optional cutoff, as SQL: ``where`` over
    ``documents`` aliased ``d``, ``params`` its named parameters. None means no restriction (the
    search box only; a pinned protocol always has both)."""

    corpus_id: str
    organisations: tuple[str, ...] | None = None
    cutoff: datetime | None = None

    @classmethod
    def of(
        cls,
        corpus_id: str,
        organisations: Iterable[str] | None = None,
        cutoff: datetime | None = None,
    ) -> "Visibility":
        orgs = None if organisations is None else tuple(sorted(set(organisations)))
        return cls(corpus_id=corpus_id, organisations=orgs, cutoff=cutoff)

    @property
    def where(self) -> str:
        parts = ["d.corpus_id = :vis_corpus", published("d")]
        if self.organisations is not None:
            parts.append("d.owner_org IN (SELECT value FROM json_each(:vis_orgs))")
        if self.cutoff is not None:
            parts.append(f"{_CREATED_AT_US} <= :vis_cutoff")
        return " AND ".join(parts)

    @property
    def params(self) -> dict[str, str]:
        out = {"vis_corpus": self.corpus_id}
        if self.organisations is not None:
            out["vis_orgs"] = json.dumps(list(self.organisations))
        if self.cutoff is not None:
            out["vis_cutoff"] = cutoff_key(self.cutoff)
        return out
