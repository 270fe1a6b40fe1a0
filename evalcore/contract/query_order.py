"""The one order of query ids in every table and chart: natural order.

``q2`` comes before ``q10`` and ``2`` before ``10``: an id is split into runs
of digits and runs of other characters, digit runs compare as numbers and the
others as text, case-insensitively. The order is total and stable: ids that
tie so far (``2`` and ``02``, ``Q1`` and ``q1``) are ordered by their exact
text, so two different ids never compare equal and sorting the same ids
always gives the same sequence. Digit runs are compared by length and digits,
never converted to ``int``, so a hostile id of thousands of digits sorts too.

Outputs whose order is part of a contract keep it: evaluation outputs are in
input order (contract section 7), and file exports keep the order their
format defines.
"""

import re
from functools import lru_cache
from typing import Any

_DIGITS = re.compile(r"(\d+)")


@lru_cache(maxsize=1 << 15)
def natural_key(query_id: str) -> tuple[tuple[tuple[int, str] | str, ...], str]:
    """The sort key of ``query_id`` in natural order (see the module docstring).

    Pieces alternate text, number, text, …, so pieces at the same position
    always have the same kind and the keys of any two ids compare. Keys are kept
    for the ids last sorted (the same queries are sorted again for every run).
    """
    pieces: list[Any] = _DIGITS.split(query_id)
    if len(pieces) == 3:  # the usual id: text, one run of digits, text
        value = pieces[1].lstrip("0")
        return (pieces[0].casefold(), (len(value), value), pieces[2].casefold()), query_id
    pieces[0::2] = [piece.casefold() for piece in pieces[0::2]]
    # A run of digits: by magnitude, then digits.
    pieces[1::2] = [(len(value), value) for value in [p.lstrip("0") for p in pieces[1::2]]]
    return tuple(pieces), query_id
