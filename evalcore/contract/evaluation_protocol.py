"""The evaluation protocol: the choices that change a number.

Every output records the protocol it was computed under, so two numbers are
only compared when they were measured the same way.
"""

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

GainMode = Literal["linear", "exponential"]


class EvalProtocol(BaseModel):
    """How labels become metric values.

    ``unjudged_as_nonrelevant`` is a compatibility policy for reproducing
    trec_eval: it turns unlabeled returned units into gain 0. It is never the
    default, and when on it is printed in every output and report.

    ``populations_declared_complete`` records a completeness assumption made
    by the caller rather than by labels (``evalcore evaluate --complete``:
    every qrels query's labeled units are taken to be all its relevant units).
    It changes no arithmetic here (completeness travels with each
    observation); it is recorded so every printed protocol says what was
    assumed. It is serialised only when on, so outputs without it are unchanged.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    relevance_threshold: int = Field(default=1, ge=1, le=4, strict=True)
    gain: GainMode = "linear"
    unjudged_as_nonrelevant: bool = False
    populations_declared_complete: bool = False

    @model_serializer(mode="wrap")
    def _assumptions_only_when_on(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        out = handler(self)
        if not self.populations_declared_complete:
            out.pop("populations_declared_complete", None)
        return out
