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

import json
from collections.abc import Iterable
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


def authorize_corpus_write(
    db: sqlite_utils.Database,
    *,
    corpus_id: str,
    actor: str | None,
    owner_orgs: Iterable[str | None],
    doc_ids: Iterable[str] = (),
) -> None:
    """Allow ``actor`` to add or change documents of the corpus, or raise PermissionDenied.

    While no study over the corpus is in team mode, anyone may (local mode). Then
    the actor must be a lead of a team-mode study over the corpus and belong to
    every organisation that will own one of the documents, and to every
    organisation that owns one of ``doc_ids`` now (an upsert would change them).
    """
    team = [
        r[0]
        for r in db.execute(
            "SELECT DISTINCT s.study_id FROM studies s JOIN study_members m "
            "ON m.study_id = s.study_id WHERE s.corpus_id = ? ORDER BY s.study_id",
            [corpus_id],
        )
    ]
    if not team:
        return
    user = normalise_user_id(actor) if actor and str(actor).strip() else ""
    if not user:
        raise PermissionDenied(
            f"nobody is named to {Permission.IMPORT.value} into corpus {corpus_id!r}, which "
            f"team-mode studies use ({', '.join(team)}): sign in, or pass the acting user "
            "(--actor); it needs the lead role in one of them",
            actor="", study_id=team[0], permission=Permission.IMPORT, required_role="lead",
            role=None,
        )
    if not any(member_role(db, s, user) == "lead" for s in team):
        own = [s for s in team if member_role(db, s, user) is not None]
        hint_study = (own or team)[0]
        raise PermissionDenied(
            f"{user} may not {Permission.IMPORT.value} into corpus {corpus_id!r}: "
            f"it is used by team-mode studies ({', '.join(team)}) and that needs the lead role "
            f"in one of them; {_grant_hint(db, hint_study, user, 'lead')}",
            actor=user, study_id=hint_study, permission=Permission.IMPORT, required_role="lead",
            role=None,
        )
    owners = set(owner_orgs)
    ids = list(doc_ids)
    if ids:
        owners |= {
            r[0]
            for r in db.execute(
                "SELECT DISTINCT owner_org FROM documents WHERE corpus_id = ? "
                "AND doc_id IN (SELECT value FROM json_each(?))",
                [corpus_id, json.dumps(ids)],
            )
        }
    missing = sorted({o for o in owners if o is not None and not in_organisation(db, user, o)})
    if missing:
        raise PermissionDenied(
            f"{user} may not add or change documents owned by organisation(s) "
            f"{', '.join(missing)} in corpus {corpus_id!r}: they are not a member of them",
            actor=user, study_id=team[0], permission=Permission.IMPORT, required_role="lead",
            role="lead",
        )


def organisation_team_studies(db: sqlite_utils.Database, org_id: str) -> list[str]:
    """The team-mode studies of organisation ``org_id``, by study id (none: local mode)."""
    return [
        r[0]
        for r in db.execute(
            "SELECT DISTINCT s.study_id FROM studies s JOIN study_members m "
            "ON m.study_id = s.study_id WHERE s.org_id = ? ORDER BY s.study_id",
            [org_id],
        )
    ]


def authorize_organisation_entry(
    db: sqlite_utils.Database, *, org_id: str | None, study_id: str, actor: str | None, what: str
) -> None:
    """Allow ``actor`` to ``what`` (create study ``study_id``, or make its first lead) inside
    organisation ``org_id``, or raise PermissionDenied.

    While the organisation has no team-mode study (local mode), anyone may. Once it
    has one, only a member of the organisation may: otherwise anyone could create
    or claim a study of the organisation and, as its lead, join the organisation
    and read its documents.
    """
    if org_id is None:
        return
    team = organisation_team_studies(db, org_id)
    if not team:
        return
    user = normalise_user_id(actor) if actor and str(actor).strip() else ""
    if user and in_organisation(db, user, org_id):
        return
    who = f"{user} may not {what}" if user else f"nobody is named to {what}"
    leads = sorted({lead for s in team for lead in study_leads(db, s)})
    raise PermissionDenied(
        f"{who} in organisation {org_id!r}: it has team-mode studies "
        f"({', '.join(team)}) and only its members may; "
        + ("sign in, or pass the acting user (--actor); " if not user else "")
        + f"a lead of one of them ({', '.join(leads)}) can add them: evalcore members add-org "
        f"--db STORE --user {user or 'USER'} --org {org_id}",
        actor=user, study_id=study_id, permission=Permission.MANAGE_MEMBERS,
        required_role="lead", role=None,
    )


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
