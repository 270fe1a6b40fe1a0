"""The decision rules of access control, given the facts the store read.

Pure policy: no SQL, no store. :mod:`evalcore.store.authorize` and
:mod:`evalcore.store.scoping` read the facts (a study's mode, the actor's role,
its leads, organisation memberships) and ask these functions what to allow;
each refusal is a :class:`PermissionDenied` (or a reason string) a person can
act on.

**Local single-user mode.** A study with no member is in local mode: every
action is allowed and attributed to whoever the caller names (the local user).
**Team mode** starts when the study's first member — a lead — is added; from
then on every action needs a role (see :mod:`evalcore.access.roles`) and, when
the study belongs to an organisation, membership of that organisation.
"""

from collections.abc import Sequence
from typing import Literal

from evalcore.access.identity import normalise_user_id
from evalcore.access.roles import REQUIRED_ROLE, Permission, RoleName, role_allows

StudyMode = Literal["local", "team"]


class PermissionDenied(PermissionError):
    """``actor`` may not do ``permission`` in ``study_id``; the message says who can grant it.
    ``required_role``: by default the least role holding ``permission``; ``role``: the actor's."""

    def __init__(
        self,
        message: str,
        *,
        actor: str,
        study_id: str,
        permission: Permission,
        required_role: RoleName | None = None,
        role: RoleName | None = None,
    ) -> None:
        super().__init__(message)
        self.actor = actor
        self.study_id = study_id
        self.permission = permission
        self.required_role = required_role or REQUIRED_ROLE[permission]
        self.role = role


def named_user(actor: str | None) -> str:
    """The canonical id of ``actor``, or '' when nobody is named."""
    return normalise_user_id(actor) if actor and str(actor).strip() else ""


def viewer_id(viewer: str | None) -> str | None:
    """The canonical id of a viewer, or None for nobody (or an unusable id)."""
    try:
        return normalise_user_id(viewer)
    except ValueError:
        return None


def grant_hint(study_id: str, user: str, role: RoleName, leads: Sequence[str]) -> str:
    """Who can grant ``role`` in the study, and the command they run."""
    who = f"a lead of {study_id!r} ({', '.join(leads)})" if leads else f"a lead of {study_id!r}"
    return (
        f"{who} can grant it: evalcore members add --db STORE --study {study_id} "
        f"--user {user} --role {role}"
    )


def require_actor(actor: str | None, *, study_id: str, permission: Permission) -> str:
    """The canonical acting user of a team-mode study; PermissionDenied when nobody is named."""
    if actor is None or not str(actor).strip():
        required = REQUIRED_ROLE[permission]
        raise PermissionDenied(
            f"nobody is named to {permission.value} in study {study_id!r}, which is in team "
            f"mode: sign in, or pass the acting user (--actor); it needs the {required} role",
            actor="", study_id=study_id, permission=permission)
    return normalise_user_id(actor)


def decide_study_action(
    *,
    study_id: str,
    org_id: str | None,
    user: str,
    role: RoleName | None,
    leads: Sequence[str],
    in_study_org: bool,
    permission: Permission,
) -> RoleName:
    """``user``'s role if it allows ``permission`` in a team-mode study, else PermissionDenied.

    ``in_study_org``: whether the user belongs to the study's organisation
    (True when the study has none).
    """
    required = REQUIRED_ROLE[permission]

    def denied(why: str) -> PermissionDenied:
        return PermissionDenied(
            f"{user} may not {permission.value} in study {study_id!r}: {why}",
            actor=user, study_id=study_id, permission=permission, role=role)

    if role is None:
        raise denied(f"they are not a member of it, and it needs the {required} role; "
                     f"{grant_hint(study_id, user, required, leads)}")
    if not role_allows(role, permission):
        raise denied(f"they are {_article(role)} {role}, and it needs the {required} role; "
                     f"{grant_hint(study_id, user, required, leads)}")
    if org_id is not None and not in_study_org:
        raise denied(f"the study belongs to organisation {org_id!r} and they are not in it; an "
                     "admin of the organisation can add them: evalcore members add-org --db "
                     f"STORE --user {user} --org {org_id}")
    return role


def study_view_refusal(
    *,
    study_id: str,
    org_id: str | None,
    mode: StudyMode,
    user: str | None,
    is_member: bool,
    in_study_org: bool,
) -> str | None:
    """Why ``user`` may not see the study (None: they may)."""
    if mode == "local":
        return None
    if user is None:
        return f"study {study_id!r} is in team mode: sign in to see it"
    if not is_member:
        return f"{user} is not a member of study {study_id!r}"
    if org_id is not None and not in_study_org:
        return f"study {study_id!r} belongs to organisation {org_id!r}, and {user} is not in it"
    return None


def study_view_denied(refusal: str, *, study_id: str, user: str) -> PermissionDenied:
    """The PermissionDenied for a :func:`study_view_refusal`."""
    return PermissionDenied(
        f"{refusal}; a lead of the study can add them: evalcore members add --db STORE "
        f"--study {study_id} --user {user or 'USER'} --role annotator",
        actor=user, study_id=study_id, permission=Permission.READ)


def document_refusal_rule(
    *,
    corpus_id: str,
    corpus_team_mode: bool,
    user: str | None,
    owner_org: str | None,
    in_owner_org: bool,
    member_of_corpus_study: bool,
) -> str | None:
    """Why ``user`` may not read a document owned by ``owner_org`` (None: they may).

    In a local-mode corpus every document is readable; in a team-mode corpus a
    document is readable by members of its owner organisation, and an unowned
    one by the members of a team-mode study over the corpus.
    """
    if not corpus_team_mode:
        return None
    if user is None:
        return f"corpus {corpus_id!r} is used by a team-mode study: sign in to read its documents"
    if owner_org is not None:
        if in_owner_org:
            return None
        return f"the document belongs to organisation {owner_org!r}, and {user} is not in it"
    if member_of_corpus_study:
        return None
    return f"{user} is not a member of any study over corpus {corpus_id!r}"


def protocol_organisations_denied(
    *, user: str, study_id: str, missing: Sequence[str], permission: Permission,
    protocol: str | None = None,
) -> PermissionDenied:
    """``user`` may not ``permission`` a protocol that sees documents of organisations they
    are not in (``missing``).

    A protocol's rankings (its scores, which documents match which terms) are a search
    oracle on the documents it sees: it may be pinned (``PIN_PROTOCOL``) or executed
    (``CREATE_RUN``) only by someone who may read every one of them, checked for whoever
    acts, every time (never inherited from who pinned it).
    """
    name = f"pinned protocol {protocol!r}" if protocol else "a protocol"
    if permission is Permission.PIN_PROTOCOL:
        what = f"pin {name} that sees"
    else:
        what = f"run {name}, which sees"
    who = user or "nobody named"
    return PermissionDenied(
        f"{who} may not {what} organisation(s) {', '.join(missing)} in study {study_id!r}: "
        "they are not a member of them, and a protocol's rankings would reveal which of "
        "those organisations' documents contain which terms; "
        + ("sign in, or pass the acting user (--actor); " if not user else "")
        + "someone in every organisation the protocol sees may run it, or an admin of "
        f"{missing[0]!r} can add them: evalcore members add-org --db STORE --user "
        f"{user or 'USER'} --org {missing[0]}",
        actor=user, study_id=study_id, permission=permission)


def _article(word: str) -> str:
    return "an" if word[0] in "aeiou" else "a"
