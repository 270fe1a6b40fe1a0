"""The one gate every write passes: :func:`authorize`, and the other write checks.

The store reads the facts (:mod:`evalcore.store.membership`), the rules of
:mod:`evalcore.access.decisions` decide. :func:`authorize` runs inside the
``write_transaction`` of the write it guards: membership cannot change between check and
write, and a refusal rolls back to nothing. An unknown study id is reported here for every
action (:func:`require_known_study`), listing only the studies the actor may read."""

from collections.abc import Iterable

import sqlite_utils

from evalcore.access.decisions import (
    PermissionDenied,
    decide_study_action,
    named_user,
    require_actor,
    viewer_id,
)
from evalcore.access.organisations import (
    decide_corpus_write,
    organisation_entry_denied,
    study_over_corpus_denied,
)
from evalcore.access.roles import Permission, RoleName
from evalcore.store.corpora import corpus_owner
from evalcore.store.lookup import not_found
from evalcore.store.membership import (
    corpus_sharing_organisations,
    corpus_team_studies,
    document_owner_orgs,
    in_organisation,
    member_role,
    organisation_admins,
    organisation_claimed,
    organisation_owners,
    organisation_role,
    organisation_team_studies,
    study_access,
)
from evalcore.store.studies import StudyIn, StudyNotFoundError, get_study, study_exists, study_ids


def authorize(
    db: sqlite_utils.Database,
    *,
    study_id: str,
    actor: str | None,
    permission: Permission,
    study: StudyIn | None = None,
) -> RoleName | None:
    """Allow ``actor`` to do ``permission`` in the study, or raise :class:`PermissionDenied`;
    return the actor's role (None in local single-user mode: everything allowed). An unknown
    study is a ``StudyNotFoundError`` listing only the studies ``actor`` may read. Call it
    inside the write transaction it guards; ``study``: its settings when already read."""
    if study is None:
        study = known_study(db, actor, study_id)
    facts = study_access(db, study_id, viewer_id(actor), study.org_id)
    if not facts.team:
        return None
    user = require_actor(actor, study_id=study_id, permission=permission)
    return decide_study_action(
        study_id=study_id,
        org_id=study.org_id,
        user=user,
        role=facts.role,
        leads=facts.leads,
        in_study_org=study.org_id is None or facts.in_org,
        permission=permission,
    )


def known_study(db: sqlite_utils.Database, actor: str | None, study_id: str) -> StudyIn:
    """The study's settings; for an unknown id the ``StudyNotFoundError`` of
    :func:`require_known_study` (listing only the studies ``actor`` may see). One statement
    for a known study."""
    try:
        return get_study(db, study_id)
    except StudyNotFoundError:
        require_known_study(db, actor, study_id)
        raise


def require_known_study(db: sqlite_utils.Database, viewer: str | None, study_id: str) -> None:
    """Raise StudyNotFoundError, listing only the studies ``viewer`` may see, for an unknown id."""
    if not study_exists(db, study_id):
        raise not_found(StudyNotFoundError, f"no study {study_id!r} in this store",
                        [s for s in study_ids(db)
                         if allowed(db, study_id=s, actor=viewer, permission=Permission.READ)],
                        listing="known studies", none_yet="you may see no study in this store")


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


def authorize_corpus_write(
    db: sqlite_utils.Database,
    *,
    corpus_id: str,
    actor: str | None,
    owner_orgs: Iterable[str | None],
    doc_ids: Iterable[str] = (),
) -> None:
    """Allow ``actor`` to add or change documents of the corpus, or raise PermissionDenied
    (:func:`evalcore.access.organisations.decide_corpus_write`): the admins of the documents'
    organisations (of ``owner_orgs``, of the documents among ``doc_ids`` an upsert would
    change, the corpus's owner for unowned ones) write them, never a study lead as such;
    another organisation's documents enter a claimed corpus only once it is shared. Anyone may
    while nothing concerned is claimed and no study over the corpus is in team mode."""
    ids = list(doc_ids)
    owners = set(owner_orgs) | (document_owner_orgs(db, corpus_id, ids) if ids else set())
    owner = corpus_owner(db, corpus_id)
    concerned = sorted({o for o in owners if o is not None} | ({owner} if owner else set()))
    claimed = {o for o in concerned if organisation_claimed(db, o)}
    team = corpus_team_studies(db, corpus_id)
    if not claimed and not team:
        return
    user = named_user(actor)
    decide_corpus_write(
        corpus_id=corpus_id,
        user=user,
        corpus_owner=owner,
        claimed=claimed,
        roles={o: organisation_role(db, user, o) for o in concerned},
        owners=owners,
        sharing=corpus_sharing_organisations(db, corpus_id),
        team_studies=team,
        lead_of_team_study=_leads_one_of(db, user, team),
        owners_of={o: organisation_owners(db, o) for o in claimed},
    )


def authorize_organisation_entry(
    db: sqlite_utils.Database, *, org_id: str | None, study_id: str, actor: str | None, what: str
) -> None:
    """Allow ``actor`` to ``what`` (create study ``study_id``, or make its first lead) inside
    organisation ``org_id``, or raise PermissionDenied. Anyone may while the organisation has
    no team-mode study; then only its members (else anyone could claim a study of it and, as
    its lead, read its documents)."""
    if org_id is None:
        return
    team = organisation_team_studies(db, org_id)
    if not team:
        return
    user = named_user(actor)
    if user and in_organisation(db, user, org_id):
        return
    raise organisation_entry_denied(org_id=org_id, study_id=study_id, user=user, what=what,
                                    team_studies=team, admins=organisation_admins(db, org_id))


def authorize_study_over_corpus(
    db: sqlite_utils.Database,
    *,
    corpus_id: str,
    study_id: str,
    study_org: str | None,
    actor: str | None,
    what: str,
) -> None:
    """Allow ``actor`` to ``what`` (create ``study_id`` over the corpus), or raise
    PermissionDenied: see :func:`evalcore.access.organisations.study_over_corpus_denied`."""
    owner = corpus_owner(db, corpus_id)
    user = named_user(actor)
    team = corpus_team_studies(db, corpus_id)
    refusal = study_over_corpus_denied(
        corpus_id=corpus_id,
        study_id=study_id,
        study_org=study_org,
        corpus_owner=owner,
        owner_claimed=owner is not None and organisation_claimed(db, owner),
        user=user,
        owner_role=organisation_role(db, user, owner) if owner is not None else None,
        owner_admins=organisation_admins(db, owner) if owner is not None else [],
        corpus_team_studies=team,
        lead_of_corpus_study=_leads_one_of(db, user, team),
        what=what,
    )
    if refusal is not None:
        raise refusal


def _leads_one_of(db: sqlite_utils.Database, user: str, study_ids: list[str]) -> bool:
    return bool(user) and any(member_role(db, s, user) == "lead" for s in study_ids)
