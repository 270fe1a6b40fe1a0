"""The evaluation protocol: the choices that change a number.

Every output records the protocol it was computed under, so two numbers are
only compared when they were measured the same way.
"""

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

GainMode = Literal["linear", "exponential"]


class EvalProtocol(BaseModel):
    """How labels become metric values.

    ``unjudged_as_nonrelevant`` is a compatibility policy for reproducing
    trec_eval: it turns unlabeled returned units into gain 0. It is never the
    default, and when on it is printed in every output and report.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    relevance_threshold: int = Field(default=1, ge=1, le=4, strict=True)
    gain: GainMode = "linear"
    unjudged_as_nonrelevant: bool = False
