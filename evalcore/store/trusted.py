"""Building pydantic models from data the store already validated, cheaply.

``Model.model_construct`` skips validation but still walks the model's fields
for every instance (about 10 us each in pydantic 2.13); reading a study builds
hundreds of thousands of small models. :func:`trusted` does only what
``model_construct`` does when every field is given: set ``__dict__`` and the
pydantic bookkeeping attributes. Use it only for values read back from the
store, with every field present.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel

M = TypeVar("M", bound=BaseModel)

_new = object.__new__
_set = object.__setattr__


def trusted(cls: type[M], values: dict[str, Any]) -> M:
    """An instance of ``cls`` holding ``values`` (all fields, already valid) as is."""
    instance = _new(cls)
    _set(instance, "__dict__", values)
    _set(instance, "__pydantic_fields_set__", set(values))
    _set(instance, "__pydantic_extra__", None)
    _set(instance, "__pydantic_private__", None)
    return instance
