"""Users, their organisations and the members of each study (with their roles).

Every change here is itself authorised (:data:`Permission.MANAGE_MEMBERS`) and
audited. Rules that keep a study governable:

* the first member of a study must be a lead (that is what turns team mode on);
* a team-mode study always keeps at least one lead: the last lead can be
  neither removed nor demoted;
* adding a member to a study that belongs to an organisation also adds them to
  that organisation (the granting lead vouches for them), since a member who
  cannot see the study could do nothing in it.
"""

import sqlite_utils
from pydantic import BaseModel, ConfigDict

from evalcore.access.decisions import organisation_join_denied
from evalcore.access.identity import normalise_user_id
from evalcore.access.roles import Permission, RoleName, check_role
from evalcore.io.clock import utc_now_iso
from evalcore.store.audit import record_audit
from evalcore.store.authorize import authorize, authorize_organisation_entry, require_known_study
from evalcore.store.membership import (
    member_role,
    organisation_exists,
    organisation_in_team_mode,
    organisation_leads,
    study_leads,
    study_mode,
)
from evalcore.store.read_access import Viewer, require_read
from evalcore.store.studies import StudyIn, get_study
from evalcore.store.study_setup import create_study
from evalcore.store.transaction import write_transaction
from evalcore.store.users import ensure_user, join_organisation


class Member(BaseModel):
    """One member of a study."""

    model_config = ConfigDict(frozen=True)

    study_id: str
    user_id: str
    display_name: str
    role: RoleName
    granted_by: str
    granted_at: str


def add_member(
    db: sqlite_utils.Database,
    *,
    study_id: str,
    user: str,
    role: str,
    actor: str,
    display_name: str = "",
) -> Member:
    """Give ``user`` ``role`` in the study (or change their role); audited.

    The first member must be a lead; the last lead cannot be demoted. Raises
    PermissionDenied when ``actor`` may not manage members, ValueError for a
    bad role or user id; nothing is written then.
    """
    role = check_role(role)
    who = normalise_user_id(user)
    require_known_study(db, actor, study_id)
    study = get_study(db, study_id)
    with write_transaction(db):
        authorize(db, study_id=study_id, actor=actor, permission=Permission.MANAGE_MEMBERS)
        if study_mode(db, study_id) == "local":
            authorize_organisation_entry(db, org_id=study.org_id, study_id=study_id, actor=actor,
                                         what=f"turn team mode on in study {study_id!r}")
        if study_mode(db, study_id) == "local" and role != "lead":
            raise ValueError(
                f"study {study_id!r} has no member yet (local single-user mode); its first member "
                f"must be a lead, who then adds the others: evalcore members add --db STORE "
                f"--study {study_id} --user YOU --role lead"
            )
        current = member_role(db, study_id, who)
        if current == "lead" and role != "lead" and study_leads(db, study_id) == [who]:
            raise ValueError(
                f"{who} is the last lead of study {study_id!r}; make someone else a lead first"
            )
        granted_by = normalise_user_id(actor) if actor and actor.strip() else who
        ensure_user(db, who, display_name)
        now = utc_now_iso()
        db.execute(
            "INSERT INTO study_members (study_id, user_id, role, granted_by, granted_at) "
            "VALUES (?, ?, ?, ?, ?) ON CONFLICT (study_id, user_id) DO UPDATE SET "
            "role = excluded.role, granted_by = excluded.granted_by, granted_at = excluded.granted_at",
            [study_id, who, role, granted_by, now],
        )
        if study.org_id is not None:
            join_organisation(db, who, study.org_id, granted_by)
        record_audit(db, actor=granted_by, action="members.add", study_id=study_id,
                     detail={"user": who, "role": role, "previous_role": current})
    return get_member(db, study_id, who)  # type: ignore[return-value]


def create_team_study(
    db: sqlite_utils.Database, study: StudyIn, *, lead: str, display_name: str = ""
) -> Member:
    """Create ``study`` with ``lead`` as its first member: team mode from the start.

    One transaction: if the lead cannot be added, the study is not created either.
    """
    with write_transaction(db):
        create_study(db, study, actor=lead)
        add_member(db, study_id=study.study_id, user=lead, role="lead", actor=lead,
                   display_name=display_name)
    return get_member(db, study.study_id, lead)  # type: ignore[return-value]


def remove_member(db: sqlite_utils.Database, *, study_id: str, user: str, actor: str) -> bool:
    """Remove ``user`` from the study; False if they were not a member. The last lead stays."""
    who = normalise_user_id(user)
    require_known_study(db, actor, study_id)
    with write_transaction(db):
        authorize(db, study_id=study_id, actor=actor, permission=Permission.MANAGE_MEMBERS)
        current = member_role(db, study_id, who)
        if current is None:
            return False
        if current == "lead" and study_leads(db, study_id) == [who]:
            raise ValueError(
                f"{who} is the last lead of study {study_id!r} and cannot be removed; "
                "make someone else a lead first"
            )
        db.execute("DELETE FROM study_members WHERE study_id = ? AND user_id = ?", [study_id, who])
        record_audit(db, actor=normalise_user_id(actor), action="members.remove",
                     study_id=study_id, detail={"user": who, "role": current})
    return True


def add_to_organisation(
    db: sqlite_utils.Database, *, user: str, org_id: str, actor: str, display_name: str = ""
) -> bool:
    """Make ``user`` a member of organisation ``org_id`` (True if newly added); audited.

    Only a lead of the organisation may (its creator, or a lead of one of its
    team-mode studies), never the user themselves. An organisation nobody has
    claimed yet (made implicitly by a study, with no member, creator or
    team-mode study) takes its first member from whoever grants it, as if they
    created it.
    """
    who = normalise_user_id(user)
    with write_transaction(db):
        if not organisation_exists(db, org_id):
            raise ValueError(f"no organisation {org_id!r} in this store; create it first")
        granted_by = normalise_user_id(actor) if actor and actor.strip() else ""
        if organisation_in_team_mode(db, org_id):
            leads = organisation_leads(db, org_id)
            if granted_by not in leads:
                raise organisation_join_denied(granted_by=granted_by, user=who, org_id=org_id,
                                               leads=leads)
        granted_by = granted_by or who
        ensure_user(db, who, display_name)
        added = join_organisation(db, who, org_id, granted_by)
        if added:
            record_audit(db, actor=granted_by, action="organisations.add_user",
                         detail={"user": who, "org": org_id})
    return added


def get_member(db: sqlite_utils.Database, study_id: str, user: str) -> Member | None:
    row = db.execute(
        "SELECT m.study_id, m.user_id, u.display_name, m.role, m.granted_by, m.granted_at "
        "FROM study_members m JOIN users u ON u.user_id = m.user_id "
        "WHERE m.study_id = ? AND m.user_id = ?",
        [study_id, normalise_user_id(user)],
    ).fetchone()
    return None if row is None else _member(row)


def list_members(db: sqlite_utils.Database, study_id: str, *, viewer: Viewer
                 ) -> list[Member]:
    """The study's members, leads first, then by user id, if ``viewer`` may read the study
    (:func:`evalcore.store.read_access.require_read`; None is nobody)."""
    require_read(db, viewer, study_id)
    return [
        _member(r)
        for r in db.execute(
            "SELECT m.study_id, m.user_id, u.display_name, m.role, m.granted_by, m.granted_at "
            "FROM study_members m JOIN users u ON u.user_id = m.user_id WHERE m.study_id = ? "
            "ORDER BY CASE m.role WHEN 'lead' THEN 0 WHEN 'reviewer' THEN 1 ELSE 2 END, m.user_id",
            [study_id],
        )
    ]


def _member(row: tuple) -> Member:
    keys = ("study_id", "user_id", "display_name", "role", "granted_by", "granted_at")
    return Member(**dict(zip(keys, row, strict=True)))
