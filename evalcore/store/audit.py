"""The audit log: who did what to the store, and when (append-only). Label and completeness
events are their own history; the audit log records the bulk actions around them
(imports, freezes, study creation), so a reader can tell where every label came from."""

import getpass
import json
from typing import Any

import sqlite_utils

from evalcore.access.channel import current_channel
from evalcore.access.decisions import named_user
from evalcore.contract.frozen import FrozenModel
from evalcore.io.clock import utc_now_iso
from evalcore.store.study_handle import Study


def _os_user() -> str:
    try:
        return getpass.getuser()
    except (OSError, KeyError, ImportError):
        return ""


class AuditEntry(FrozenModel):

    entry_id: int
    created_at: str
    actor: str
    action: str
    study_id: str | None
    detail: dict[str, Any]
    channel: str = "api"
    os_user: str = ""


def record_audit(db: sqlite_utils.Database, actor: str | None, action: str, *,
                 study_id: str | None = None, detail: dict[str, Any] | None = None) -> int:
    """Append one audit entry inside the caller's write transaction; return its id. ``detail``:
    JSON-serialisable. The row records the channel (:func:`evalcore.access.channel.audit_channel`)
    and, for the CLI, the operating-system user (``os_user``: who ran it; ``actor``: who the
    caller says they are, None: ``local``)."""
    actor = actor or "local"
    channel = current_channel()
    try:
        who = named_user(actor) or actor
    except ValueError:
        who = actor
    cursor = db.execute(
        "INSERT INTO audit_log (created_at, actor, action, study_id, detail_json, channel, "
        "os_user) VALUES (?, ?, ?, ?, ?, ?, ?)",
        [utc_now_iso(), who, action, study_id, json.dumps(detail or {}, sort_keys=True),
         channel, _os_user() if channel == "cli" else ""],
    )
    return int(cursor.lastrowid)


def audit_entries(study: Study, limit: int | None = None) -> list[AuditEntry]:
    """The study's audit entries, newest first."""
    sql = (
        "SELECT entry_id, created_at, actor, action, study_id, detail_json, channel, os_user "
        "FROM audit_log WHERE study_id = ? ORDER BY entry_id DESC"
    )
    params: list[Any] = [study.study_id]
    if limit is not None:
        sql += " LIMIT ?"
        params.append(int(limit))
    return [
        AuditEntry(**dict(zip(AuditEntry.model_fields, (*r[:5], json.loads(r[5]), *r[6:]),
                              strict=True)))
        for r in study.db.execute(sql, params)
    ]
