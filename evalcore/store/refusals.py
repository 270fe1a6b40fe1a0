"""The refusal log of the pinned retrieval workflow: every execution it would not run, and why (append-only)."""

import json
from typing import Any

import sqlite_utils

from evalcore.contract.frozen import FrozenModel
from evalcore.io.clock import utc_now_iso
from evalcore.store.audit import record_audit
from evalcore.store.lookup import models
from evalcore.store.scoping import unreadable_organisations
from evalcore.store.study_handle import Study
from evalcore.store.transaction import write_transaction


class Refusal(FrozenModel):

    refusal_id: int
    study_id: str
    protocol: str
    run_name: str
    created_at: str
    actor: str
    message: str
    detail: dict[str, Any]


def record_refusal(
    db: sqlite_utils.Database,
    *,
    study_id: str,
    protocol: str,
    run_name: str,
    actor: str,
    message: str,
    detail: dict[str, Any],
) -> int:
    """Append a refusal and its audit entry in their own transaction; returns its id."""
    with write_transaction(db):
        cursor = db.execute(
            "INSERT INTO retrieval_refusals (study_id, protocol, run_name, created_at, actor, "
            "message, detail_json) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [study_id, protocol, run_name, utc_now_iso(), actor, message,
             json.dumps(detail, sort_keys=True)],
        )
        refusal_id = int(cursor.lastrowid)
        refused = {"protocol": protocol, "run": run_name, "refusal_id": refusal_id}
        record_audit(db, actor, "lexical.refused", study_id=study_id, detail=refused)
    return refusal_id


def withheld_refusal(protocol: str, withheld: list[str]) -> tuple[str, dict[str, Any]]:
    """The message and detail of a refusal of ``protocol`` for a reader who may not read
    the documents of the ``withheld`` organisations, which the refusal names."""
    return (f"refused: the corpus no longer matched pinned protocol {protocol!r}; the details "
            f"are withheld: they concern documents of organisation(s) {', '.join(withheld)}, "
            "which you may not read", {"withheld_organisations": withheld})


def list_refusals(study: Study) -> list[Refusal]:
    """The study's refusals, oldest first; for a protocol that sees documents the actor may not
    read (:func:`evalcore.store.scoping.unreadable_organisations`) message and detail withheld."""
    corpus = study.settings.corpus_id
    organisations = {
        name: json.loads(protocol_json).get("organisations", [])
        for name, protocol_json in study.db.execute(
            "SELECT name, protocol_json FROM protocols WHERE study_id = ?", [study.study_id]
        )
    }
    rows = []
    for *row, message, detail_json in study.db.execute(
        "SELECT refusal_id, study_id, protocol, run_name, created_at, actor, message, "
        "detail_json FROM retrieval_refusals WHERE study_id = ? ORDER BY refusal_id",
        [study.study_id],
    ):
        seen = organisations.get(row[2], [])
        withheld = unreadable_organisations(study.db, study.actor, corpus, seen)
        shown = withheld_refusal(row[2], withheld) if withheld else (message, json.loads(detail_json))
        rows.append((*row, *shown))
    return models(Refusal, rows)
