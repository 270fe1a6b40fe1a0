"""Organisation scoping: what a viewer may read (every refusal with a reason to act on).

* **Studies** (and their queries): a local-mode study is visible to everyone; a team-mode
  study only to its members who also belong to its organisation (when it has one).
* **Documents**: a corpus is in team mode as soon as one study over it is; then a document
  is readable only by members of its owner organisation, an unowned one by the members of
  a team-mode study over the corpus. In a local-mode corpus every document is readable.
* **Returned documents outside a run's protocol** (its pinned document set) are a
  ``permission_violation`` for the metric computer, and their text is shown to no one:
  pages call :func:`displayable_text` before they render a unit's title or text."""

import json
from collections.abc import Iterable

import sqlite_utils

from evalcore.access.decisions import (
    document_refusal_rule,
    protocol_organisations_denied,
    study_view_denied,
    study_view_refusal,
    viewer_id,
)
from evalcore.access.roles import Permission
from evalcore.contract.frozen import FrozenModel
from evalcore.store.authorize import known_study
from evalcore.store.corpus import Document, get_document
from evalcore.store.membership import (
    corpus_team_studies,
    member_of_corpus_study,
    study_access,
    user_organisations,
)
from evalcore.store.runs import get_run, permitted_ids_for_run
from evalcore.store.studies import StudyIn, list_studies, list_studies_and_modes
from evalcore.store.study_handle import Study


class DocumentAccess(FrozenModel):
    """A document the viewer may read, or None and why not."""

    document: Document | None
    reason: str = ""

    @property
    def allowed(self) -> bool:
        return self.document is not None


class DisplayableText(FrozenModel):
    """What a page may show of a unit: its title and text, or nothing and why."""

    unit_id: str
    shown: bool
    title: str = ""
    text: str = ""
    reason: str = ""
    #: True when the unit is outside the run's pinned protocol (a permission_violation).
    permission_violation: bool = False


def _study_refusal(db: sqlite_utils.Database, viewer: str | None, study: StudyIn) -> str | None:
    facts = study_access(db, study.study_id, viewer_id(viewer), study.org_id)
    user = viewer_id(viewer) if facts.team else None
    return study_view_refusal(
        study_id=study.study_id,
        org_id=study.org_id,
        mode="team" if facts.team else "local",
        user=user,
        is_member=user is not None and facts.role is not None,
        in_study_org=user is not None and (study.org_id is None or facts.in_org),
    )


def visible_studies(
    db: sqlite_utils.Database, viewer: str | None, *, include_local: bool = True
) -> list[StudyIn]:
    """The studies ``viewer`` may see, by study id (``include_local=False``: team-mode ones
    only, what a signed-in team deployment shows)."""
    listed = (list_studies(db) if include_local
              else [s for s, team in list_studies_and_modes(db) if team])
    return [study for study in listed if _study_refusal(db, viewer, study) is None]


def local_studies_and_team_count(db: sqlite_utils.Database) -> tuple[list[StudyIn], int]:
    """The studies in local single-user mode (no member), by study id, and how many studies
    are in team mode (a sidebar without sign-in lists the first and counts the second):
    one statement."""
    listed = list_studies_and_modes(db)
    return [s for s, team in listed if not team], sum(team for _, team in listed)


def require_study_view(db: sqlite_utils.Database, viewer: str | None, study_id: str) -> None:
    """Raise PermissionDenied (saying why) unless ``viewer`` may see the study; an unknown study
    is a :class:`StudyNotFoundError` listing only the studies ``viewer`` may see."""
    refusal = _study_refusal(db, viewer, known_study(db, viewer, study_id))
    if refusal is not None:
        raise study_view_denied(refusal, study_id=study_id, user=viewer_id(viewer) or "")


def unreadable_organisations(
    db: sqlite_utils.Database, viewer: str | None, corpus_id: str, organisations: Iterable[str]
) -> list[str]:
    """Those of ``organisations`` whose documents of ``corpus_id`` ``viewer`` may not read,
    sorted (:func:`document_refusal`'s rule for owned documents: none in a local-mode corpus)."""
    orgs = sorted(set(organisations))
    if not orgs or not corpus_team_studies(db, corpus_id):
        return []
    user = viewer_id(viewer)
    if user is None:
        return orgs
    mine = user_organisations(db, user)
    return [o for o in orgs if o not in mine]


def require_organisations(
    db: sqlite_utils.Database,
    *,
    actor: str | None,
    study_id: str,
    corpus_id: str,
    organisations: Iterable[str],
    permission: Permission = Permission.PIN_PROTOCOL,
    protocol: str | None = None,
) -> None:
    """Raise PermissionDenied unless ``actor`` may read every document of ``organisations`` in
    ``corpus_id`` a protocol would see: checked for whoever pins (``PIN_PROTOCOL``) or executes
    a pin (``CREATE_RUN``), each time. A ranking over unreadable documents is a search oracle."""
    missing = unreadable_organisations(db, actor, corpus_id, organisations)
    if missing:
        raise protocol_organisations_denied(
            user=viewer_id(actor) or "", study_id=study_id, missing=missing,
            permission=permission, protocol=protocol)


def document_refusal(
    db: sqlite_utils.Database, viewer: str | None, corpus_id: str, owner_org: str | None
) -> str | None:
    """Why ``viewer`` may not read a document of ``owner_org`` in the corpus (None: they may)."""
    return document_refusals(db, viewer, corpus_id, [owner_org])[owner_org]


def document_refusals(
    db: sqlite_utils.Database, viewer: str | None, corpus_id: str,
    owner_orgs: Iterable[str | None],
) -> dict[str | None, str | None]:
    """:func:`document_refusal` for each of ``owner_orgs`` (the owners of the documents a page
    shows): the corpus's mode, the viewer's organisations and their membership of a study
    over the corpus are each read once, whatever the number of documents."""
    owners = set(owner_orgs)
    if not owners:
        return {}
    team = bool(corpus_team_studies(db, corpus_id))
    user = viewer_id(viewer) if team else None
    mine = (user_organisations(db, user) if user is not None and owners - {None}
            else set())
    unowned_member = (user is not None and None in owners
                      and member_of_corpus_study(db, corpus_id, user))
    return {
        owner: document_refusal_rule(
            corpus_id=corpus_id,
            corpus_team_mode=team,
            user=user,
            owner_org=owner,
            in_owner_org=user is not None and owner is not None and owner in mine,
            member_of_corpus_study=user is not None and owner is None and unowned_member,
        )
        for owner in owners
    }


class ReadableFilter(FrozenModel):
    """:func:`document_refusal` as SQL: ``where`` over the ``documents`` row aliased ``d``."""

    where: str
    params: dict[str, str | int]

    def on(self, owner_column: str) -> str:
        """The same condition over another owner column (``pd.owner_org``: a pin's row)."""
        return self.where.replace("d.owner_org", owner_column)


def readable_filter(
    db: sqlite_utils.Database, viewer: str | None, corpus_id: str
) -> ReadableFilter:
    """:func:`document_refusal`'s rule for ``viewer`` over ``corpus_id`` as a SQL condition, for
    queries that filter before a ``LIMIT`` (search)."""
    if not corpus_team_studies(db, corpus_id):
        return ReadableFilter(where="1", params={})
    user = viewer_id(viewer)
    if user is None:
        return ReadableFilter(where="0", params={})
    unowned = member_of_corpus_study(db, corpus_id, user)
    orgs = json.dumps(sorted(user_organisations(db, user)))
    return ReadableFilter(where="(d.owner_org IN (SELECT value FROM json_each(:reader_orgs)) "
                                "OR (d.owner_org IS NULL AND :reader_unowned))",
                          params={"reader_orgs": orgs, "reader_unowned": int(unowned)})


def readable_document(
    db: sqlite_utils.Database, viewer: str | None, corpus_id: str, doc_id: str,
    *, document: Document | None = None,
) -> DocumentAccess:
    """The document if ``viewer`` may read it; else ``document=None`` and the reason.
    ``document``: the document as the caller read it (:func:`get_document`), else read."""
    doc = document if document is not None else get_document(db, corpus_id, doc_id)
    if doc is None:
        return DocumentAccess(document=None, reason=f"no document {doc_id!r} in corpus {corpus_id!r}")
    refusal = document_refusal(db, viewer, corpus_id, doc.owner_org)
    if refusal is not None:
        return DocumentAccess(document=None, reason=f"text withheld: {refusal}")
    return DocumentAccess(document=doc)


def run_permitted_ids(study: Study, run_name: str) -> set[str] | None:
    """The run's pinned document set (None: the run has no pinned protocol)."""
    ids = permitted_ids_for_run(study.db, get_run(study, run_name))
    return None if ids is None else set(ids)


def displayable_text(
    study: Study,
    *,
    unit_id: str,
    run_name: str | None = None,
    permitted: Iterable[str] | None = None,
    runs: Iterable[str] = (),
    document: Document | None = None,
) -> DisplayableText:
    """Title and text of a unit of the handle's study if a page may show them to its reader
    (the handle checked the study). Withheld (``shown=False``, with the reason) when the reader
    may not read the document, or when the unit is outside the pinned protocol of ``run_name``
    or any of ``runs``, or outside ``permitted``: a ``permission_violation``, shown to no one.
    ``document``: the unit's document as the caller read it, else read."""
    allowed = set(permitted) if permitted is not None else None
    if allowed is None and run_name is not None:
        allowed = run_permitted_ids(study, run_name)
    outside = allowed is not None and unit_id not in allowed
    for name in runs:  # every run that returned the unit (e.g. a pool)
        pinned = run_permitted_ids(study, name)
        outside = outside or (pinned is not None and unit_id not in pinned)
    if outside:
        reason = (f"text withheld: {unit_id!r} is outside the documents the run's protocol may "
                  "see (a permission_violation)")
        return DisplayableText(unit_id=unit_id, shown=False, reason=reason,
                               permission_violation=True)
    given = document if document is not None and document.doc_id == unit_id else None
    access = readable_document(study.db, study.actor, study.settings.corpus_id, unit_id,
                               document=given)
    if (doc := access.document) is None:
        return DisplayableText(unit_id=unit_id, shown=False, reason=access.reason)
    return DisplayableText(unit_id=unit_id, shown=True, title=doc.title, text=doc.text)
