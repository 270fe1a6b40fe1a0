"""Revalidation: does the corpus still match the pin, document for document?

Before every execution the pinned set is compared with the corpus as it is now.
Each kind of change is counted and its first document ids are named:

* ``content_changed``: a pinned document's title or text changed (new content hash);
* ``owner_changed``: a pinned document is now owned by another organisation
  (or by none), whether or not that organisation is in the protocol;
* ``removed``: a pinned document is no longer in the corpus;
* ``no_longer_visible``: a pinned document, same owner, now falls after the cutoff
  (its creation time was rewritten);
* ``added``: a document the protocol would see now was not in the pinned set.

The corpus fingerprint of the visible set is recomputed as well; any difference
from the pinned one is a change even if no document could be named (which would
mean the pinned record itself is inconsistent).

Before any of that, the corpus's generation is compared with the one the pin was
taken at (:mod:`evalcore.store.corpus_generations`): when it is the same, no
document row of the corpus was written and no staged import began, was
published or discarded since the pin, so the comparison above would find
exactly nothing, and it is not made (O(1) instead of a scan of every pinned and
visible document). Any write, even one that changes nothing visible, moves the
generation and the full comparison runs. :func:`recompute_changes` always runs it.
"""

from typing import Any

from pydantic import Field

from evalcore.contract.frozen import FrozenModel
from evalcore.retrieval.fingerprint import corpus_fingerprint
from evalcore.retrieval.pin import PinnedProtocol
from evalcore.store.corpus_generations import current_generation
from evalcore.store.pins import pin_discrepancies, pin_generation, unpinned_visible_ids
from evalcore.store.study_handle import Study

#: How many document ids of each kind a refusal message names.
NAMED_PER_KIND = 10

#: Each kind of change (in report order) and how a refusal message words it.
_TEXT = {
    "content_changed": "content changed",
    "owner_changed": "moved to another organisation",
    "removed": "removed from the corpus",
    "no_longer_visible": "now created after the cutoff",
    "added": "new visible documents not in the pin",
}
CHANGE_KINDS = tuple(_TEXT)


class ChangeKind(FrozenModel):
    """How many pinned documents changed in one way, and the first of them (by id)."""

    count: int = 0
    first_ids: list[str] = Field(default_factory=list)
    #: For ``owner_changed``: first id -> [pinned owner, current owner].
    owners: dict[str, list[str | None]] = Field(default_factory=dict)


class CorpusChanges(FrozenModel):
    """The difference between a pin and the corpus now; empty means "still valid"."""

    protocol: str
    pinned_fingerprint: str
    current_fingerprint: str
    kinds: dict[str, ChangeKind]

    @property
    def unchanged(self) -> bool:
        return self.pinned_fingerprint == self.current_fingerprint and not any(
            kind.count for kind in self.kinds.values()
        )

    def message(self) -> str:
        """A refusal message naming what changed (first ids and counts per kind)."""
        lines = [
            f"refused: the corpus no longer matches pinned protocol {self.protocol!r} "
            f"(pinned fingerprint {self.pinned_fingerprint}, now {self.current_fingerprint})"
        ]
        for name in CHANGE_KINDS:
            kind = self.kinds.get(name)
            if kind is None or kind.count == 0:
                continue
            shown = []
            for doc_id in kind.first_ids:
                if doc_id in kind.owners:
                    before, after = kind.owners[doc_id]
                    shown.append(f"{doc_id} ({before} -> {after or 'no owner'})")
                else:
                    shown.append(doc_id)
            more = kind.count - len(kind.first_ids)
            tail = f" and {more} more" if more > 0 else ""
            lines.append(f"  {_TEXT[name]}: {kind.count}: {', '.join(shown)}{tail}")
        if all(kind.count == 0 for kind in self.kinds.values()):
            lines.append(
                "  no document could be named: the pinned record is inconsistent with its "
                "fingerprint"
            )
        lines.append(
            "nothing was run or stored; to measure the corpus as it is now, pin a new protocol "
            "under another name (`evalcore protocol pin`)"
        )
        return "\n".join(lines)

    def detail(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


def revalidate(study: Study, pinned: PinnedProtocol) -> CorpusChanges:
    """Compare the study's pin with the corpus now (read-only; see the module docstring)."""
    db = study.db
    generation = pin_generation(study, pinned.name)
    if generation is not None and generation == current_generation(
        db, pinned.protocol.corpus_id or ""
    ):
        return CorpusChanges(
            protocol=pinned.name,
            pinned_fingerprint=pinned.corpus_fingerprint,
            current_fingerprint=pinned.corpus_fingerprint,
            kinds={name: ChangeKind() for name in CHANGE_KINDS},
        )
    return recompute_changes(study, pinned)


def recompute_changes(study: Study, pinned: PinnedProtocol) -> CorpusChanges:
    """Compare the study's pin with the corpus document by document, whatever the generation."""
    visibility = pinned.visibility
    collected: dict[str, list[str]] = {name: [] for name in CHANGE_KINDS}
    counts: dict[str, int] = dict.fromkeys(CHANGE_KINDS, 0)
    owners: dict[str, list[str | None]] = {}

    def note(kind: str, doc_id: str) -> None:
        counts[kind] += 1
        if len(collected[kind]) < NAMED_PER_KIND:
            collected[kind].append(doc_id)

    current = corpus_fingerprint(study.db, visibility)
    pinned_side = pin_discrepancies(study, pinned.name, visibility)
    for doc_id, gone, changed, owner_before, owner_now, visible in pinned_side:
        if gone:
            note("removed", doc_id)
            continue
        if owner_before != owner_now:
            note("owner_changed", doc_id)
            if doc_id in collected["owner_changed"]:
                owners[doc_id] = [owner_before, owner_now]
        elif not visible:
            note("no_longer_visible", doc_id)
        if changed:
            note("content_changed", doc_id)

    # The same fingerprint is the same visible (doc_id, content) set: nothing was added
    # (only an owner change, which the hash leaves out, can remain; checked above).
    if current != pinned.corpus_fingerprint:
        for doc_id in unpinned_visible_ids(study, pinned.name, visibility):
            note("added", doc_id)

    kinds = {
        name: ChangeKind(
            count=counts[name],
            first_ids=collected[name],
            owners=owners if name == "owner_changed" else {},
        )
        for name in CHANGE_KINDS
    }
    return CorpusChanges(
        protocol=pinned.name,
        pinned_fingerprint=pinned.corpus_fingerprint,
        current_fingerprint=current,
        kinds=kinds,
    )
