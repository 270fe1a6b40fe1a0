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

from collections.abc import Iterable, Sequence
from typing import Literal

from evalcore.access.identity import normalise_user_id
from evalcore.access.roles import REQUIRED_ROLE, Permission, RoleName, role_allows

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
            actor="", study_id=study_id, permission=permission, required_role=required, role=None,
        )
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
    if role is None:
        raise PermissionDenied(
            f"{user} may not {permission.value} in study {study_id!r}: they are not a member "
            f"of it, and it needs the {required} role; {grant_hint(study_id, user, required, leads)}",
            actor=user, study_id=study_id, permission=permission, required_role=required, role=None,
        )
    if not role_allows(role, permission):
        raise PermissionDenied(
            f"{user} may not {permission.value} in study {study_id!r}: they are {_article(role)} "
            f"{role}, and it needs the {required} role; "
            f"{grant_hint(study_id, user, required, leads)}",
            actor=user, study_id=study_id, permission=permission, required_role=required, role=role,
        )
    if org_id is not None and not in_study_org:
        raise PermissionDenied(
            f"{user} may not {permission.value} in study {study_id!r}: the study belongs to "
            f"organisation {org_id!r} and they are not in it; a lead of the study can add "
            f"them: evalcore members add-org --db STORE --user {user} --org {org_id}",
            actor=user, study_id=study_id, permission=permission, required_role=required, role=role,
        )
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
        actor=user, study_id=study_id, permission=Permission.READ,
        required_role=REQUIRED_ROLE[Permission.READ], role=None,
    )


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
    oracle on the documents it sees: it may be pinned, executed or have its document set
    shown only by someone who may read every one of them, checked for whoever acts, every
    time (never inherited from who pinned it).
    """
    name = f"pinned protocol {protocol!r}" if protocol else "a protocol"
    what = {
        Permission.PIN_PROTOCOL: f"pin {name} that sees",
        Permission.CREATE_RUN: f"run {name}, which sees",
    }.get(permission, f"see the document set of {name}, which covers")
    who = user or "nobody named"
    return PermissionDenied(
        f"{who} may not {what} organisation(s) {', '.join(missing)} in study {study_id!r}: "
        "they are not a member of them, and a protocol's rankings would reveal which of "
        "those organisations' documents contain which terms; "
        + ("sign in, or pass the acting user (--actor); " if not user else "")
        + "someone in every organisation the protocol sees may run it, or an admin of "
        f"{missing[0]!r} can add them: evalcore members add-org --db STORE --user "
        f"{user or 'USER'} --org {missing[0]}",
        actor=user, study_id=study_id, permission=permission,
        required_role=REQUIRED_ROLE[permission], role=None,
    )


def decide_corpus_write(
    *,
    corpus_id: str,
    user: str,
    team_studies: Sequence[str],
    lead_of: Iterable[str],
    member_of: Iterable[str],
    leads_of_hint_study: Sequence[str] = (),
    missing_orgs: Sequence[str] = (),
) -> None:
    """The corpus-write rule once some study over the corpus is in team mode.

    ``lead_of``/``member_of``: the team studies where ``user`` is a lead / any
    member; ``missing_orgs``: owner organisations of the written documents that
    ``user`` is not in. ``leads_of_hint_study``: the leads of the study the
    refusal names (the first study ``user`` belongs to, else the first).
    """
    if not user:
        raise PermissionDenied(
            f"nobody is named to {Permission.IMPORT.value} into corpus {corpus_id!r}, which "
            f"team-mode studies use ({', '.join(team_studies)}): sign in, or pass the acting user "
            "(--actor); it needs the lead role in one of them",
            actor="", study_id=team_studies[0], permission=Permission.IMPORT,
            required_role="lead", role=None,
        )
    if not list(lead_of):
        hint_study = corpus_hint_study(team_studies, member_of)
        raise PermissionDenied(
            f"{user} may not {Permission.IMPORT.value} into corpus {corpus_id!r}: "
            f"it is used by team-mode studies ({', '.join(team_studies)}) and that needs the "
            f"lead role in one of them; {grant_hint(hint_study, user, 'lead', leads_of_hint_study)}",
            actor=user, study_id=hint_study, permission=Permission.IMPORT, required_role="lead",
            role=None,
        )
    if missing_orgs:
        raise PermissionDenied(
            f"{user} may not add or change documents owned by organisation(s) "
            f"{', '.join(missing_orgs)} in corpus {corpus_id!r}: they are not a member of them",
            actor=user, study_id=team_studies[0], permission=Permission.IMPORT,
            required_role="lead", role="lead",
        )


def corpus_hint_study(team_studies: Sequence[str], member_of: Iterable[str]) -> str:
    """The study a corpus-write refusal names: the first one the user belongs to, else the first."""
    own = [s for s in team_studies if s in set(member_of)]
    return (own or list(team_studies))[0]


def organisation_entry_denied(
    *, org_id: str, study_id: str, user: str, what: str, team_studies: Sequence[str],
    leads: Sequence[str],
) -> PermissionDenied:
    """Someone outside an organisation with team-mode studies tried to ``what`` inside it."""
    who = f"{user} may not {what}" if user else f"nobody is named to {what}"
    return PermissionDenied(
        # the studies are counted, not named: the refused person may not see them
        f"{who} in organisation {org_id!r}: it has {len(team_studies)} team-mode "
        f"stud{'y' if len(team_studies) == 1 else 'ies'} and only its members may; "
        + ("sign in, or pass the acting user (--actor); " if not user else "")
        + f"a lead of one of them ({', '.join(leads)}) can add them: evalcore members add-org "
        f"--db STORE --user {user or 'USER'} --org {org_id}",
        actor=user, study_id=study_id, permission=Permission.MANAGE_MEMBERS,
        required_role="lead", role=None,
    )


def _article(word: str) -> str:
    return "an" if word[0] in "aeiou" else "a"


def study_over_corpus_denied(
    *,
    corpus_id: str,
    study_id: str,
    study_org: str | None,
    corpus_owner: str | None,
    owner_in_team_mode: bool,
    user: str,
    in_owner_org: bool,
    owner_leads: Sequence[str],
    corpus_team_studies: Sequence[str],
    lead_of_corpus_study: bool,
    what: str,
) -> PermissionDenied | None:
    """Why ``user`` may not ``what`` (create a study over / import into) the corpus; None: may.

    A corpus owned by an organisation in team mode is open only to that
    organisation's members, and never to a local-mode study (one with no
    organisation): otherwise anyone could create their own study over a team's
    corpus and read or overwrite its documents. A corpus with no owner that a
    team-mode study uses is open only to a lead of one of those studies.
    """
    def denied(message: str) -> PermissionDenied:
        return PermissionDenied(message, actor=user, study_id=study_id,
                                permission=Permission.IMPORT, required_role="lead", role=None)

    if corpus_owner is not None and owner_in_team_mode:
        if study_org is None and what.startswith("create"):
            return denied(
                f"a local-mode study (no organisation) may not be created over corpus "
                f"{corpus_id!r}: it belongs to organisation {corpus_owner!r}, which works in team "
                f"mode; create the study in that organisation (--org {corpus_owner}) as one of "
                "its members, or use another corpus id"
            )
        if not user:
            return denied(
                f"nobody is named to {what}: corpus {corpus_id!r} belongs to organisation "
                f"{corpus_owner!r}; sign in, or pass the acting user (--actor)"
            )
        if not in_owner_org:
            who = f" ({', '.join(owner_leads)})" if owner_leads else ""
            return denied(
                f"{user} may not {what}: corpus {corpus_id!r} belongs to organisation "
                f"{corpus_owner!r} and they are not a member of it; one of its leads{who} can "
                f"add them: evalcore members add-org --db STORE --user {user} --org {corpus_owner}"
            )
        return None
    if corpus_owner is None and corpus_team_studies and not lead_of_corpus_study:
        return denied(
            f"{user or 'nobody named'} may not {what}: corpus {corpus_id!r} has no owner "
            f"organisation and team-mode studies use it ({', '.join(corpus_team_studies)}); only "
            "a lead of one of them may"
        )
    return None


def organisation_join_denied(
    *, granted_by: str, user: str, org_id: str, leads: Sequence[str]
) -> PermissionDenied:
    """Someone who is not a lead of an existing organisation tried to add ``user`` to it."""
    who = granted_by or "nobody named"
    return PermissionDenied(
        f"{who} may not add {user} to organisation {org_id!r}: membership of an existing "
        "organisation is granted only by one of its leads (the lead role in one of its studies, "
        "or its creator)"
        + (f" ({', '.join(leads)})" if leads else "")
        + f", never by self-service; ask one of them to run: evalcore members add-org --db STORE "
        f"--user {user} --org {org_id} --actor THEM",
        actor=granted_by, study_id="", permission=Permission.MANAGE_MEMBERS,
        required_role="lead", role=None,
    )
