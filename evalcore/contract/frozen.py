"""The base of the value models: pydantic models frozen once made (a record is never edited;
a copy with changes is a new one)."""

from pydantic import BaseModel, ConfigDict


class FrozenModel(BaseModel):
    """A pydantic model whose fields cannot be set once it is made."""

    model_config = ConfigDict(frozen=True)
