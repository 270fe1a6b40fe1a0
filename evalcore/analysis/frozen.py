"""The base of the value objects of analysis, estimation, live and report: pydantic models
frozen once made (a result is a record, never edited; a copy with changes is a new one)."""

from pydantic import BaseModel, ConfigDict


class FrozenModel(BaseModel):
    """A pydantic model whose fields cannot be set once it is made."""

    model_config = ConfigDict(frozen=True)
