"""The observation: one query's ranked result list and its reference labels.

This is section 2 of the evidence contract. Schema errors are raised by
pydantic at the edge (readers turn them into line-numbered messages); the
metric computer trusts a validated :class:`Observation`.
"""

from datetime import datetime
from typing import Annotated

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    FiniteFloat,
    StrictBool,
    StrictInt,
    StrictStr,
    ValidationInfo,
    field_validator,
)

#: A graded relevance label: 0 = explicitly non-relevant, 1..4 = graded relevance.
Gain = Annotated[StrictInt, Field(ge=0, le=4)]
UnitId = Annotated[StrictStr, Field(min_length=1)]


class Label(BaseModel):
    """A unit's label for the query. Labels are a list so duplicates stay visible."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: UnitId
    gain: Gain


#: The largest cutoff depth: an SQLite INTEGER (2^63 - 1); larger values are refused as input.
MAX_K = 2**63 - 1


class Observation(BaseModel):
    """One query of one run, with everything needed to decide what is measurable."""

    model_config = ConfigDict(extra="forbid")

    query_id: UnitId
    corpus_id: StrictStr | None = None
    corpus_fingerprint: StrictStr | None = None
    cutoff: datetime | None = None
    retrieval_unit: StrictStr = "document"
    k: Annotated[StrictInt, Field(ge=1, le=MAX_K)]
    returned_ids: list[UnitId]
    scores: list[FiniteFloat] | None = None
    labels: list[Label]
    population_complete: StrictBool
    scan_complete: StrictBool = True
    permitted_ids: list[UnitId] | None = None
    unit_of: dict[str, UnitId] | None = None
    reference_version: StrictStr | None = None

    @field_validator("scores")
    @classmethod
    def _scores_match_returned(
        cls, scores: list[float] | None, info: ValidationInfo
    ) -> list[float] | None:
        returned = info.data.get("returned_ids")
        if scores is not None and returned is not None and len(scores) != len(returned):
            raise ValueError(
                f"scores has {len(scores)} values but returned_ids has {len(returned)}; "
                "give one score per returned id or omit scores"
            )
        return scores
