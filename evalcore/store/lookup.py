"""Lookups: whether a row exists, and the one shape of a failed lookup by name: "no X ...;
here is what exists".

Every "not found" a person can meet (a study, run, reference version, pinned
protocol or stored report) names what was asked for and lists what exists,
so the next command can be typed right.
"""

from collections.abc import Sequence
from typing import Any, TypeVar

from evalcore.contract.limits import clipped

E = TypeVar("E", bound=LookupError)


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
    empty; the caller raises it.

    ``missing`` says what was asked for and where (``"no run 'x' in study 's'"``),
    ``advice`` (``"; pin one with ..."``) follows the list.
    """
    hint = f"{listing}: {', '.join(known)}" if known else none_yet
    return error(clipped(f"{missing} ({hint}){advice}"))  # at most 200 characters of any name
