"""The one gate every write passes: :func:`authorize`.

**Local single-user mode.** A study with no member is in local mode: every
action is allowed and attributed to whoever the caller names (the local user).
**Team mode** starts when the study's first member — a lead — is added
(``evalcore members add --db F --study S --user U --role lead``); from then on
every action needs a role (see :mod:`evalcore.access.roles`) and, when the
study belongs to an organisation, membership of that organisation.

Callers run :func:`authorize` inside the same ``write_transaction`` as the
write it guards: ``BEGIN IMMEDIATE`` holds the write lock, so membership cannot
change between the check and the write, and a refusal rolls back to nothing.
"""

from typing import Literal

import sqlite_utils

from evalcore.access.identity import normalise_user_id
from evalcore.access.roles import REQUIRED_ROLE, Permission, RoleName, role_allows
from evalcore.store.studies import get_study

StudyMode = Literal["local", "team"]


class PermissionDenied(PermissionError):
    """``actor`` may not do ``permission`` in ``study_id``; the message says who can grant it."""

    def __init__(
        self,
        message: str,
        *,
        actor: str,
        study_id: str,
        permission: Permission,
        required_role: RoleName,
        role: RoleName | None,
    ) -> None:
        super().__init__(message)
        self.actor = actor
        self.study_id = study_id
        self.permission = permission
        self.required_role = required_role
        self.role = role


def study_mode(db: sqlite_utils.Database, study_id: str) -> StudyMode:
    """``"team"`` when the study has at least one member, else ``"local"``."""
    row = db.execute("SELECT 1 FROM study_members WHERE study_id = ? LIMIT 1", [study_id]).fetchone()
    return "team" if row else "local"


def member_role(db: sqlite_utils.Database, study_id: str, user_id: str) -> RoleName | None:
    row = db.execute(
        "SELECT role FROM study_members WHERE study_id = ? AND user_id = ?", [study_id, user_id]
    ).fetchone()
    return row[0] if row else None


def study_leads(db: sqlite_utils.Database, study_id: str) -> list[str]:
    return [
        r[0]
        for r in db.execute(
            "SELECT user_id FROM study_members WHERE study_id = ? AND role = 'lead' "
            "ORDER BY user_id",
            [study_id],
        )
    ]


def in_organisation(db: sqlite_utils.Database, user_id: str, org_id: str) -> bool:
    return db.execute(
        "SELECT 1 FROM user_organisations WHERE user_id = ? AND org_id = ?", [user_id, org_id]
    ).fetchone() is not None


def _grant_hint(db: sqlite_utils.Database, study_id: str, user: str, role: RoleName) -> str:
    leads = study_leads(db, study_id)
    who = f"a lead of {study_id!r} ({', '.join(leads)})" if leads else f"a lead of {study_id!r}"
    return (
        f"{who} can grant it: evalcore members add --db STORE --study {study_id} "
        f"--user {user} --role {role}"
    )


def authorize(
    db: sqlite_utils.Database,
    *,
    study_id: str,
    actor: str | None,
    permission: Permission,
) -> RoleName | None:
    """Allow ``actor`` to do ``permission`` in the study, or raise :class:`PermissionDenied`.

    Returns the actor's role, or None in local single-user mode (every action
    allowed). Raises ``StudyNotFoundError`` for an unknown study. Reads only:
    call it inside the write transaction of the action it guards.
    """
    study = get_study(db, study_id)
    if study_mode(db, study_id) == "local":
        return None
    required = REQUIRED_ROLE[permission]
    if actor is None or not str(actor).strip():
        raise PermissionDenied(
            f"nobody is named to {permission.value} in study {study_id!r}, which is in team "
            f"mode: sign in, or pass the acting user (--actor); it needs the {required} role",
            actor="", study_id=study_id, permission=permission, required_role=required, role=None,
        )
    user = normalise_user_id(actor)
    role = member_role(db, study_id, user)
    if role is None:
        raise PermissionDenied(
            f"{user} may not {permission.value} in study {study_id!r}: they are not a member "
            f"of it, and it needs the {required} role; {_grant_hint(db, study_id, user, required)}",
            actor=user, study_id=study_id, permission=permission, required_role=required, role=None,
        )
    if not role_allows(role, permission):
        raise PermissionDenied(
            f"{user} may not {permission.value} in study {study_id!r}: they are {_article(role)} "
            f"{role}, and it needs the {required} role; "
            f"{_grant_hint(db, study_id, user, required)}",
            actor=user, study_id=study_id, permission=permission, required_role=required, role=role,
        )
    if study.org_id is not None and not in_organisation(db, user, study.org_id):
        raise PermissionDenied(
            f"{user} may not {permission.value} in study {study_id!r}: the study belongs to "
            f"organisation {study.org_id!r} and they are not in it; a lead of the study can add "
            f"them: evalcore members add-org --db STORE --user {user} --org {study.org_id}",
            actor=user, study_id=study_id, permission=permission, required_role=required, role=role,
        )
    return role


def allowed(
    db: sqlite_utils.Database, *, study_id: str, actor: str | None, permission: Permission
) -> bool:
    """Would :func:`authorize` let ``actor`` do ``permission``? (For enabling buttons;
    the write itself still calls :func:`authorize`.)"""
    try:
        authorize(db, study_id=study_id, actor=actor, permission=permission)
    except PermissionDenied:
        return False
    return True


def _article(word: str) -> str:
    return "an" if word[0] in "aeiou" else "a"
