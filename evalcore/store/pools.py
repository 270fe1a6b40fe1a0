"""The judging pools as stored: the units each run returned in its own top ``k``.

:mod:`evalcore.annotation.pool` orders a pool for an annotator; this module
only reads the ``results`` of the study's runs.
"""

from collections.abc import Iterable, Iterator

import sqlite_utils

from evalcore.store.dialect import in_chunks
from evalcore.store.runs import packed_unit_ids
from evalcore.store.study_handle import Study


def pooled_ranks(study: Study, query_id: str) -> Iterator[tuple[str, str, int]]:
    """``(unit_id, run name, rank)`` of every run's top ``k`` for the query, by run then rank."""
    yield from study.db.execute(
        "SELECT r.unit_id, u.name, r.rank FROM results r JOIN runs u ON u.run_id = r.run_id "
        "WHERE u.study_id = ? AND u.staged_by IS NULL AND r.query_id = ? AND r.rank <= u.k "
        "ORDER BY u.run_id, r.rank",
        [study.study_id, query_id],
    )


def pool_sizes(study: Study) -> dict[str, int]:
    """Pool size per query that any run answered (one aggregate query)."""
    rows = study.db.execute(
        "SELECT r.query_id, count(DISTINCT r.unit_id) FROM results r "
        "JOIN runs u ON u.run_id = r.run_id WHERE u.study_id = ? AND u.staged_by IS NULL "
        "AND r.rank <= u.k "
        "GROUP BY r.query_id",
        [study.study_id],
    )
    return {q: int(n) for q, n in rows}


def pooled_units(study: Study, query_ids: Iterable[str]) -> dict[str, set[str]]:
    """The pooled unit ids of each of ``query_ids`` (empty set for an unanswered query)."""
    wanted = list(dict.fromkeys(query_ids))
    out: dict[str, set[str]] = {q: set() for q in wanted}
    for marks, chunk in in_chunks(wanted):
        rows = study.db.execute(
            "SELECT DISTINCT r.query_id, r.unit_id FROM results r "
            "JOIN runs u ON u.run_id = r.run_id "
            f"WHERE u.study_id = ? AND u.staged_by IS NULL AND r.rank <= u.k "
            f"AND r.query_id IN ({marks})",
            [study.study_id, *chunk],
        )
        for q, unit in rows:
            out[q].add(unit)
    return out


def study_pools(study: Study) -> dict[str, set[str]]:
    """The pooled unit ids of every query any run of the study answered (:func:`pooled_units` of
    each). A run's top k come from its packed rankings when its ranks have no gaps (a count of
    its results with ``rank <= k`` shows it), else from its results."""
    out: dict[str, set[str]] = {}
    runs = study.db.execute(
        "SELECT run_id, k FROM runs WHERE study_id = ? AND staged_by IS NULL ORDER BY run_id",
        [study.study_id],
    ).fetchall()
    for run_id, k in runs:
        for query_id, units in _run_top_k(study.db, run_id, k):
            out.setdefault(query_id, set()).update(units)
    return out


def _run_top_k(db: sqlite_utils.Database, run_id: int, k: int) -> list[tuple[str, list[str]]]:
    """(query id, the run's units with ``rank <= k``) of every query the run answered."""
    packed = [(q, packed_unit_ids(text)[:k]) for q, text in db.execute(
        "SELECT query_id, unit_ids FROM run_rankings WHERE run_id = ?", [run_id])]
    within = db.execute("SELECT count(*) FROM results WHERE run_id = ? AND rank <= ?",
                        [run_id, k]).fetchone()[0]
    if packed and sum(len(units) for _, units in packed) == within:
        return packed
    # A unit id holding the separator splits into more parts than the query has results:
    # that query is read row by row.
    out, again = [], []
    for query_id, unit_text, n in db.execute(
        "SELECT query_id, group_concat(unit_id, char(31)), count(*) FROM results "
        "WHERE run_id = ? AND rank <= ? GROUP BY query_id",
        [run_id, k],
    ):
        units = unit_text.split(_UNIT_SEPARATOR)
        if len(units) == n:
            out.append((query_id, units))
        else:
            again.append(query_id)
    for query_id in again:
        out.append((query_id, [u for (u,) in db.execute(
            "SELECT unit_id FROM results WHERE run_id = ? AND query_id = ? AND rank <= ?",
            [run_id, query_id, k])]))
    return out


#: The separator :func:`_run_top_k` reads a query's unit ids with from the results.
_UNIT_SEPARATOR = "\x1f"
