"""What an input source of ``evalcore evaluate`` hands to the metric computer.

Every source (observation JSONL, TREC files, the store) returns an
:class:`EvalInput`; one that has validated observations packs them with :func:`packed`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from evalcore.compute.batch import ObservationBatch
from evalcore.contract.evaluation_protocol import EvalProtocol
from evalcore.contract.observation import Observation
from evalcore.contract.results import Diagnostics


@dataclass(frozen=True, eq=False)
class EvalInput:
    """What a source hands to the metric computer."""

    batch: ObservationBatch
    diagnostics: Diagnostics


def packed(
    observations: Sequence[Observation],
    protocol: EvalProtocol,
    diagnostics: Diagnostics | None = None,
) -> EvalInput:
    """An :class:`EvalInput` from validated observations."""
    return EvalInput(
        ObservationBatch.from_observations(observations, protocol), diagnostics or Diagnostics()
    )
