"""Users, their organisations and the members of each study (with their roles).

Every change is authorised and audited: study members by the study's leads
(:data:`Permission.MANAGE_MEMBERS`), organisation members by its admins and owners
(:mod:`evalcore.access.organisations`). Rules that keep both governable:

* a study's first member must be a lead (that turns team mode on);
* a team-mode study keeps at least one lead, an organisation with members at least one
  owner: the last can be neither removed nor demoted;
* a study lead adds people who already belong to the study's organisation; an admin of it
  admits others (an admin who leads the study may do both at once). The first person added
  to an unclaimed organisation (no member yet) becomes its owner."""

import sqlite_utils

from evalcore.access.decisions import named_user, viewer_id
from evalcore.access.identity import normalise_user_id
from evalcore.access.organisations import (
    OrganisationPermissionDenied,
    OrgPermission,
    OrgRole,
    check_org_role,
    decide_membership_change,
    decide_study_member_joins,
)
from evalcore.access.roles import Permission, RoleName, check_role
from evalcore.contract.frozen import FrozenModel
from evalcore.io.clock import utc_now_iso
from evalcore.store.audit import record_audit
from evalcore.store.authorize import (
    authorize,
    authorize_organisation_entry,
    known_study,
    require_known_study,
)
from evalcore.store.lookup import models
from evalcore.store.membership import (
    ensure_user,
    in_organisation,
    join_organisation,
    leave_organisation,
    member_role,
    organisation_admins,
    organisation_claimed,
    organisation_exists,
    organisation_owners,
    organisation_role,
    set_organisation_role,
    study_leads,
    study_mode,
)
from evalcore.store.studies import StudyIn
from evalcore.store.study_handle import Study
from evalcore.store.study_setup import create_study
from evalcore.store.transaction import write_transaction

#: Gives a user a role in a study (or changes it): study, user, role, granted by, granted at.
GRANT_STUDY_ROLE = (
    "INSERT INTO study_members (study_id, user_id, role, granted_by, granted_at) "
    "VALUES (?, ?, ?, ?, ?) ON CONFLICT (study_id, user_id) DO UPDATE SET "
    "role = excluded.role, granted_by = excluded.granted_by, granted_at = excluded.granted_at"
)


class Member(FrozenModel):
    """One member of a study."""

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
    """Give ``user`` ``role`` in the study (or change their role); audited. The first member
    must be a lead; the last lead cannot be demoted; someone outside the study's organisation
    joins it only when ``actor`` is one of its admins (or it is unclaimed). PermissionDenied
    when ``actor`` may not, ValueError for a bad role or user id; nothing is written then."""
    role = check_role(role)
    who = normalise_user_id(user)
    study = known_study(db, actor, study_id)
    with write_transaction(db):
        manage = Permission.MANAGE_MEMBERS
        authorize(db, study_id=study_id, actor=actor, permission=manage, study=study)
        if study_mode(db, study_id) == "local":
            what = f"turn team mode on in study {study_id!r}"
            authorize_organisation_entry(db, org_id=study.org_id, study_id=study_id, actor=actor,
                                         what=what)
            if role != "lead":
                raise ValueError(
                    f"study {study_id!r} has no member yet (local single-user mode); its first "
                    f"member must be a lead, who then adds the others: evalcore members add "
                    f"--db STORE --study {study_id} --user YOU --role lead"
                )
        current = member_role(db, study_id, who)
        if current == "lead" and role != "lead" and study_leads(db, study_id) == [who]:
            raise ValueError(
                f"{who} is the last lead of study {study_id!r}; make someone else a lead first"
            )
        granted_by = normalise_user_id(actor) if actor and actor.strip() else who
        org = study.org_id
        joins = org is not None and not in_organisation(db, who, org)
        if joins and organisation_claimed(db, org):
            granter_role = organisation_role(db, granted_by, org)
            decide_study_member_joins(org_id=org, study_id=study_id, granter=granted_by, user=who,
                                      granter_role=granter_role,
                                      admins=organisation_admins(db, org))
        ensure_user(db, who, display_name)
        db.execute(GRANT_STUDY_ROLE, [study_id, who, role, granted_by, utc_now_iso()])
        if joins:
            join_organisation(db, who, org, granted_by)
            joined = {"user": who, "org": org, "role": organisation_role(db, who, org)}
            record_audit(db, actor=granted_by, action="organisations.add_user",
                         study_id=study_id, detail=joined)
        added = {"user": who, "role": role, "previous_role": current}
        record_audit(db, actor=granted_by, action="members.add", study_id=study_id, detail=added)
    return get_member(db, study_id, who)  # type: ignore[return-value]


def create_team_study(
    db: sqlite_utils.Database, study: StudyIn, *, lead: str, display_name: str = ""
) -> Member:
    """Create ``study`` with ``lead`` as its first member (team mode from the start), in one
    transaction: if the lead cannot be added, the study is not created either."""
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
        removed = {"user": who, "role": current}
        record_audit(db, actor=normalise_user_id(actor), action="members.remove",
                     study_id=study_id, detail=removed)
    return True


class OrgMember(FrozenModel):
    """One member of an organisation."""

    org_id: str
    user_id: str
    display_name: str
    role: OrgRole
    granted_by: str
    granted_at: str


def add_to_organisation(
    db: sqlite_utils.Database, *, user: str, org_id: str, actor: str, role: str | None = None,
    display_name: str = "",
) -> bool:
    """Make ``user`` a member of organisation ``org_id`` with ``role`` (None: ``member`` for
    someone new, else unchanged), or change their role; True if anything changed. Audited.
    Admins and owners admit members, owners grant admin and owner
    (:func:`evalcore.access.organisations.decide_membership_change`), never the user or a study
    lead; the first member of an unclaimed organisation becomes its owner."""
    wanted = None if role is None else check_org_role(role)
    who = normalise_user_id(user)
    with write_transaction(db):
        if not organisation_exists(db, org_id):
            raise ValueError(f"no organisation {org_id!r} in this store; create it first "
                             "(evalcore study create --org creates it, or the Data page)")
        granted_by = named_user(actor)
        current = organisation_role(db, who, org_id)
        new: OrgRole = wanted or current or "member"
        if current == new:
            return False
        if organisation_claimed(db, org_id):
            _decide_change(db, org_id, granted_by, who, current, new)
        granted_by = granted_by or who
        ensure_user(db, who, display_name)
        if current is None:
            join_organisation(db, who, org_id, granted_by, new)
            action = "organisations.add_user"
        else:
            set_organisation_role(db, who, org_id, new, granted_by)
            action = "organisations.set_role"
        role_now = organisation_role(db, who, org_id)
        detail = {"user": who, "org": org_id, "role": role_now, "previous_role": current}
        record_audit(db, actor=granted_by, action=action, detail=detail)
    return True


def remove_from_organisation(
    db: sqlite_utils.Database, *, user: str, org_id: str, actor: str
) -> bool:
    """Remove ``user`` from the organisation (False if not in it); audited. Admins remove members,
    owners remove admins and owners, anyone may leave; the last owner stays. Study memberships
    stay, but the organisation's studies and documents are no longer theirs to see."""
    who = normalise_user_id(user)
    with write_transaction(db):
        current = organisation_role(db, who, org_id)
        if current is None:
            return False
        granted_by = named_user(actor)
        _decide_change(db, org_id, granted_by, who, current, None)
        leave_organisation(db, who, org_id)
        detail = {"user": who, "org": org_id, "role": current}
        record_audit(db, actor=granted_by, action="organisations.remove_user", detail=detail)
    return True


def _decide_change(db: sqlite_utils.Database, org_id: str, granter: str, user: str,
                   current: OrgRole | None, new: OrgRole | None) -> None:
    """:func:`evalcore.access.organisations.decide_membership_change` on the store's facts."""
    decide_membership_change(
        org_id=org_id, granter=granter, granter_role=organisation_role(db, granter, org_id),
        user=user, current=current, new=new, owners=organisation_owners(db, org_id),
        admins=organisation_admins(db, org_id))


def list_organisation_members(
    db: sqlite_utils.Database, org_id: str, *, viewer: str | None
) -> list[OrgMember]:
    """The organisation's members, owners first, then admins, then by user id, if
    ``viewer`` is one of them (PermissionDenied otherwise; an unknown organisation is
    reported the same way, so its existence is not told to outsiders)."""
    user = viewer_id(viewer)
    if user is None or organisation_role(db, user, org_id) is None:
        raise OrganisationPermissionDenied(
            f"{user or 'nobody named'} may not list the members of organisation {org_id!r}: "
            "only its members may (`evalcore members list-org --db STORE --actor YOU` lists "
            "your organisations)",
            actor=user or "", org_id=org_id, org_permission=OrgPermission.READ)
    order = "CASE o.role WHEN 'owner' THEN 0 WHEN 'admin' THEN 1 ELSE 2 END, o.user_id"
    sql = f"{_ORG_MEMBERS} WHERE o.org_id = ? ORDER BY {order}"
    return models(OrgMember, db.execute(sql, [org_id]))


def organisations_of(db: sqlite_utils.Database, user: str) -> list[OrgMember]:
    """``user``'s memberships of organisations (their role in each), by organisation id."""
    who = viewer_id(user)
    if who is None:
        return []
    return models(OrgMember, db.execute(
        f"{_ORG_MEMBERS} WHERE o.user_id = ? ORDER BY o.org_id", [who]))


_ORG_MEMBERS = ("SELECT o.org_id, o.user_id, u.display_name, o.role, o.granted_by, "
                "o.granted_at FROM user_organisations o JOIN users u ON u.user_id = o.user_id")


_MEMBERS = ("SELECT m.study_id, m.user_id, u.display_name, m.role, m.granted_by, m.granted_at "
            "FROM study_members m JOIN users u ON u.user_id = m.user_id")


def get_member(db: sqlite_utils.Database, study_id: str, user: str) -> Member | None:
    found = models(Member, db.execute(f"{_MEMBERS} WHERE m.study_id = ? AND m.user_id = ?",
                                      [study_id, normalise_user_id(user)]))
    return found[0] if found else None


def list_members(study: Study) -> list[Member]:
    """The study's members, leads first, then by user id."""
    order = "CASE m.role WHEN 'lead' THEN 0 WHEN 'reviewer' THEN 1 ELSE 2 END, m.user_id"
    sql = f"{_MEMBERS} WHERE m.study_id = ? ORDER BY {order}"
    return models(Member, study.db.execute(sql, [study.study_id]))
