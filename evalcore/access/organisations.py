"""Organisation roles and the rules that need them: who admits people, who writes a corpus.

Pure policy, like :mod:`evalcore.access.decisions` (which holds the study-level
rules): the store reads the facts (:mod:`evalcore.store.membership`) and these
functions decide. The table in docs/access-model.md says the same.

Roles of an organisation, cumulative:

* **member**: reads the organisation's documents, creates studies in it (becoming
  their lead), is added to its studies by their leads;
* **admin**: + admits people to the organisation and removes members, writes the
  organisation's documents (imports into its corpora, replacements), shares its
  corpus with another organisation (creates that organisation's study over it);
* **owner**: + grants and revokes the admin and owner roles. An organisation keeps at
  least one owner.

A study lead manages the study only: its members' study roles, among people who
already belong to the study's organisation. An organisation with no member is
*unclaimed* (local mode): the first person added to it becomes its owner.
"""

from collections.abc import Iterable, Sequence
from enum import StrEnum
from typing import Literal

from evalcore.access.decisions import PermissionDenied
from evalcore.access.roles import Permission

OrgRole = Literal["member", "admin", "owner"]

#: Organisation roles from least to most powerful.
ORG_ROLES: tuple[OrgRole, ...] = ("member", "admin", "owner")


class OrgPermission(StrEnum):
    """One kind of action on an organisation."""

    READ = "read the organisation's documents and create studies in it"
    ADD_MEMBERS = "add people to the organisation or remove its members"
    WRITE_CORPUS = "write the organisation's documents"
    SHARE_CORPUS = "open the organisation's corpus to another organisation's study"
    MANAGE_ROLES = "grant or revoke the admin and owner roles"


#: The least organisation role that holds each permission: an admin's, but for reading (a
#: member's) and managing roles (an owner's).
REQUIRED_ORG_ROLE: dict[OrgPermission, OrgRole] = dict.fromkeys(OrgPermission, "admin") | {
    OrgPermission.READ: "member",
    OrgPermission.MANAGE_ROLES: "owner",
}

#: The study-level permission a refusal of each organisation permission is filed under.
_STUDY_PERMISSION = {
    OrgPermission.READ: Permission.READ,
    OrgPermission.ADD_MEMBERS: Permission.MANAGE_MEMBERS,
    OrgPermission.WRITE_CORPUS: Permission.IMPORT,
    OrgPermission.SHARE_CORPUS: Permission.IMPORT,
    OrgPermission.MANAGE_ROLES: Permission.MANAGE_MEMBERS,
}


class OrganisationPermissionDenied(PermissionDenied):
    """``actor`` may not do ``org_permission`` in organisation ``org_id``."""

    def __init__(self, message: str, *, actor: str, org_id: str,
                 org_permission: OrgPermission, org_role: OrgRole | None = None,
                 study_id: str = "") -> None:
        permission = _STUDY_PERMISSION[org_permission]
        super().__init__(message, actor=actor, study_id=study_id, permission=permission,
                         required_role="lead")
        self.org_id = org_id
        self.org_permission = org_permission
        self.required_org_role = REQUIRED_ORG_ROLE[org_permission]
        self.org_role = org_role


def check_org_role(role: object) -> OrgRole:
    """``role`` if it names an organisation role, else ValueError listing them."""
    if role not in ORG_ROLES:
        raise ValueError(f"unknown organisation role {role!r}: choose one of "
                         f"{', '.join(ORG_ROLES)}")
    return role  # type: ignore[return-value]


def org_role_allows(role: OrgRole | None, permission: OrgPermission) -> bool:
    """Does ``role`` (None: not a member) hold ``permission``?"""
    return role is not None and ORG_ROLES.index(role) >= ORG_ROLES.index(
        REQUIRED_ORG_ROLE[permission])


def _grant(org_id: str, role: OrgRole, user: str, granters: Sequence[str]) -> str:
    """Who can grant ``role`` in the organisation, and the command they run."""
    who = "an owner" if role != "member" else "an admin"
    named = f" ({', '.join(granters)})" if granters else ""
    flag = f" --role {role}" if role != "member" else ""
    return (f"{who} of {org_id!r}{named} can grant it: evalcore members add-org --db STORE "
            f"--user {user or 'USER'} --org {org_id}{flag} --actor THEM")


def require_org_role(
    *, org_id: str, user: str, role: OrgRole | None, permission: OrgPermission,
    granters: Sequence[str], what: str | None = None, study_id: str = "", note: str = "",
    hint: str | None = None,
) -> None:
    """Raise unless ``role`` holds ``permission``; ``granters``: who could grant it.

    The message says who may not do what, why (their role and the one needed, then
    ``note``), and what to do: ``hint``, by default who can grant them the role."""
    if org_role_allows(role, permission):
        return
    needed = REQUIRED_ORG_ROLE[permission]
    if not user:
        reason = "sign in, or pass the acting user (--actor)"
    elif role is None:
        reason = f"they are not a member of it, and that needs the {needed} role"
    else:
        reason = (f"they are {'an' if role[0] in 'aeiou' else 'a'} {role}, and that needs "
                  f"the {needed} role")
    raise OrganisationPermissionDenied(
        f"{user or 'nobody named'} may not {what or permission.value} in organisation "
        f"{org_id!r}: {reason}{'; ' + note if note else ''}; "
        f"{hint or _grant(org_id, needed, user, granters)}",
        actor=user, org_id=org_id, org_permission=permission, org_role=role, study_id=study_id)


def decide_membership_change(
    *,
    org_id: str,
    granter: str,
    granter_role: OrgRole | None,
    user: str,
    current: OrgRole | None,
    new: OrgRole | None,
    owners: Sequence[str],
    admins: Sequence[str],
) -> None:
    """May ``granter`` give ``user`` the role ``new`` (None: remove them) in a claimed
    organisation? PermissionDenied or ValueError (the last owner) if not.

    Members are added and removed by admins; the admin and owner roles are granted and
    revoked by owners; anyone may leave on their own; the last owner stays.
    """
    if not (new is None and granter and granter == user):  # leaving on one's own needs none
        privileged = new in ("admin", "owner") or current in ("admin", "owner")
        granters = owners if privileged else admins
        role_flag = f" --role {new}" if new not in (None, "member") else ""
        if new is None:
            change = f"remove {user}"
            command = f"evalcore members remove-org --db STORE --user {user} --org {org_id}"
        else:
            change = f"make {user} {new}"
            if current is None:
                change = f"add {user}" + (f" as {new}" if new != "member" else "")
            command = f"evalcore members add-org --db STORE --user {user} --org {org_id}{role_flag}"
        require_org_role(
            org_id=org_id, user=granter, role=granter_role,
            permission=OrgPermission.MANAGE_ROLES if privileged else OrgPermission.ADD_MEMBERS,
            granters=granters, what=change,
            note=(f"{'roles' if privileged else 'membership'} of an organisation "
                  f"{'are' if privileged else 'is'} granted by its "
                  f"{'owners' if privileged else 'admins'}, never by self-service or a study "
                  "lead"),
            hint=f"ask one of them{' (' + ', '.join(granters) + ')' if granters else ''} to "
                 f"run: {command} --actor THEM")
    if current == "owner" and new != "owner" and list(owners) == [user]:
        raise ValueError(
            f"{user} is the last owner of organisation {org_id!r} and cannot be "
            f"{'removed' if new is None else 'demoted'}; make someone else an owner first: "
            f"evalcore members add-org --db STORE --user OTHER --org {org_id} --role owner")


def decide_study_member_joins(
    *, org_id: str, study_id: str, granter: str, granter_role: OrgRole | None, user: str,
    admins: Sequence[str],
) -> None:
    """A study lead adds ``user``, who is not in the study's organisation: only an admin of
    the organisation may admit them with it (a study lead manages the study only)."""
    if org_role_allows(granter_role, OrgPermission.ADD_MEMBERS):
        return
    named = f" ({', '.join(admins)})" if admins else ""
    raise OrganisationPermissionDenied(
        f"{granter or 'nobody named'} may not add {user} to study {study_id!r}: {user} is not "
        f"a member of its organisation {org_id!r}, and only the organisation's admins"
        f"{named} admit people to it (study leads manage studies only); one of them can run: "
        f"evalcore members add-org --db STORE --user {user} --org {org_id} --actor THEM, "
        "then add them to the study",
        actor=granter, org_id=org_id, org_permission=OrgPermission.ADD_MEMBERS,
        org_role=granter_role, study_id=study_id)


def organisation_entry_denied(
    *, org_id: str, study_id: str, user: str, what: str, team_studies: Sequence[str],
    admins: Sequence[str],
) -> PermissionDenied:
    """Someone outside an organisation with team-mode studies tried to ``what`` inside it."""
    who = f"{user} may not {what}" if user else f"nobody is named to {what}"
    return OrganisationPermissionDenied(
        # the studies are counted, not named: the refused person may not see them
        f"{who} in organisation {org_id!r}: it has {len(team_studies)} team-mode "
        f"stud{'y' if len(team_studies) == 1 else 'ies'} and only its members may; "
        + ("sign in, or pass the acting user (--actor); " if not user else "")
        + f"an admin of it ({', '.join(admins)}) can add them: evalcore members add-org "
        f"--db STORE --user {user or 'USER'} --org {org_id}",
        actor=user, org_id=org_id, org_permission=OrgPermission.READ, study_id=study_id)


def study_over_corpus_denied(
    *,
    corpus_id: str,
    study_id: str,
    study_org: str | None,
    corpus_owner: str | None,
    owner_claimed: bool,
    user: str,
    owner_role: OrgRole | None,
    owner_admins: Sequence[str],
    corpus_team_studies: Sequence[str],
    lead_of_corpus_study: bool,
    what: str,
) -> PermissionDenied | None:
    """Why ``user`` may not ``what`` (create study ``study_id`` over the corpus); None: may.

    A corpus owned by a claimed organisation is open to that organisation's members for
    its own studies, to its admins for another organisation's study (sharing the corpus
    is the organisation's decision), and never to a local-mode study (one with no
    organisation): otherwise anyone could create their own study over a team's corpus and
    read or overwrite its documents. A corpus with no owner that a team-mode study uses
    is open only to a lead of one of those studies.
    """
    def denied(message: str) -> PermissionDenied:
        return OrganisationPermissionDenied(
            message, actor=user, org_id=corpus_owner or "", org_permission=OrgPermission.READ,
            org_role=owner_role, study_id=study_id)

    if corpus_owner is not None and owner_claimed:
        if study_org is None:
            return denied(
                f"a local-mode study (no organisation) may not be created over corpus "
                f"{corpus_id!r}: it belongs to organisation {corpus_owner!r}, which works in team "
                f"mode; create the study in that organisation (--org {corpus_owner}) as one of "
                "its members, or use another corpus id")
        if not user:
            return denied(
                f"nobody is named to {what}: corpus {corpus_id!r} belongs to organisation "
                f"{corpus_owner!r}; sign in, or pass the acting user (--actor)")
        if owner_role is None:
            who = f" ({', '.join(owner_admins)})" if owner_admins else ""
            return denied(
                f"{user} may not {what}: corpus {corpus_id!r} belongs to organisation "
                f"{corpus_owner!r} and they are not a member of it; one of its admins{who} can "
                f"add them: evalcore members add-org --db STORE --user {user} --org {corpus_owner}")
        if study_org != corpus_owner:
            try:
                require_org_role(
                    org_id=corpus_owner, user=user, role=owner_role,
                    permission=OrgPermission.SHARE_CORPUS, granters=owner_admins,
                    what=f"{what} for organisation {study_org!r}", study_id=study_id,
                    note=f"that opens corpus {corpus_id!r} to another organisation")
            except PermissionDenied as refusal:
                return refusal
        return None
    if corpus_owner is None and corpus_team_studies and not lead_of_corpus_study:
        return denied(
            f"{user or 'nobody named'} may not {what}: corpus {corpus_id!r} has no owner "
            f"organisation and team-mode studies use it ({', '.join(corpus_team_studies)}); only "
            "a lead of one of them may")
    return None


def decide_corpus_write(
    *,
    corpus_id: str,
    user: str,
    corpus_owner: str | None,
    claimed: Iterable[str],
    roles: dict[str, OrgRole | None],
    owners: Iterable[str | None],
    sharing: Iterable[str],
    team_studies: Sequence[str],
    lead_of_team_study: bool,
    owners_of: dict[str, list[str]],
) -> None:
    """May ``user`` write documents owned by ``owners`` (None: unowned) into the corpus?
    ``roles``: ``user``'s role in each organisation concerned (absent: not a member);
    ``owners_of``: who can make them an admin of each.

    * The documents' organisations (the current owners of documents an upsert changes
      included; the corpus's owner for unowned ones): ``user`` must be an admin of each
      that is claimed (a study lead, or a mere member, may not).
    * Into a corpus whose owner is claimed, another organisation's documents enter only
      once that organisation has a team-mode study over the corpus (``sharing``: the
      owner's admin opened it to them), or from an admin of the owner.
    * Into a corpus with no claimed owner that team-mode studies use: only a lead of
      one of them.
    * Otherwise (nothing claimed, no team-mode study): anyone (local mode).
    """
    claimed, sharing, owners = set(claimed), set(sharing), set(owners)
    needed = {o for o in owners if o is not None and o in claimed}
    if None in owners and corpus_owner in claimed:
        needed.add(corpus_owner)  # type: ignore[arg-type]
    for org in sorted(needed):
        require_org_role(org_id=org, user=user, role=roles.get(org),
                         permission=OrgPermission.WRITE_CORPUS, granters=owners_of.get(org, []),
                         what=f"write documents of corpus {corpus_id!r}",
                         note="an organisation's documents are written by its admins (study "
                              "leads manage studies only)")
    if corpus_owner is not None and corpus_owner in claimed:
        foreign = sorted(o for o in owners if o is not None and o != corpus_owner
                         and o not in sharing)
        if foreign and not org_role_allows(roles.get(corpus_owner), OrgPermission.SHARE_CORPUS):
            raise OrganisationPermissionDenied(
                f"{user or 'nobody named'} may not add documents of organisation(s) "
                f"{', '.join(foreign)} to corpus {corpus_id!r}: it belongs to organisation "
                f"{corpus_owner!r}, and another organisation's documents enter it only once "
                f"that organisation has a team-mode study over it (which an admin of "
                f"{corpus_owner!r} creates), or from an admin of {corpus_owner!r}",
                actor=user, org_id=corpus_owner, org_permission=OrgPermission.SHARE_CORPUS)
        return
    if team_studies and not lead_of_team_study:
        who = user or "nobody named"
        raise PermissionDenied(
            f"{who} may not {Permission.IMPORT.value} into corpus {corpus_id!r}: it has no "
            f"owner organisation and team-mode studies use it ({', '.join(team_studies)}); "
            "only a lead of one of them may"
            + ("; sign in, or pass the acting user (--actor)" if not user else ""),
            actor=user, study_id=team_studies[0], permission=Permission.IMPORT)
