"""Validity of an observation (contract section 3) and returned duplicates (section 4).

Section 3 reasons make **every** metric of the query unavailable:

* ``partial_scan``: ``scan_complete`` is false;
* ``permission_violation``: ``permitted_ids`` is given and a returned position
  in 1..k is not permitted. A position is permitted when its returned ID *or*
  the unit it maps to through ``unit_of`` is in ``permitted_ids`` (so the
  permitted set may be written in either ID space). Positions after k are
  never checked: they are not measured.
* ``duplicate_reference``: a unit ID appears twice in ``labels`` (even with
  equal gains);
* ``missing_reference``: ``labels`` is empty, the population is not
  declared complete and something was returned. A query on which nothing was
  returned has nothing to label (contract section 12): it is valid, its P, RR,
  Success, RBP and Judged are 0, and its R, nDCG and AP are unavailable
  (``population_incomplete``, ``no_relevant_units``), with bounds where some
  outside unit may be relevant.

Section 4: positions 1..k are mapped through ``unit_of`` first; a unit seen at
an earlier position is a *returned duplicate*. It keeps its position (ranks
are not shifted), adds no gain, is not counted again, and is reported as a
:class:`~evalcore.contract.results.ReturnedDuplicate` diagnostic, never as an error.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING

import numpy as np

from evalcore.contract.reasons import OBSERVATION_REASONS, Reason

if TYPE_CHECKING:  # typing only: evalcore.compute.batch imports this module
    from evalcore.compute.batch import ObservationBatch
    from evalcore.contract.results import ReturnedDuplicate

#: Bit of each observation-level reason in :func:`observation_bits`.
OBSERVATION_BITS: dict[Reason, int] = {r: 1 << i for i, r in enumerate(OBSERVATION_REASONS)}


def permission_violated(
    raw_top: Sequence[str], top: Sequence[str], permitted: Iterable[str]
) -> bool:
    """True when a measured position's returned ID and its unit are both not permitted."""
    allowed = permitted if isinstance(permitted, set | frozenset) else set(permitted)
    return any(r not in allowed and u not in allowed for r, u in zip(raw_top, top, strict=True))


def duplicate_positions(top: Sequence[str]) -> Iterator[tuple[int, int]]:
    """Yield ``(position, first_position)`` (1-based) for every returned duplicate in ``top``."""
    first: dict[str, int] = {}
    for position, unit in enumerate(top, start=1):
        seen = first.setdefault(unit, position)
        if seen != position:
            yield position, seen


def observation_bits(batch: ObservationBatch) -> np.ndarray:
    """Per-query bitmask (:data:`OBSERVATION_BITS`) of the section-3 reasons."""
    flags = {
        Reason.PARTIAL_SCAN: ~batch.scan_complete,
        Reason.PERMISSION_VIOLATION: batch.permission_violation,
        Reason.DUPLICATE_REFERENCE: batch.duplicate_reference,
        Reason.MISSING_REFERENCE: batch.missing_reference & (batch.n_positions > 0),
    }
    bits = np.zeros(len(batch), dtype=np.uint8)
    for reason, mask in flags.items():
        bits[mask] |= np.uint8(OBSERVATION_BITS[reason])
    return bits


def observation_reasons(bits: int) -> list[str]:
    """The reason codes of one query's observation bitmask, in contract order."""
    return [r.value for r in OBSERVATION_REASONS if bits & OBSERVATION_BITS[r]]


def returned_duplicates(batch: ObservationBatch, query: int) -> list[ReturnedDuplicate]:
    """The returned duplicates of one query of a batch, in position order."""
    lo, hi = int(batch.pos_offsets[query]), int(batch.pos_offsets[query + 1])
    at = np.flatnonzero(batch.pos_dup[lo:hi])
    if at.size == 0:
        return []
    from evalcore.contract.results import ReturnedDuplicate  # the model: only when one is made

    units = batch.top_units[query]
    return [
        ReturnedDuplicate.model_construct(
            id=units[j], position=int(j) + 1, first_position=int(batch.dup_first[lo + j])
        )
        for j in at
    ]
