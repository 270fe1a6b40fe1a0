"""Annotator agreement of a stored study: each annotator's current label per unit (the
store's resolution; adjudications are a reviewer's decision, not a judgement, and are left
out) into :func:`evalcore.analysis.stats.annotators.summarize_agreement`.
"""

from collections.abc import Mapping

from evalcore.analysis.stats.annotators import (
    LOW_AGREEMENT_THRESHOLD,
    AgreementSummary,
    AnnotatorLabel,
    summarize_agreement,
)
from evalcore.contract.query_order import natural_key
from evalcore.store.resolution import Overlap, ResolvedLabel, annotator_overlap, resolve_study
from evalcore.store.study_handle import Study


def study_agreement(
    study: Study, *, low_agreement_threshold: float = LOW_AGREEMENT_THRESHOLD
) -> AgreementSummary:
    """Agreement between the study's annotators on the units two or more of them labeled."""
    return agreement_and_conflicts(study, low_agreement_threshold=low_agreement_threshold)[0]


def open_conflicts(study: Study) -> list[tuple[str, ResolvedLabel]]:
    """(query_id, unit) of every unit awaiting adjudication, largest disagreement first."""
    return _conflicts(_overlap_resolved(study)[1])


def agreement_and_conflicts(
    study: Study, *, low_agreement_threshold: float = LOW_AGREEMENT_THRESHOLD
) -> tuple[AgreementSummary, list[tuple[str, ResolvedLabel]]]:
    """:func:`study_agreement` and :func:`open_conflicts` from one read of the overlap and
    one resolution (the agreement page shows both)."""
    overlap, resolved = _overlap_resolved(study)
    # Only queries where annotators overlap hold units that count; every annotator with a
    # current label still has a row (and pairs) in the summary.
    summary = summarize_agreement(
        annotator_labels(resolved),
        low_agreement_threshold=low_agreement_threshold,
        annotators=overlap.annotators,
    )
    return summary, _conflicts(resolved)


def _overlap_resolved(study: Study) -> tuple[Overlap, dict[str, dict[str, ResolvedLabel]]]:
    """Where annotators overlap, and those queries resolved."""
    overlap = annotator_overlap(study)
    return overlap, resolve_study(study, overlap.queries)


def _conflicts(resolved: Mapping[str, Mapping[str, ResolvedLabel]]
               ) -> list[tuple[str, ResolvedLabel]]:
    found = [(q, r) for q, units in resolved.items() for r in units.values()
             if r.state == "conflict"]
    found.sort(key=lambda qr: (-(max(qr[1].annotators.values()) - min(qr[1].annotators.values())),
                               qr[0], qr[1].unit_id))
    return found


def annotator_labels(
    resolved: Mapping[str, Mapping[str, ResolvedLabel]],
) -> list[AnnotatorLabel]:
    """Each annotator's current gain per unit, from the store's resolution.

    ``resolved`` is :func:`evalcore.store.resolution.resolve_study`'s result
    (query_id -> unit_id -> resolved label). Adjudications are not an
    annotator's judgement and are not included.
    """
    return [
        AnnotatorLabel(query_id=query_id, unit_id=unit_id, annotator=annotator, gain=gain)
        for query_id, units in sorted(resolved.items(), key=lambda item: natural_key(item[0]))
        for unit_id, label in sorted(units.items())
        for annotator, gain in sorted(label.annotators.items())
    ]
