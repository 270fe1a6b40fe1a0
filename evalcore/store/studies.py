"""Studies, organisations and queries: the frame every label belongs to."""

from typing import Annotated

import sqlite_utils
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StrictStr

from evalcore.access.decisions import named_user
from evalcore.contract.evaluation_protocol import EvalProtocol, GainMode
from evalcore.contract.gains import MAX_GAIN
from evalcore.contract.limits import MAX_KEY_CHARS, MAX_NAME_CHARS, without_nul
from evalcore.store.lookup import exists, models
from evalcore.store.membership import ensure_user, join_organisation
from evalcore.store.transaction import write_transaction

Identifier = Annotated[StrictStr, Field(min_length=1, max_length=MAX_KEY_CHARS),
                       AfterValidator(without_nul)]


class StudyIn(BaseModel):
    """A study: one corpus, one retrieval unit, one way of turning labels into gains."""

    model_config = ConfigDict(extra="forbid")

    study_id: Identifier
    name: Annotated[StrictStr, Field(max_length=MAX_NAME_CHARS)] = ""
    corpus_id: Identifier
    retrieval_unit: StrictStr = "document"
    relevance_threshold: int = Field(default=1, ge=1, le=MAX_GAIN)
    gain: GainMode = "linear"
    org_id: StrictStr | None = None

    def protocol(self) -> EvalProtocol:
        """The evaluation protocol the study's settings declare (the one place they become an
        :class:`EvalProtocol`)."""
        return EvalProtocol(relevance_threshold=self.relevance_threshold, gain=self.gain)


class QueryIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query_id: Identifier
    text: StrictStr = ""


class StudyNotFoundError(LookupError):
    """The named study is not in this store."""


def create_organisation(
    db: sqlite_utils.Database, org_id: str, name: str = "", *, actor: str | None = None
) -> bool:
    """Create the organisation if it does not exist (idempotent); True if created. Open to
    anyone: a new organisation grants nothing. Its creator (``actor``, when named) becomes its
    first member and owner; an existing organisation is never changed (renamed or joined) here."""
    creator = named_user(actor) or None
    with write_transaction(db):
        created = db.execute(
            "INSERT INTO organisations (org_id, name, created_by) VALUES (?, ?, ?) "
            "ON CONFLICT DO NOTHING",
            [org_id, name or org_id, creator],
        ).rowcount > 0
        if created and creator is not None:
            ensure_user(db, creator)
            join_organisation(db, creator, org_id, creator)
    return created


#: The columns of a study's settings: :class:`StudyIn`'s fields.
_STUDY_COLUMNS = ", ".join(StudyIn.model_fields)


def get_study(db: sqlite_utils.Database, study_id: str) -> StudyIn:
    """The study's settings; an unknown id is a :class:`StudyNotFoundError` naming no other study
    (it cannot know who asks: :func:`evalcore.store.authorize.require_known_study` lists the
    studies a person may read)."""
    found = models(StudyIn, db.execute(
        f"SELECT {_STUDY_COLUMNS} FROM studies WHERE study_id = ? AND staged_by IS NULL",
        [study_id]))
    if not found:
        raise StudyNotFoundError(f"no study {study_id!r} in this store (`evalcore study list "
                                 "--db STORE --actor YOU` lists the studies you may see)")
    return found[0]


def study_ids(db: sqlite_utils.Database) -> list[str]:
    """Every study id of the store, sorted."""
    return [r[0] for r in db.execute("SELECT study_id FROM studies WHERE staged_by IS NULL "
                                     "ORDER BY study_id")]


def study_exists(db: sqlite_utils.Database, study_id: str) -> bool:
    return exists(db, "SELECT 1 FROM studies WHERE study_id = ?", [study_id])


def list_studies(db: sqlite_utils.Database) -> list[StudyIn]:
    """Every study's settings, by study id: one statement whatever the number of studies."""
    return [study for study, _ in list_studies_and_modes(db)]


def list_studies_and_modes(db: sqlite_utils.Database) -> list[tuple[StudyIn, bool]]:
    """Every study's settings, by study id, each with whether it is in team mode (it has a
    member): one statement (each page run lists them for the sidebar)."""
    rows = db.execute(
        f"SELECT {_STUDY_COLUMNS}, EXISTS (SELECT 1 FROM study_members m "
        "WHERE m.study_id = studies.study_id) FROM studies WHERE staged_by IS NULL "
        "ORDER BY study_id").fetchall()
    studies = models(StudyIn, [row[:-1] for row in rows])
    return [(study, bool(row[-1])) for study, row in zip(studies, rows, strict=True)]
