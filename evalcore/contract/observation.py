"""The observation: one query's ranked result list and its reference labels.

This is section 2 of the evidence contract. Schema errors are raised by
pydantic at the edge (readers turn them into line-numbered messages); the
metric computer trusts a validated :class:`Observation`.
"""

from datetime import datetime
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    FiniteFloat,
    ModelWrapValidatorHandler,
    StrictBool,
    StrictInt,
    StrictStr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_serializer,
    model_validator,
)
from pydantic_core import InitErrorDetails

from evalcore.contract.gains import MAX_GAIN
from evalcore.contract.limits import MAX_K

#: A graded relevance label: 0 = explicitly non-relevant, 1..MAX_GAIN = graded relevance.
Gain = Annotated[StrictInt, Field(ge=0, le=MAX_GAIN)]
UnitId = Annotated[StrictStr, Field(min_length=1)]


class Label(BaseModel):
    """A unit's label for the query. Labels are a list so duplicates stay visible.

    Exactly one of ``gain`` (the resolved gain) and ``conflict`` (section 9: the
    annotators disagree; the gain is unknown but one of these, at least two
    distinct values, kept sorted and distinct) is given.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: UnitId
    gain: Gain | None = None
    conflict: tuple[Gain, ...] | None = None

    @field_validator("conflict")
    @classmethod
    def _distinct_gains(cls, gains: tuple[int, ...] | None) -> tuple[int, ...] | None:
        if gains is None:
            return None
        distinct = tuple(sorted(set(gains)))
        if len(distinct) < 2:
            raise ValueError(
                f"a conflict lists at least two distinct gains 0..{MAX_GAIN}, got {list(gains)}; "
                'write an agreed label as {"id": ..., "gain": g}'
            )
        return distinct

    @model_validator(mode="wrap")
    @classmethod
    def _gain_or_conflict(cls, data: Any, handler: ModelWrapValidatorHandler["Label"]) -> "Label":
        """Exactly one of ``gain`` and ``conflict``; a label with neither reports ``gain`` as
        missing (beside any other error of the label), one with both says so."""
        errors: list[InitErrorDetails] = []
        label = None
        try:
            label = handler(data)
        except ValidationError as exc:
            errors = [
                InitErrorDetails(type=e["type"], loc=e["loc"], input=e["input"], ctx=e.get("ctx", {}))
                for e in exc.errors(include_url=False)
            ]
        if isinstance(data, dict):
            given = [key for key in ("gain", "conflict") if data.get(key) is not None]
            if not given and not any(e["loc"][:1] in (("gain",), ("conflict",)) for e in errors):
                errors.append(InitErrorDetails(type="missing", loc=("gain",), input=data))
            elif len(given) == 2:
                errors.append(
                    InitErrorDetails(
                        type="value_error",
                        loc=(),
                        input=data,
                        ctx={"error": ValueError(
                            "give 'gain' (an agreed label) or 'conflict' (the disagreeing gains, "
                            "e.g. [0, 2]), not both"
                        )},
                    )
                )
        if errors:
            raise ValidationError.from_exception_data(cls.__name__, errors)
        assert label is not None
        return label

    @model_serializer(mode="plain")
    def _one_key(self) -> dict[str, Any]:
        if self.conflict is not None:
            return {"id": self.id, "conflict": list(self.conflict)}
        return {"id": self.id, "gain": self.gain}


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
    #: How many units the corpus holds (optional): bounds the unlabeled units outside
    #: positions 1..k that may be relevant on a population not declared complete
    #: (contract section 12); without it their number is unbounded.
    corpus_size: Annotated[StrictInt, Field(ge=0)] | None = None

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
