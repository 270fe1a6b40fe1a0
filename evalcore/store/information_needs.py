"""A query's information need: its description and narrative (the assessor's guideline).

Imported with the queries (TREC ``<desc>`` and ``<narr>``, or query file fields) and shown
beside the query text. A lead may edit it: :func:`set_information_need` records the old and
new values in the audit log (``query.need.set``) in the same transaction."""

from __future__ import annotations

from collections.abc import Iterable

import sqlite_utils
from pydantic import BaseModel, ConfigDict, Field, StrictStr

from evalcore.access.roles import Permission
from evalcore.contract.limits import MAX_NEED_CHARS
from evalcore.store.audit import record_audit
from evalcore.store.authorize import authorize, require_known_study
from evalcore.store.lookup import not_found
from evalcore.store.study_handle import Study
from evalcore.store.transaction import write_transaction


class InformationNeed(BaseModel):
    """What the query's author is looking for, in words; empty strings when unknown."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    description: StrictStr = Field(default="", max_length=MAX_NEED_CHARS)
    narrative: StrictStr = Field(default="", max_length=MAX_NEED_CHARS)

    @property
    def empty(self) -> bool:
        return not (self.description.strip() or self.narrative.strip())


class QueryNotFoundError(LookupError):
    """The named query is not registered in the study."""


def information_need(study: Study, query_id: str) -> InformationNeed:
    """The query's information need (empty when it has none or is not registered)."""
    row = study.db.execute(
        "SELECT description, narrative FROM queries WHERE study_id = ? AND query_id = ?",
        [study.study_id, query_id],
    ).fetchone()
    return InformationNeed() if row is None else InformationNeed(description=row[0],
                                                                 narrative=row[1])


def information_needs(
    study: Study, query_ids: Iterable[str] | None = None
) -> dict[str, InformationNeed]:
    """query_id -> its non-empty information need, for the study (or only ``query_ids``)."""
    wanted = None if query_ids is None else set(query_ids)
    out: dict[str, InformationNeed] = {}
    for qid, desc, narr in study.db.execute(
        "SELECT query_id, description, narrative FROM queries WHERE study_id = ? "
        "AND (description != '' OR narrative != '')",
        [study.study_id],
    ):
        if wanted is None or qid in wanted:
            out[qid] = InformationNeed(description=desc, narrative=narr)
    return out


def set_information_need(
    db: sqlite_utils.Database,
    *,
    study_id: str,
    query_id: str,
    need: InformationNeed,
    actor: str | None,
) -> InformationNeed:
    """Replace the query's information need (lead only in team mode) with its audit entry, in
    one transaction; return the old one. :class:`QueryNotFoundError` (naming some known
    queries) for a query the study does not have."""
    require_known_study(db, actor, study_id)
    with write_transaction(db):
        authorize(db, study_id=study_id, actor=actor, permission=Permission.EDIT_QUERIES)
        row = db.execute(
            "SELECT description, narrative FROM queries WHERE study_id = ? AND query_id = ?",
            [study_id, query_id],
        ).fetchone()
        if row is None:
            known = [r[0] for r in db.execute(
                "SELECT query_id FROM queries WHERE study_id = ? ORDER BY query_id LIMIT 10",
                [study_id])]
            raise not_found(QueryNotFoundError, f"no query {query_id!r} in study {study_id!r}",
                            known, listing="some of its queries",
                            none_yet="the study has no query yet",
                            advice="; import the queries first")
        old = InformationNeed(description=row[0], narrative=row[1])
        db.execute(
            "UPDATE queries SET description = ?, narrative = ? WHERE study_id = ? AND query_id = ?",
            [need.description, need.narrative, study_id, query_id],
        )
        change = {"query_id": query_id, "old": old.model_dump(), "new": need.model_dump()}
        record_audit(db, actor, "query.need.set", study_id=study_id, detail=change)
    return old
