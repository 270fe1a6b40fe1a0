"""Corpora and their owner organisation (see docs/access-model.md).

Every corpus has a ``corpora`` row: its owner organisation (None: local), who registered it
and when. The first study over it registers it (owner: that study's organisation), or the
first documents written (no owner yet); an unowned corpus adopts the organisation of the
first study with one, while no study over it is in team mode. Documents stored without an
explicit owner get the corpus's."""

import sqlite_utils

from evalcore.access.decisions import named_user
from evalcore.io.clock import utc_now_iso
from evalcore.store.lookup import exists


def corpus_registered(db: sqlite_utils.Database, corpus_id: str) -> bool:
    return exists(db, "SELECT 1 FROM corpora WHERE corpus_id = ?", [corpus_id])


def corpus_owner(db: sqlite_utils.Database, corpus_id: str) -> str | None:
    """The organisation that owns ``corpus_id`` (None: none, or not registered)."""
    row = db.execute("SELECT owner_org FROM corpora WHERE corpus_id = ?", [corpus_id]).fetchone()
    return row[0] if row else None


def register_corpus(
    db: sqlite_utils.Database, corpus_id: str, *, owner_org: str | None, actor: str | None,
    adopt: bool = False,
) -> None:
    """Register ``corpus_id`` if new (inside the caller's transaction, after authorisation);
    ``adopt``: a registered corpus without an owner takes ``owner_org``."""
    if owner_org is not None:
        db.execute("INSERT INTO organisations (org_id, name) VALUES (?, ?) "
                   "ON CONFLICT DO NOTHING",
                   [owner_org, owner_org])
    db.execute(
        "INSERT INTO corpora (corpus_id, owner_org, created_by, created_at) "
        "VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
        [corpus_id, owner_org, named_user(actor), utc_now_iso()],
    )
    if adopt and owner_org is not None:
        db.execute("UPDATE corpora SET owner_org = ? WHERE corpus_id = ? AND owner_org IS NULL",
                   [owner_org, corpus_id])
