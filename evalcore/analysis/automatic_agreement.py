"""How each automatic source agrees with the humans: how much a lead may trust it (contract
section 13: automatic labels are helpers, never evidence).

On the units a source judged that have a human gain that counts (a unit in conflict has
none), :func:`source_agreement` gives the quadratic-weighted kappa, the 5 x 5 confusion
matrix (rows human, columns automatic), per-grade counts and the share of exact agreement.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from evalcore.analysis.stats.agreement import (
    GAIN_CATEGORIES,
    AgreementResult,
    cohen_kappa_quadratic,
)
from evalcore.contract.frozen import FrozenModel
from evalcore.store.automatic_labels import automatic_labels
from evalcore.store.resolution import resolve_study
from evalcore.store.study_handle import Study

#: (query id, unit id).
UnitKey = tuple[str, str]


class SourceAgreement(FrozenModel):
    """One automatic source against the human gains that count."""

    source: str
    #: Units the source judged.
    n_labels: int
    #: Units the source judged that have a human gain that counts.
    n_units: int
    kappa: AgreementResult
    #: confusion[h][a]: shared units humans gave GAIN_CATEGORIES[h] and the source [a].
    confusion: list[list[int]]
    #: Per grade (GAIN_CATEGORIES), on the shared units: the human gains, the source's.
    human_counts: list[int]
    automatic_counts: list[int]
    #: Per grade, over every unit the source judged.
    automatic_all_counts: list[int]
    #: The share of shared units with the same gain (None without shared units).
    exact_agreement: float | None


def source_agreement(
    source: str, human: Mapping[UnitKey, int], automatic: Mapping[UnitKey, int]
) -> SourceAgreement:
    """The agreement of one source's gains ``automatic`` with the ``human`` gains."""
    k = len(GAIN_CATEGORIES)
    shared = [key for key in automatic if key in human]
    h = np.array([human[key] for key in shared], dtype=np.int64)
    a = np.array([automatic[key] for key in shared], dtype=np.int64)
    confusion = np.zeros((k, k), dtype=np.int64)
    np.add.at(confusion, (h, a), 1)
    every = np.bincount(np.array(list(automatic.values()), dtype=np.int64), minlength=k)
    return SourceAgreement(
        source=source,
        n_labels=len(automatic),
        n_units=len(shared),
        kappa=cohen_kappa_quadratic(h.tolist(), a.tolist()),
        confusion=confusion.tolist(),
        human_counts=confusion.sum(axis=1).tolist(),
        automatic_counts=confusion.sum(axis=0).tolist(),
        automatic_all_counts=every[:k].tolist(),
        exact_agreement=float((h == a).mean()) if shared else None,
    )


def human_gains(study: Study) -> dict[UnitKey, int]:
    """(query id, unit id) -> the human gain that counts in the working reference."""
    return {
        (q, u): label.gain
        for q, units in resolve_study(study).items()
        for u, label in units.items()
        if label.gain is not None
    }


def automatic_agreement(study: Study) -> list[SourceAgreement]:
    """Each automatic source's agreement with the humans, by source name."""
    sources = automatic_labels(study)
    if not sources:
        return []
    human = human_gains(study)
    return [source_agreement(name, human, labels) for name, labels in sorted(sources.items())]
