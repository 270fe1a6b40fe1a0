"""Building models from values that are already valid, without validating them again.

``pydantic.BaseModel.model_construct`` skips validation but still walks every
field for defaults and aliases (about 2 µs a model); a report of 10,000
queries builds ~50,000 models, and reading a study from the store hundreds of
thousands of labels. :func:`construct` sets the instance state directly, like
``model_construct`` does at its end, and is only for models whose every field
is passed, with no aliases, validators, private attributes or
``model_post_init`` (the report models in :mod:`evalcore.contract.results`,
:class:`~evalcore.contract.observation.Label`, the store's resolved labels).
A model with a validator (e.g. :class:`~evalcore.contract.observation.Observation`)
is refused: its rule would be skipped. A test checks it against ``model_construct``.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel

M = TypeVar("M", bound=BaseModel)
_set = object.__setattr__
#: Classes checked to have no validator (checked once per class).
_PLAIN: set[type] = set()


def construct(cls: type[M], values: dict[str, Any]) -> M:
    """An instance of ``cls`` holding ``values`` (every field, already valid)."""
    if cls not in _PLAIN:
        _require_plain(cls)
    m = cls.__new__(cls)
    _set(m, "__dict__", values)
    _set(m, "__pydantic_fields_set__", set(values))
    _set(m, "__pydantic_extra__", None)
    _set(m, "__pydantic_private__", None)
    return m


def _require_plain(cls: type[BaseModel]) -> None:
    decorators = cls.__pydantic_decorators__
    checks = [
        *decorators.field_validators, *decorators.model_validators,
        *decorators.validators, *decorators.root_validators,
    ]
    if checks or cls.__pydantic_post_init__ is not None:
        raise TypeError(
            f"{cls.__name__} has validators ({', '.join(checks) or 'model_post_init'}); "
            "build it with normal validation, not construct()"
        )
    _PLAIN.add(cls)
