"""Pinning a protocol: freeze the visible document set and its fingerprint for a study.

A pin stores the protocol (with ``corpus_id`` and ``corpus_fingerprint`` filled
in) in ``protocols`` and every visible document's id, content hash and owner in
``protocol_documents``, in one transaction. A pin is immutable and its name is
unique within the study; to follow a changed corpus, pin a new protocol under a
new name.
"""

from collections import Counter

import sqlite_utils

from evalcore.access.roles import Permission
from evalcore.contract.frozen import FrozenModel
from evalcore.contract.limits import MAX_NAME_CHARS
from evalcore.io.clock import utc_now_iso
from evalcore.retrieval.errors import ProtocolNotFoundError, RetrievalRefused
from evalcore.retrieval.fingerprint import fingerprint_pairs
from evalcore.retrieval.lexical_protocol import LexicalProtocol
from evalcore.store.audit import record_audit
from evalcore.store.corpus_generations import current_generation
from evalcore.store.lookup import not_found
from evalcore.store.pins import (
    insert_pin,
    pin_exists,
    pin_names,
    pin_owner_counts,
    pin_row,
    visible_documents,
)
from evalcore.store.scoping import require_organisations, unreadable_organisations
from evalcore.store.studies import get_study
from evalcore.store.study_handle import Study, open_study
from evalcore.store.transaction import write_transaction
from evalcore.store.visibility import Visibility


class PinnedProtocol(FrozenModel):
    """A protocol as pinned for a study."""

    study_id: str
    name: str
    protocol: LexicalProtocol
    corpus_fingerprint: str
    document_count: int
    documents_by_organisation: dict[str, int]
    pinned_at: str
    pinned_by: str
    #: Organisations whose document counts are left out of ``document_count`` and
    #: ``documents_by_organisation`` because the viewer may not read their documents
    #: (:func:`get_pinned_protocol`); empty for the workflow's own reads.
    withheld_organisations: list[str] = []

    @property
    def visibility(self) -> Visibility:
        assert self.protocol.corpus_id is not None
        return Visibility.of(
            self.protocol.corpus_id, self.protocol.organisations, self.protocol.cutoff
        )


def pin_protocol(
    db: sqlite_utils.Database,
    *,
    study_id: str,
    name: str,
    protocol: LexicalProtocol,
    actor: str,
) -> PinnedProtocol:
    """Pin ``protocol`` for the study under ``name`` and return the pin.

    Raises ``ValueError`` when the name is taken, the protocol names another
    corpus or an unknown reference version, or no document is visible;
    :class:`RetrievalRefused` when the protocol carries a corpus fingerprint
    that no longer matches the corpus. Nothing is stored on any error.
    """
    if not isinstance(name, str) or not 1 <= len(name) <= MAX_NAME_CHARS:
        raise ValueError(
            f"protocol name {name!r} is invalid: give a non-empty name of at most "
            f"{MAX_NAME_CHARS} characters"
        )
    study = get_study(db, study_id)
    if protocol.corpus_id is not None and protocol.corpus_id != study.corpus_id:
        raise ValueError(
            f"the protocol is for corpus {protocol.corpus_id!r} but study {study_id!r} uses "
            f"corpus {study.corpus_id!r}; remove corpus_id from the protocol or pick the study "
            "of that corpus"
        )
    visibility = Visibility.of(study.corpus_id, protocol.organisations, protocol.cutoff)
    with write_transaction(db):
        handle = open_study(db, study_id, actor, Permission.PIN_PROTOCOL)
        require_organisations(db, actor=actor, study_id=study_id, corpus_id=study.corpus_id,
                              organisations=protocol.organisations)
        if pin_exists(handle, name):
            raise ValueError(
                f"a protocol named {name!r} is already pinned in study {study_id!r}; pins are "
                "immutable, choose another name"
            )
        _check_reference_version(handle, protocol.reference_version)
        rows = list(visible_documents(db, visibility))
        if not rows:
            raise ValueError(
                f"the protocol sees no document of corpus {study.corpus_id!r}: none is owned by "
                f"{', '.join(protocol.organisations)} and created at or before "
                f"{protocol.to_json_dict()['cutoff']}; check organisations and cutoff"
            )
        fingerprint = fingerprint_pairs((r[0], r[1]) for r in rows)
        if protocol.corpus_fingerprint is not None and protocol.corpus_fingerprint != fingerprint:
            raise RetrievalRefused(
                f"the protocol expects corpus fingerprint {protocol.corpus_fingerprint} but the "
                f"{len(rows)} documents it sees now have {fingerprint}: the corpus changed since "
                "that fingerprint was taken; remove corpus_fingerprint to pin the corpus as it is",
                {"expected": protocol.corpus_fingerprint, "actual": fingerprint},
            )
        pinned = protocol.model_copy(
            update={"corpus_id": study.corpus_id, "corpus_fingerprint": fingerprint}
        )
        by_org = dict(sorted(Counter(r[2] for r in rows).items()))
        now = utc_now_iso()
        insert_pin(db, study_id=study_id, name=name, protocol_json=pinned.model_dump_json(),
                   fingerprint=fingerprint, pinned_at=now, pinned_by=actor, documents=rows,
                   corpus_generation=current_generation(db, study.corpus_id))
        record_audit(
            db,
            actor=actor,
            action="lexical.pin",
            study_id=study_id,
            detail={
                "protocol": name,
                "corpus_fingerprint": fingerprint,
                "document_count": len(rows),
                "documents_by_organisation": by_org,
            },
        )
    return PinnedProtocol(
        study_id=study_id,
        name=name,
        protocol=pinned,
        corpus_fingerprint=fingerprint,
        document_count=len(rows),
        documents_by_organisation=by_org,
        pinned_at=now,
        pinned_by=actor,
    )


def _check_reference_version(study: Study, version: str | None) -> None:
    if version is None:
        return
    # Imported here: only a pin that names a reference needs the reference store (and its
    # resolution and completeness modules), which re-executing a pin never does.
    from evalcore.store.references import ReferenceNotFoundError, get_reference

    try:
        get_reference(study, version)
    except ReferenceNotFoundError as exc:
        raise ValueError(
            f"reference_version: {exc}; freeze it first or remove reference_version"
        ) from None


def get_pinned_protocol(study: Study, name: str) -> PinnedProtocol:
    """The pin named ``name``; :class:`ProtocolNotFoundError` lists the pins that exist.

    Counts of documents of organisations the handle's actor may not read are left out (named
    in ``withheld_organisations``): a count is a fact about documents they may not read."""
    return _as_seen_by(study, pinned_protocol(study, name))


def _as_seen_by(study: Study, pinned: PinnedProtocol) -> PinnedProtocol:
    assert pinned.protocol.corpus_id is not None
    withheld = unreadable_organisations(
        study.db, study.actor, pinned.protocol.corpus_id, pinned.protocol.organisations
    )
    if not withheld:
        return pinned
    shown = {o: n for o, n in pinned.documents_by_organisation.items() if o not in withheld}
    return pinned.model_copy(update={"documents_by_organisation": shown,
                                     "document_count": sum(shown.values()),
                                     "withheld_organisations": withheld})


def pinned_protocol(study: Study, name: str) -> PinnedProtocol:
    """The pin named ``name`` with the counts of every organisation, for the workflow that
    re-executes it."""
    row = pin_row(study, name)
    if row is None:
        raise not_found(
            ProtocolNotFoundError,
            f"no protocol {name!r} is pinned in study {study.study_id!r}",
            pin_names(study),
            listing="pinned protocols",
            none_yet="none is pinned yet",
            advice="; pin one with `evalcore protocol pin`",
        )
    by_org = pin_owner_counts(study, name)
    return PinnedProtocol(
        study_id=study.study_id,
        name=name,
        protocol=LexicalProtocol.model_validate_json(row[0]),
        corpus_fingerprint=row[1],
        document_count=sum(by_org.values()),
        documents_by_organisation=by_org,
        pinned_at=row[2],
        pinned_by=row[3],
    )


def list_pinned_protocols(study: Study) -> list[PinnedProtocol]:
    """Every pin of the study, oldest first."""
    return [_as_seen_by(study, pinned_protocol(study, n)) for n in pin_names(study)]

