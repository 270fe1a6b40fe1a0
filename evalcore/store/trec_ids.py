"""Which ids a TREC file cannot hold, and the facts the store keeps about them.

A TREC file splits fields on whitespace and reads a line starting with '#' as a comment,
so its exports (:mod:`evalcore.store.exports`) refuse an empty id, an id holding whitespace
(:data:`TREC_SPACE`) and a query id starting with '#'. Whether a run or a study's label
events hold such an id (a *suspect*, which the export then judges) is recorded as they are
written, so the Data page reads a fact instead of every row: ``runs.trec_suspect``
(:func:`record_run_suspects`) and ``label_id_suspects`` (a trigger on label event inserts,
mirroring :data:`TREC_SPACE` by code point: ``schema._TREC_SPACE_CODES``, checked by tests)."""

import re
from collections.abc import Iterable, Sequence
from typing import Any

import sqlite_utils

#: A character a TREC file cannot hold inside an id (its fields are split on whitespace).
TREC_SPACE = re.compile(r"\s")

#: One row per query of the rows ``FROM ... WHERE ...`` selects: (query id, its unit ids
#: concatenated, the length of its shortest unit id). Whitespace inside any id is whitespace
#: in the concatenation, and the concatenation adds none.
PER_QUERY = ("SELECT query_id, group_concat(unit_id, ''), min(length(unit_id)) FROM {source} "
             "GROUP BY query_id")


def ids_suspect(rows: Iterable[tuple[Any, Any, Any]]) -> bool:
    """Whether any (query id, unit ids concatenated, shortest unit id length) row holds an
    id a TREC export may refuse: an empty id, whitespace, a query id starting with '#'."""
    for query_id, units, shortest in rows:
        if (not shortest or not query_id or query_id[0] == "#" or TREC_SPACE.search(query_id)
                or TREC_SPACE.search(units or "")):
            return True
    return False


def rankings_suspect(rankings: Iterable[tuple[str, Sequence[str]]]) -> bool:
    """Whether any (query id, unit ids) ranking holds an id a TREC run export may refuse."""
    return ids_suspect((q, "".join(units), min(map(len, units), default=None))
                       for q, units in rankings)


def record_run_suspects(db: sqlite_utils.Database, run_id: int,
                        rankings: Iterable[tuple[str, Sequence[str]]]) -> None:
    """Mark the run suspect if these of its rankings (just written, inside the writer's
    transaction) hold an id a TREC run export may refuse; a mark is never taken back."""
    if rankings_suspect(rankings):
        db.conn.execute("UPDATE runs SET trec_suspect = 1 WHERE run_id = ? AND trec_suspect = 0",
                        [run_id])


def scan_run_suspect(db: sqlite_utils.Database, run_id: int) -> bool:
    """Whether the run's stored results hold a suspect id, read from every result (one
    indexed pass: 0.34 s per run at 10,000 queries x 100): the migration's backfill, and
    what the recorded fact is checked against."""
    return ids_suspect(db.conn.execute(PER_QUERY.format(source="results WHERE run_id = ?"),
                                       [run_id]))


def backfill_trec_suspects(db: sqlite_utils.Database) -> None:
    """Schema v16's backfill (inside the migration's transaction): each stored run's
    ``trec_suspect``, read from its results."""
    run_ids = [r[0] for r in db.conn.execute("SELECT run_id FROM runs ORDER BY run_id")]
    db.conn.executemany(
        "UPDATE runs SET trec_suspect = 1 WHERE run_id = ?",
        [(r,) for r in run_ids if scan_run_suspect(db, r)],
    )
