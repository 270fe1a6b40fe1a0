"""Queries a lead took out of a study.

A lead removes a query that should not count (a broken topic, a duplicate, a query no run
can answer) with :func:`remove_query` and brings it back with :func:`restore_query`: both
lead-only in team mode (``REMOVE_QUERIES``), each with its audit entry (``query.remove`` /
``query.restore``, with the reason) in the same transaction. Removal keeps every label,
completeness event and ranking of the query (exports and archives hold them); comparisons,
dashboards, pools and reports leave it out (:func:`removed_query_ids`)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

import sqlite_utils

from evalcore.access.roles import Permission
from evalcore.contract.frozen import FrozenModel
from evalcore.contract.query_order import natural_key
from evalcore.io.clock import utc_now_iso
from evalcore.store.audit import record_audit
from evalcore.store.authorize import authorize
from evalcore.store.lookup import column, exists, models
from evalcore.store.studies import get_study
from evalcore.store.study_handle import Study, open_study
from evalcore.store.transaction import write_transaction

#: The longest reason a removal may give.
MAX_REASON = 500


class RemovedQuery(FrozenModel):
    """A query out of its study: who took it out, when and why."""

    query_id: str
    removed_at: str
    removed_by: str
    reason: str


class QueryNotInStudyError(LookupError):
    """The query id is not one of the study's queries."""


def removed_queries(study: Study) -> list[RemovedQuery]:
    """The study's removed queries, in natural query order."""
    rows = study.db.execute(
        "SELECT query_id, removed_at, removed_by, reason FROM removed_queries WHERE study_id = ?",
        [study.study_id],
    ).fetchall()
    return sorted(models(RemovedQuery, rows), key=lambda q: natural_key(q.query_id))


def removed_query_ids(study: Study) -> frozenset[str]:
    """The ids of the study's removed queries (what every query set leaves out)."""
    rows = study.db.execute("SELECT query_id FROM removed_queries WHERE study_id = ?",
                            [study.study_id])
    return frozenset(r[0] for r in rows)


def remove_query(
    db: sqlite_utils.Database, *, study_id: str, query_id: str, actor: str | None, reason: str = ""
) -> RemovedQuery:
    """Take ``query_id`` out of the study (lead only in team mode), keeping its labels.
    ``StudyNotFoundError``, :class:`QueryNotInStudyError`, ``ValueError`` (already removed;
    reason too long) or ``PermissionDenied`` write nothing."""
    reason = _checked_reason(reason)
    get_study(db, study_id)
    with write_transaction(db):
        study = open_study(db, study_id, actor, Permission.REMOVE_QUERIES)
        if query_id not in study_query_ids(study):
            raise QueryNotInStudyError(
                f"no query {query_id!r} in study {study_id!r}: no run, label or registered "
                "query has this id (list them with: evalcore queries list --study "
                f"{study_id})"
            )
        if exists(db, "SELECT 1 FROM removed_queries WHERE study_id = ? AND query_id = ?",
                  [study_id, query_id]):
            raise ValueError(
                f"query {query_id!r} is already removed from study {study_id!r}; "
                "restore it with: evalcore queries restore"
            )
        removed = RemovedQuery(
            query_id=query_id, removed_at=utc_now_iso(), removed_by=actor or "local", reason=reason
        )
        db.execute(
            "INSERT INTO removed_queries (study_id, query_id, removed_at, removed_by, "
            "reason) VALUES (?, ?, ?, ?, ?)",
            [study_id, query_id, removed.removed_at, removed.removed_by, reason],
        )
        removal = {"query_id": query_id, "reason": reason}
        record_audit(db, actor, "query.remove", study_id=study_id, detail=removal)
    return removed


def _checked_reason(reason: str) -> str:
    reason = reason.strip()
    if len(reason) > MAX_REASON:
        raise ValueError(f"the reason is {len(reason)} characters long; at most {MAX_REASON}")
    return reason


def restore_query(
    db: sqlite_utils.Database, *, study_id: str, query_id: str, actor: str | None, reason: str = ""
) -> RemovedQuery:
    """Bring a removed query back into the study (lead only in team mode); returns the
    removal undone. ``ValueError`` when the query is not removed; nothing is written then."""
    reason = _checked_reason(reason)
    get_study(db, study_id)
    with write_transaction(db):
        authorize(db, study_id=study_id, actor=actor, permission=Permission.REMOVE_QUERIES)
        row = db.execute(
            "SELECT query_id, removed_at, removed_by, reason FROM removed_queries "
            "WHERE study_id = ? AND query_id = ?",
            [study_id, query_id],
        ).fetchone()
        if row is None:
            raise ValueError(
                f"query {query_id!r} is not removed from study {study_id!r}: "
                "nothing to restore (evalcore queries list --removed shows "
                "the removed ones)"
            )
        db.execute(
            "DELETE FROM removed_queries WHERE study_id = ? AND query_id = ?", [study_id, query_id]
        )
        restored = {"query_id": query_id, "reason": reason, "removed_by": row[2],
                    "removed_at": row[1]}
        record_audit(db, actor, "query.restore", study_id=study_id, detail=restored)
    return models(RemovedQuery, [row])[0]


def study_query_ids(study: Study) -> list[str]:
    """Every query id of the study (registered, labeled, claimed or ranked by a run),
    removed ones included, in natural order."""
    ids = column(study.db, "SELECT query_id FROM queries WHERE study_id = ?1 "
                 "UNION SELECT query_id FROM label_events WHERE study_id = ?1 "
                 "UNION SELECT query_id FROM completeness_events WHERE study_id = ?1 "
                 "UNION SELECT r.query_id FROM run_rankings r JOIN runs u ON u.run_id = r.run_id "
                 "WHERE u.study_id = ?1", [study.study_id])
    return sorted(ids, key=natural_key)


def removals_in_audit(rows: Iterable[Mapping[str, Any]]) -> list[tuple[str, str, str, str]]:
    """The queries an audit history leaves removed, as ``(query_id, removed_at, removed_by,
    reason)``: each query's last ``query.remove`` not followed by a ``query.restore`` (``rows``:
    audit rows in order: ``created_at``, ``actor``, ``action``, ``detail_json``). How a study
    archive carries its removals."""
    state: dict[str, tuple[str, str, str, str]] = {}
    for row in rows:
        if row["action"] not in ("query.remove", "query.restore"):
            continue
        detail = json.loads(row["detail_json"] or "{}")
        query_id = detail.get("query_id")
        if not isinstance(query_id, str):
            continue
        if row["action"] == "query.remove":
            reason = detail.get("reason")
            reason = reason if isinstance(reason, str) else ""
            state[query_id] = (query_id, row["created_at"], row["actor"], reason)
        else:
            state.pop(query_id, None)
    return sorted(state.values(), key=lambda r: natural_key(r[0]))
