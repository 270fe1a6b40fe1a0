"""Studies, organisations and queries: the frame every label belongs to."""

from collections.abc import Iterable
from typing import Annotated

import sqlite_utils
from pydantic import BaseModel, ConfigDict, Field, StrictStr

from evalcore.contract.evaluation_protocol import GainMode
from evalcore.contract.gains import MAX_GAIN
from evalcore.store.clock import utc_now_iso
from evalcore.store.connection import write_transaction

Identifier = Annotated[StrictStr, Field(min_length=1, max_length=512)]


class StudyIn(BaseModel):
    """A study: one corpus, one retrieval unit, one way of turning labels into gains."""

    model_config = ConfigDict(extra="forbid")

    study_id: Identifier
    name: StrictStr = ""
    corpus_id: Identifier
    retrieval_unit: StrictStr = "document"
    relevance_threshold: int = Field(default=1, ge=1, le=MAX_GAIN)
    gain: GainMode = "linear"
    org_id: StrictStr | None = None


class QueryIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query_id: Identifier
    text: StrictStr = ""


class StudyNotFoundError(LookupError):
    """The named study is not in this store."""


def create_organisation(db: sqlite_utils.Database, org_id: str, name: str = "") -> None:
    """Create the organisation if it does not exist (idempotent).

    Open to anyone: a new organisation has no member, study or document, so it
    grants nothing (joining one is :func:`evalcore.access.members.add_to_organisation`'s
    rule). An existing organisation is never changed — not even renamed — by this.
    """
    with write_transaction(db):
        db.execute(
            "INSERT OR IGNORE INTO organisations (org_id, name) VALUES (?, ?)",
            [org_id, name or org_id],
        )


def create_study(db: sqlite_utils.Database, study: StudyIn, *, actor: str | None = None) -> None:
    """Create a study. An existing study of the same id is an error, never overwritten.

    Inside an organisation that has a team-mode study, ``actor`` must be a member
    of that organisation (PermissionDenied otherwise, and nothing is written);
    in local mode anyone may (see :func:`evalcore.access.authorize.authorize_organisation_entry`).
    """
    with write_transaction(db):
        from evalcore.access.authorize import authorize_organisation_entry

        authorize_organisation_entry(db, org_id=study.org_id, study_id=study.study_id,
                                     actor=actor, what=f"create study {study.study_id!r}")
        if study.org_id is not None:
            db.execute(
                "INSERT OR IGNORE INTO organisations (org_id, name) VALUES (?, ?)",
                [study.org_id, study.org_id],
            )
        existing = db.execute(
            "SELECT 1 FROM studies WHERE study_id = ?", [study.study_id]
        ).fetchone()
        if existing:
            raise ValueError(
                f"study {study.study_id!r} already exists; choose another study id"
            )
        db.execute(
            "INSERT INTO studies (study_id, name, corpus_id, retrieval_unit, "
            "relevance_threshold, gain, org_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [
                study.study_id,
                study.name or study.study_id,
                study.corpus_id,
                study.retrieval_unit,
                study.relevance_threshold,
                study.gain,
                study.org_id,
                utc_now_iso(),
            ],
        )


def get_study(db: sqlite_utils.Database, study_id: str) -> StudyIn:
    """The study's settings; :class:`StudyNotFoundError` names the studies that exist."""
    row = db.execute(
        "SELECT study_id, name, corpus_id, retrieval_unit, relevance_threshold, gain, org_id "
        "FROM studies WHERE study_id = ?",
        [study_id],
    ).fetchone()
    if row is None:
        known = [r[0] for r in db.execute("SELECT study_id FROM studies ORDER BY study_id")]
        hint = f"known studies: {', '.join(known)}" if known else "the store has no study yet"
        raise StudyNotFoundError(f"no study {study_id!r} in this store ({hint})")
    keys = ("study_id", "name", "corpus_id", "retrieval_unit", "relevance_threshold", "gain", "org_id")
    return StudyIn(**dict(zip(keys, row, strict=True)))


def list_studies(db: sqlite_utils.Database) -> list[StudyIn]:
    ids = [r[0] for r in db.execute("SELECT study_id FROM studies ORDER BY study_id")]
    return [get_study(db, study_id) for study_id in ids]


def add_queries(
    db: sqlite_utils.Database,
    study_id: str,
    queries: Iterable[QueryIn],
    *,
    actor: str | None = None,
) -> int:
    """Insert or update query texts; returns how many were written.

    In a team-mode study ``actor`` needs the lead role (:mod:`evalcore.access`).
    """
    get_study(db, study_id)
    rows = [[study_id, q.query_id, q.text] for q in queries]
    with write_transaction(db):
        from evalcore.access.authorize import authorize
        from evalcore.access.roles import Permission

        authorize(db, study_id=study_id, actor=actor, permission=Permission.IMPORT)
        db.conn.executemany(
            "INSERT INTO queries (study_id, query_id, text) VALUES (?, ?, ?) "
            "ON CONFLICT (study_id, query_id) DO UPDATE SET text = excluded.text",
            rows,
        )
    return len(rows)


def query_texts(
    db: sqlite_utils.Database, study_id: str, query_ids: Iterable[str] | None = None
) -> dict[str, str]:
    """query_id -> text, for every query of the study or only ``query_ids`` (when given)."""
    if query_ids is None:
        return dict(
            db.execute(
                "SELECT query_id, text FROM queries WHERE study_id = ? ORDER BY query_id",
                [study_id],
            ).fetchall()
        )
    wanted = list(dict.fromkeys(query_ids))
    out: dict[str, str] = {}
    for start in range(0, len(wanted), 500):
        chunk = wanted[start : start + 500]
        marks = ", ".join("?" * len(chunk))
        out.update(db.execute(
            f"SELECT query_id, text FROM queries WHERE study_id = ? AND query_id IN ({marks})",
            [study_id, *chunk],
        ).fetchall())
    return out


def query_text(db: sqlite_utils.Database, study_id: str, query_id: str) -> str:
    """One query's text ('' when the query has no text or is not registered)."""
    row = db.execute(
        "SELECT text FROM queries WHERE study_id = ? AND query_id = ?", [study_id, query_id]
    ).fetchone()
    return row[0] if row else ""
