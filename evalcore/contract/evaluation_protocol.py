"""The evaluation protocol: the choices that change a number.

Every output records the protocol it was computed under, so two numbers are
only compared when they were measured the same way.
"""

from dataclasses import asdict
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

from evalcore.contract.gains import MAX_GAIN
from evalcore.contract.protocol_choices import (
    PRINTED_WHEN_ON,
    GainMode,
    ProtocolChoices,
    unjudged_are_nonrelevant,
)

__all__ = ["EvalProtocol", "GainMode"]


class EvalProtocol(BaseModel):
    """How labels become metric values.

    ``unjudged_as_nonrelevant`` is a compatibility policy for reproducing
    trec_eval: it turns unlabeled returned units into gain 0. It is never the
    default, and when on it is printed in every output and report.

    ``trec_eval`` is the whole compatibility mode in one switch: unjudged units
    are non-relevant, every population is complete, and a query with no
    relevant unit is valued as trec_eval values it (0 for recall, nDCG and AP,
    where the default reports ``no_relevant_units``). It is serialised only
    when on, so outputs without it are unchanged.

    ``populations_declared_complete`` records a completeness assumption made
    by the caller rather than by labels (``evalcore evaluate --complete``:
    every qrels query's labeled units are taken to be all its relevant units).
    It changes no arithmetic here (completeness travels with each
    observation); it is recorded so every printed protocol says what was
    assumed. It is serialised only when on, so outputs without it are unchanged.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    relevance_threshold: int = Field(default=1, ge=1, le=MAX_GAIN, strict=True)
    gain: GainMode = "linear"
    unjudged_as_nonrelevant: bool = False
    trec_eval: bool = False
    populations_declared_complete: bool = False

    @classmethod
    def of(cls, choices: ProtocolChoices) -> "EvalProtocol":
        """The model of the plain protocol ``choices`` (validated)."""
        return cls(**asdict(choices))

    @property
    def unjudged_are_nonrelevant(self) -> bool:
        """Whether unlabeled returned units count as gain 0 (either compatibility switch)."""
        return unjudged_are_nonrelevant(self.unjudged_as_nonrelevant, self.trec_eval)

    @model_serializer(mode="wrap")
    def _switches_only_when_on(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        out = handler(self)
        for switch in PRINTED_WHEN_ON:
            if not getattr(self, switch):
                out.pop(switch, None)
        return out
