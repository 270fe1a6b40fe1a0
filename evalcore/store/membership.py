"""The facts access control decides on: study modes, roles, leads and organisation
memberships, passed by :mod:`evalcore.store.authorize` and :mod:`evalcore.store.scoping` to
:mod:`evalcore.access.decisions`. The writers at the end only write, inside the caller's
transaction (who may: :mod:`evalcore.store.members`, :mod:`evalcore.store.studies`)."""

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

import sqlite_utils

from evalcore.access.decisions import StudyMode
from evalcore.access.identity import normalise_user_id
from evalcore.access.organisations import OrgRole
from evalcore.access.roles import RoleName
from evalcore.io.clock import utc_now_iso
from evalcore.store.document_imports import published
from evalcore.store.lookup import column, exists


def _value(db: sqlite_utils.Database, sql: str, params: list) -> Any:
    """The first column of ``sql``'s first row (None: no row)."""
    row = db.execute(sql, params).fetchone()
    return row[0] if row else None


def study_mode(db: sqlite_utils.Database, study_id: str) -> StudyMode:
    """``"team"`` when the study has at least one member, else ``"local"``."""
    team = exists(db, "SELECT 1 FROM study_members WHERE study_id = ? LIMIT 1", [study_id])
    return "team" if team else "local"


@dataclass(frozen=True)
class StudyAccess:
    """What :func:`evalcore.store.authorize.authorize` decides on for one user and study."""

    #: the study has a member (team mode)
    team: bool
    #: the user's role in it (None: not a member, or no user)
    role: RoleName | None
    #: its leads, by user id
    leads: list[str]
    #: the user belongs to the study's organisation (False when it has none)
    in_org: bool


def study_access(
    db: sqlite_utils.Database, study_id: str, user: str | None, org_id: str | None
) -> StudyAccess:
    """The study's mode, ``user``'s role and organisation membership and the study's
    leads, in one statement (a write checks them inside its transaction: each statement
    there is a round trip to a PostgreSQL server while the write lock is held)."""
    row = db.execute(
        "SELECT EXISTS (SELECT 1 FROM study_members WHERE study_id = ?), "
        "(SELECT role FROM study_members WHERE study_id = ? AND user_id = ?), "
        "(SELECT json_group_array(user_id) FROM study_members "
        "WHERE study_id = ? AND role = 'lead'), "
        "EXISTS (SELECT 1 FROM user_organisations WHERE user_id = ? AND org_id = ?)",
        [study_id, study_id, user, study_id, user, org_id],
    ).fetchone()
    return StudyAccess(team=bool(row[0]), role=row[1], leads=sorted(json.loads(row[2])),
                       in_org=bool(row[3]))


def member_role(db: sqlite_utils.Database, study_id: str, user_id: str) -> RoleName | None:
    """``user_id``'s role in the study (None: not a member)."""
    return _value(db, "SELECT role FROM study_members WHERE study_id = ? AND user_id = ?",
                  [study_id, user_id])


def study_leads(db: sqlite_utils.Database, study_id: str) -> list[str]:
    """The leads of the study, by user id."""
    return column(db, "SELECT user_id FROM study_members WHERE study_id = ? AND role = 'lead' "
                   "ORDER BY user_id", [study_id])


def in_organisation(db: sqlite_utils.Database, user_id: str, org_id: str) -> bool:
    """Does ``user_id`` belong to organisation ``org_id``?"""
    return exists(db, "SELECT 1 FROM user_organisations WHERE user_id = ? AND org_id = ?",
                  [user_id, org_id])


def user_organisations(db: sqlite_utils.Database, user: str) -> set[str]:
    """The organisations ``user`` belongs to."""
    try:
        who = normalise_user_id(user)
    except ValueError:
        return set()
    return set(column(db, "SELECT org_id FROM user_organisations WHERE user_id = ?", [who]))


def organisation_exists(db: sqlite_utils.Database, org_id: str) -> bool:
    return exists(db, "SELECT 1 FROM organisations WHERE org_id = ?", [org_id])


def organisation_ids(db: sqlite_utils.Database) -> list[str]:
    """Every organisation of the store, by id."""
    return column(db, "SELECT org_id FROM organisations ORDER BY org_id", [])


def organisation_team_studies(db: sqlite_utils.Database, org_id: str) -> list[str]:
    """The team-mode studies of organisation ``org_id``, by study id (none: local mode)."""
    return _team_studies(db, "org_id", org_id)


def corpus_team_studies(db: sqlite_utils.Database, corpus_id: str) -> list[str]:
    """The team-mode studies over ``corpus_id``, by study id (none: the corpus is in local mode)."""
    return _team_studies(db, "corpus_id", corpus_id)


def _team_studies(
    db: sqlite_utils.Database, field: Literal["org_id", "corpus_id"], value: str
) -> list[str]:
    return column(db, "SELECT DISTINCT s.study_id FROM studies s JOIN study_members m "
                  f"ON m.study_id = s.study_id WHERE s.{field} = ? ORDER BY s.study_id", [value])


def member_of_corpus_study(db: sqlite_utils.Database, corpus_id: str, user: str) -> bool:
    """Is ``user`` a member of some study over ``corpus_id``?"""
    return exists(db, "SELECT 1 FROM studies s JOIN study_members m ON m.study_id = s.study_id "
                  "WHERE s.corpus_id = ? AND m.user_id = ? LIMIT 1", [corpus_id, user])


def document_owner_orgs(
    db: sqlite_utils.Database, corpus_id: str, doc_ids: Iterable[str]
) -> set[str | None]:
    """The owner organisations of the stored documents among ``doc_ids``."""
    return set(column(db, "SELECT DISTINCT owner_org FROM documents WHERE corpus_id = ? "
                       f"AND doc_id IN (SELECT value FROM json_each(?)) AND {published()}",
                       [corpus_id, json.dumps(list(doc_ids))]))


def organisation_claimed(db: sqlite_utils.Database, org_id: str) -> bool:
    """Has the organisation a member? (Else it is unclaimed, in local mode: the first
    person added becomes its owner.)"""
    return exists(db, "SELECT 1 FROM user_organisations WHERE org_id = ? LIMIT 1", [org_id])


def organisation_role(db: sqlite_utils.Database, user: str, org_id: str) -> OrgRole | None:
    """``user``'s role in the organisation (None: not a member, or nobody)."""
    if not user:
        return None
    return _value(db, "SELECT role FROM user_organisations WHERE user_id = ? AND org_id = ?",
                  [user, org_id])


def organisation_owners(db: sqlite_utils.Database, org_id: str) -> list[str]:
    """Who grants the admin and owner roles of the organisation, by user id."""
    return _holding(db, org_id, "role = 'owner'")


def organisation_admins(db: sqlite_utils.Database, org_id: str) -> list[str]:
    """Who admits people to the organisation and writes its documents: admins and owners."""
    return _holding(db, org_id, "role IN ('admin', 'owner')")


def _holding(db: sqlite_utils.Database, org_id: str, roles: str) -> list[str]:
    return column(db, f"SELECT user_id FROM user_organisations WHERE org_id = ? AND {roles} "
                   "ORDER BY user_id", [org_id])


def corpus_sharing_organisations(db: sqlite_utils.Database, corpus_id: str) -> set[str]:
    """The organisations with a team-mode study over ``corpus_id``."""
    return set(column(db, "SELECT DISTINCT s.org_id FROM studies s JOIN study_members m ON "
                       "m.study_id = s.study_id WHERE s.corpus_id = ? AND s.org_id IS NOT NULL",
                       [corpus_id]))


def ensure_user(db: sqlite_utils.Database, user_id: str, display_name: str = "") -> str:
    """Register the user if unknown (inside the caller's transaction); return the canonical id."""
    user = normalise_user_id(user_id)
    db.execute(
        "INSERT INTO users (user_id, display_name, created_at) VALUES (?, ?, ?) "
        "ON CONFLICT (user_id) DO UPDATE SET display_name = CASE WHEN excluded.display_name = '' "
        "THEN users.display_name ELSE excluded.display_name END",
        [user, display_name, utc_now_iso()],
    )
    return user


def join_organisation(db: sqlite_utils.Database, user: str, org_id: str, granted_by: str,
                      role: OrgRole = "member", *, granted_at: str | None = None) -> bool:
    """Add the membership row with ``role`` (True if new); the caller has authorised it. The
    first member becomes the owner, whatever ``role`` says: an organisation with a member has
    an owner."""
    cursor = db.execute(
        "INSERT INTO user_organisations (user_id, org_id, granted_by, granted_at, role) "
        "SELECT ?, ?, ?, ?, CASE WHEN EXISTS (SELECT 1 FROM user_organisations WHERE org_id = ?) "
        "THEN ? ELSE 'owner' END WHERE true ON CONFLICT DO NOTHING",
        [user, org_id, granted_by, granted_at or utc_now_iso(), org_id, role],
    )
    return cursor.rowcount > 0


def set_organisation_role(db: sqlite_utils.Database, user: str, org_id: str, role: OrgRole,
                          granted_by: str) -> None:
    """Change a member's role (the caller has authorised it)."""
    db.execute("UPDATE user_organisations SET role = ?, granted_by = ?, granted_at = ? "
               "WHERE user_id = ? AND org_id = ?",
               [role, granted_by, utc_now_iso(), user, org_id])


def leave_organisation(db: sqlite_utils.Database, user: str, org_id: str) -> bool:
    """Remove the membership row (True if there was one); the caller has authorised it."""
    return db.execute("DELETE FROM user_organisations WHERE user_id = ? AND org_id = ?",
                      [user, org_id]).rowcount > 0
