"""Creating a study and registering its queries: the study writes that need authorisation
(the models and reads are in :mod:`evalcore.store.studies`, below the gate, which reads them)."""

from collections.abc import Iterable

import sqlite_utils

from evalcore.access.roles import Permission
from evalcore.io.clock import utc_now_iso
from evalcore.store.authorize import (
    authorize,
    authorize_organisation_entry,
    authorize_study_over_corpus,
)
from evalcore.store.corpora import register_corpus
from evalcore.store.membership import corpus_team_studies
from evalcore.store.studies import QueryIn, StudyIn, get_study, study_exists
from evalcore.store.transaction import write_transaction


def create_study(db: sqlite_utils.Database, study: StudyIn, *, actor: str | None = None,
                 created_at: str | None = None) -> None:
    """Create a study; an existing one of the same id is an error, never overwritten.
    ``created_at``: default now (a restored study keeps its own). Inside an organisation with a
    team-mode study ``actor`` must be its member
    (:func:`evalcore.store.authorize.authorize_organisation_entry`); over an existing corpus
    allowed by its owner (:func:`evalcore.store.authorize.authorize_study_over_corpus`). A new
    corpus is registered with the study's organisation as owner. PermissionDenied writes nothing."""
    with write_transaction(db):
        authorize_organisation_entry(db, org_id=study.org_id, study_id=study.study_id,
                                     actor=actor, what=f"create study {study.study_id!r}")
        if study_exists(db, study.study_id):
            raise ValueError(f"study {study.study_id!r} already exists; choose another study id")
        authorize_study_over_corpus(
            db, corpus_id=study.corpus_id, study_id=study.study_id, study_org=study.org_id,
            actor=actor, what=f"create study {study.study_id!r} over corpus {study.corpus_id!r}")
        if study.org_id is not None:
            db.execute(
                "INSERT INTO organisations (org_id, name) VALUES (?, ?) ON CONFLICT DO NOTHING",
                [study.org_id, study.org_id],
            )
        db.execute(
            "INSERT INTO studies (study_id, name, corpus_id, retrieval_unit, "
            "relevance_threshold, gain, org_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [study.study_id, study.name or study.study_id, study.corpus_id, study.retrieval_unit,
             study.relevance_threshold, study.gain, study.org_id, created_at or utc_now_iso()],
        )
        register_corpus(db, study.corpus_id, owner_org=study.org_id, actor=actor,
                        adopt=len(corpus_team_studies(db, study.corpus_id)) == 0)


def add_queries(
    db: sqlite_utils.Database,
    study_id: str,
    queries: Iterable[QueryIn],
    *,
    actor: str | None = None,
) -> int:
    """Insert or update query texts; return how many were written. In a team-mode study
    ``actor`` needs the lead role."""
    get_study(db, study_id)
    rows = [[study_id, q.query_id, q.text] for q in queries]
    with write_transaction(db):
        authorize(db, study_id=study_id, actor=actor, permission=Permission.IMPORT)
        db.conn.executemany(
            "INSERT INTO queries (study_id, query_id, text) VALUES (?, ?, ?) "
            "ON CONFLICT (study_id, query_id) DO UPDATE SET text = excluded.text",
            rows,
        )
    return len(rows)
