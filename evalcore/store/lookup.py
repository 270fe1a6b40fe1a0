"""Lookups: whether a row exists, rows as models, and the one shape of a failed lookup by
name ("no X ...; here is what exists"), so the next command can be typed right."""

from collections.abc import Iterable, Sequence
from typing import Any, TypeVar

from pydantic import BaseModel

from evalcore.contract.limits import clipped

E = TypeVar("E", bound=LookupError)
M = TypeVar("M", bound=BaseModel)


def models(model: type[M], rows: Iterable[Sequence[Any]]) -> list[M]:
    """Each of ``rows`` (its values in the order of ``model``'s fields) as a ``model``."""
    return [model(**dict(zip(model.model_fields, row, strict=True))) for row in rows]


def column(db: Any, sql: str, parameters: Sequence[Any] = ()) -> list[Any]:
    """The first value of each row ``sql`` returns (on the store ``db``, or a study handle's)."""
    return [row[0] for row in db.execute(sql, parameters)]


def exists(db: Any, sql: str, parameters: Sequence[Any] = ()) -> bool:
    """Does ``sql`` (on the store ``db``, or a study handle's) return a row?"""
    return db.execute(sql, parameters).fetchone() is not None


def not_found(
    error: type[E],
    missing: str,
    known: Sequence[str],
    *,
    listing: str,
    none_yet: str,
    advice: str = "",
) -> E:
    """``error("<missing> (<listing>: a, b)<advice>")``, or ``(<none_yet>)`` when ``known`` is
    empty; the caller raises it. ``missing``: what was asked for and where (``"no run 'x' in
    study 's'"``); ``advice`` (``"; pin one with ..."``) follows the list."""
    hint = f"{listing}: {', '.join(known)}" if known else none_yet
    return error(clipped(f"{missing} ({hint}){advice}"))  # at most 200 characters of any name
