"""Building report models from values the metric computer already trusts.

``pydantic.BaseModel.model_construct`` skips validation but still walks every
field for defaults and aliases (about 2 µs a model); a report of 10,000
queries builds ~50,000 models. :func:`construct` sets the instance state
directly, like ``model_construct`` does at its end, and is only for models
whose every field is passed, with no aliases, validators, private attributes
or ``model_post_init`` (the report models in :mod:`evalcore.contract.results`). A test
checks it against ``model_construct``.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel

M = TypeVar("M", bound=BaseModel)
_set = object.__setattr__


def construct(cls: type[M], values: dict[str, Any]) -> M:
    """An instance of ``cls`` holding ``values`` (every field, already valid)."""
    m = cls.__new__(cls)
    _set(m, "__dict__", values)
    _set(m, "__pydantic_fields_set__", set(values))
    _set(m, "__pydantic_extra__", None)
    _set(m, "__pydantic_private__", None)
    return m
