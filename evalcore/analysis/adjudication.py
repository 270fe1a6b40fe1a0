"""What a reviewer needs to settle a conflict: the query, the document, every annotator's say.

:func:`conflict_contexts` gathers per (query, unit) the query text, the document (or why
it is not shown: not in the corpus, or withheld by organisation scoping), each
annotator's current label, each automatic source's label marked as such (never
evidence) and the unit's resolved state (so a conflict settled since can say by whom).
It never picks a gain: the reviewer chooses.
"""

from collections.abc import Iterable

from evalcore.contract.frozen import FrozenModel
from evalcore.store.automatic_labels import automatic_labels
from evalcore.store.labels import current_judgements
from evalcore.store.query_reads import query_texts
from evalcore.store.resolution import ResolvedState, resolve_unit_in_store
from evalcore.store.scoping import readable_document
from evalcore.store.study_handle import Study


class Judgement(FrozenModel):
    """One annotator's current label on the unit."""

    annotator: str
    gain: int
    note: str
    #: When the label was recorded (ISO 8601, UTC).
    created_at: str


class ConflictContext(FrozenModel):
    """One (query, unit) with everything shown next to the reviewer's decision."""

    study_id: str
    query_id: str
    unit_id: str
    query_text: str
    #: The document's title and text; None when not shown (see ``document_note``).
    title: str | None = None
    text: str | None = None
    #: Why the document is not shown (not in the corpus, or withheld), else None.
    document_note: str | None = None
    #: The resolved state; None when nobody has a current label and nothing was adjudicated.
    state: ResolvedState | None
    judgements: list[Judgement]
    #: The adjudication that counts (or that a newer disagreeing label re-opened).
    reviewer: str | None = None
    adjudicated_gain: int | None = None
    reviewer_note: str = ""
    #: source -> its automatic gain of the unit (shown marked as automatic; never evidence).
    automatic: dict[str, int] = {}

    @property
    def in_conflict(self) -> bool:
        return self.state == "conflict"


def conflict_contexts(study: Study, items: Iterable[tuple[str, str]]) -> list[ConflictContext]:
    """A :class:`ConflictContext` for each (query_id, unit_id) of ``items``, in that order."""
    wanted = list(dict.fromkeys(items))
    corpus_id = study.settings.corpus_id
    texts = query_texts(study, [q for q, _ in wanted])
    machine = automatic_labels(study, {q for q, _ in wanted})
    out: list[ConflictContext] = []
    for query_id, unit_id in wanted:
        access = readable_document(study.db, study.actor, corpus_id, unit_id)
        doc = access.document
        judged = current_judgements(study, query_id, unit_id).get(unit_id)
        resolved = resolve_unit_in_store(study, query_id, unit_id)
        adjudication = judged.adjudication if judged is not None else None
        out.append(
            ConflictContext(
                study_id=study.study_id,
                query_id=query_id,
                unit_id=unit_id,
                query_text=texts.get(query_id, ""),
                title=doc.title if doc is not None else None,
                text=doc.text if doc is not None else None,
                document_note=None if doc is not None else access.reason,
                state=resolved.state if resolved is not None else None,
                judgements=[
                    Judgement(annotator=a, gain=e.gain, note=e.note, created_at=e.created_at)
                    for a, e in (judged.labels.items() if judged is not None else ())
                    if e.gain is not None
                ],
                reviewer=adjudication.annotator if adjudication is not None else None,
                adjudicated_gain=adjudication.gain if adjudication is not None else None,
                reviewer_note=adjudication.note if adjudication is not None else "",
                automatic={
                    source: labels[(query_id, unit_id)]
                    for source, labels in sorted(machine.items())
                    if (query_id, unit_id) in labels
                },
            )
        )
    return out
