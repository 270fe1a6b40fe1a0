"""Completeness claims: "every relevant unit of this query is in the reference set".

A claim is an append-only event: ``complete`` or ``reopened`` (withdrawn, with why). A
query's state is its latest event (none: not complete). Marking a complete query complete,
or reopening one that is not, records nothing and returns ``None``."""

from typing import Literal

import sqlite_utils

from evalcore.access.identity import normalise_user_id
from evalcore.access.roles import Permission
from evalcore.contract.frozen import FrozenModel
from evalcore.contract.limits import MAX_NOTE_CHARS, require_fits
from evalcore.io.clock import utc_now_iso
from evalcore.store.authorize import require_known_study
from evalcore.store.lookup import models
from evalcore.store.study_handle import Study, open_study
from evalcore.store.transaction import write_transaction

CompletenessState = Literal["complete", "reopened"]


class CompletenessEvent(FrozenModel):

    event_id: int
    study_id: str
    query_id: str
    state: CompletenessState
    actor: str
    created_at: str
    reason: str


def _events(study: Study, query_id: str, order: str) -> list[CompletenessEvent]:
    return models(CompletenessEvent, study.db.execute(
        "SELECT event_id, study_id, query_id, state, actor, created_at, reason FROM "
        f"completeness_events WHERE study_id = ? AND query_id = ? ORDER BY {order}",
        [study.study_id, query_id]))


def append_completeness_event(
    db: sqlite_utils.Database, study_id: str, query_id: str, state: CompletenessState,
    actor: str, reason: str = "", created_at: str | None = None,
) -> CompletenessEvent:
    """Append one event unconditionally (call inside the caller's write transaction)."""
    require_fits(reason, MAX_NOTE_CHARS, "a reason", "shorten it")
    values = (study_id, query_id, state, actor, created_at or utc_now_iso(), reason)
    cursor = db.execute(
        "INSERT INTO completeness_events (study_id, query_id, state, actor, created_at, reason) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        values,
    )
    return models(CompletenessEvent, [(int(cursor.lastrowid), *values)])[0]


def _require_actor(actor: str) -> str:
    """The actor as one person (:func:`normalise_user_id`: the sign-in rule)."""
    if not isinstance(actor, str) or not actor.strip():
        raise ValueError("actor is required: say who makes this completeness claim")
    return normalise_user_id(actor)


def mark_complete(
    db: sqlite_utils.Database, *, study_id: str, query_id: str, actor: str, reason: str = ""
) -> CompletenessEvent | None:
    """Declare the query's relevant population complete (None if it already is)."""
    return _claim(db, study_id, query_id, _require_actor(actor), "complete", reason)


def reopen(
    db: sqlite_utils.Database, *, study_id: str, query_id: str, actor: str, reason: str
) -> CompletenessEvent | None:
    """Withdraw the completeness claim, saying why (None if the query is not complete)."""
    actor = _require_actor(actor)
    if not isinstance(reason, str) or not reason.strip():
        raise ValueError("a reason is required to reopen a query: say why the claim no longer holds")
    return _claim(db, study_id, query_id, actor, "reopened", reason)


def _claim(db: sqlite_utils.Database, study_id: str, query_id: str, actor: str,
           state: CompletenessState, reason: str) -> CompletenessEvent | None:
    """Append ``state`` unless the query is in it already (None then); a claim registers the
    query in the study if it was not yet."""
    permission = Permission.MARK_COMPLETE if state == "complete" else Permission.REOPEN
    require_known_study(db, actor, study_id)
    with write_transaction(db):
        study = open_study(db, study_id, actor, permission)
        if is_complete(study, query_id) == (state == "complete"):
            return None
        if state == "complete":
            db.execute("INSERT INTO queries (study_id, query_id, text) VALUES (?, ?, '') "
                       "ON CONFLICT DO NOTHING", [study_id, query_id])
        return append_completeness_event(db, study_id, query_id, state, actor, reason)


def is_complete(study: Study, query_id: str) -> bool:
    row = study.db.execute(
        "SELECT state FROM completeness_events WHERE study_id = ? AND query_id = ? "
        "ORDER BY event_id DESC LIMIT 1",
        [study.study_id, query_id],
    ).fetchone()
    return row is not None and row[0] == "complete"


def completeness_states(study: Study) -> dict[str, bool]:
    """query_id -> complete?, for every query of the study and every query with an event."""
    states = {
        q: False
        for (q,) in study.db.execute(
            "SELECT query_id FROM queries WHERE study_id = ? ORDER BY query_id", [study.study_id]
        )
    }
    for query_id, state in study.db.execute(
        "SELECT query_id, state FROM completeness_events AS e WHERE study_id = ? AND event_id = "
        "(SELECT max(event_id) FROM completeness_events AS f "
        " WHERE f.study_id = e.study_id AND f.query_id = e.query_id)",
        [study.study_id],
    ):
        states[query_id] = state == "complete"
    return dict(sorted(states.items()))


def completeness_history(study: Study, query_id: str) -> list[CompletenessEvent]:
    """Every completeness event of the query, oldest first."""
    return _events(study, query_id, "event_id")


class ClaimWithdrawal(FrozenModel):
    """A query's completeness claim, withdrawn and not made again: who claimed the relevant
    set complete and when, and who or what label withdrew the claim, when and why."""

    query_id: str
    claimed_by: str
    claimed_at: str
    withdrawn_by: str
    withdrawn_at: str
    #: why: e.g. ``new relevant label on d12 by alice`` (a label that contradicted it)
    reason: str

    def text(self) -> str:
        """One plain sentence for annotators and reviewers (render it as text, not markup)."""
        why = f": {self.reason}" if self.reason else ""
        return (f"The claim that this relevant set is complete ({self.claimed_by}, "
                f"{self.claimed_at}) was withdrawn by {self.withdrawn_by} at "
                f"{self.withdrawn_at}{why}. Until it is marked complete again, recall, nDCG "
                "and AP are bounded as on any relevant set not declared complete.")


def claim_withdrawal(study: Study, query_id: str,
                     history: list[CompletenessEvent] | None = None) -> ClaimWithdrawal | None:
    """Who claimed the query complete and who withdrew the claim, when and why (None: the
    query is not reopened). ``history``: its :func:`completeness_history`, if read."""
    latest = history[::-1][:2] if history is not None else _events(
        study, query_id, "event_id DESC LIMIT 2")
    if not latest or latest[0].state != "reopened":
        return None
    withdrawn = latest[0]
    claim = latest[1] if len(latest) > 1 else None
    return ClaimWithdrawal(
        query_id=query_id,
        claimed_by=claim.actor if claim is not None else "unknown",
        claimed_at=claim.created_at if claim is not None else "unknown",
        withdrawn_by=withdrawn.actor,
        withdrawn_at=withdrawn.created_at,
        reason=withdrawn.reason,
    )
