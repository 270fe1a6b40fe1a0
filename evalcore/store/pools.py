"""The judging pools as stored: the units each run returned in its own top ``k``.

:mod:`evalcore.annotation.pool` orders a pool for an annotator; this module
only reads the ``results`` of the study's runs.
"""

from collections.abc import Iterable, Iterator

import sqlite_utils

from evalcore.store.read_access import Viewer, require_read


def pooled_ranks(
    db: sqlite_utils.Database, study_id: str, query_id: str, *, viewer: Viewer
) -> Iterator[tuple[str, str, int]]:
    """:func:`pooled_ranks_unchecked` if ``viewer`` may read the study (checked now, not
    when the iterator is first read)."""
    require_read(db, viewer, study_id)
    return pooled_ranks_unchecked(db, study_id, query_id)


def pooled_ranks_unchecked(
    db: sqlite_utils.Database, study_id: str, query_id: str
) -> Iterator[tuple[str, str, int]]:
    """``(unit_id, run name, rank)`` of every run's top ``k`` for the query, by run then rank."""
    yield from db.execute(
        "SELECT r.unit_id, u.name, r.rank FROM results r JOIN runs u ON u.run_id = r.run_id "
        "WHERE u.study_id = ? AND u.staged_by IS NULL AND r.query_id = ? AND r.rank <= u.k "
        "ORDER BY u.run_id, r.rank",
        [study_id, query_id],
    )


def pool_sizes(db: sqlite_utils.Database, study_id: str, *, viewer: Viewer) -> dict[str, int]:
    """Pool size per query that any run answered, if ``viewer`` may read the study."""
    require_read(db, viewer, study_id)
    return pool_sizes_unchecked(db, study_id)


def pool_sizes_unchecked(db: sqlite_utils.Database, study_id: str) -> dict[str, int]:
    """Pool size per query that any run answered (one aggregate query)."""
    rows = db.execute(
        "SELECT r.query_id, count(DISTINCT r.unit_id) FROM results r "
        "JOIN runs u ON u.run_id = r.run_id WHERE u.study_id = ? AND u.staged_by IS NULL "
        "AND r.rank <= u.k "
        "GROUP BY r.query_id",
        [study_id],
    )
    return {q: int(n) for q, n in rows}


def pooled_units(
    db: sqlite_utils.Database, study_id: str, query_ids: Iterable[str], *, viewer: Viewer
) -> dict[str, set[str]]:
    """The pooled unit ids of each of ``query_ids``, if ``viewer`` may read the study."""
    require_read(db, viewer, study_id)
    return pooled_units_unchecked(db, study_id, query_ids)


def pooled_units_unchecked(
    db: sqlite_utils.Database, study_id: str, query_ids: Iterable[str]
) -> dict[str, set[str]]:
    """The pooled unit ids of each of ``query_ids`` (empty set for an unanswered query)."""
    wanted = list(dict.fromkeys(query_ids))
    out: dict[str, set[str]] = {q: set() for q in wanted}
    for start in range(0, len(wanted), 500):
        chunk = wanted[start : start + 500]
        marks = ", ".join("?" * len(chunk))
        rows = db.execute(
            "SELECT DISTINCT r.query_id, r.unit_id FROM results r "
            "JOIN runs u ON u.run_id = r.run_id "
            f"WHERE u.study_id = ? AND u.staged_by IS NULL AND r.rank <= u.k "
            f"AND r.query_id IN ({marks})",
            [study_id, *chunk],
        )
        for q, unit in rows:
            out[q].add(unit)
    return out


def study_pools_unchecked(db: sqlite_utils.Database, study_id: str) -> dict[str, set[str]]:
    """The pooled unit ids of every query any run of the study answered: one grouped read
    per run (a query's top-k unit ids concatenated by SQLite, in primary key order, no sort),
    a tenth of :func:`pooled_units_unchecked`'s rows. A unit id holding the separator splits
    into more parts than the query has rows: that query is read again by
    :func:`pooled_units_unchecked`."""
    out: dict[str, set[str]] = {}
    again: list[str] = []
    runs = db.execute(
        "SELECT run_id, k FROM runs WHERE study_id = ? AND staged_by IS NULL ORDER BY run_id",
        [study_id]).fetchall()
    for run_id, k in runs:
        for query_id, unit_text, n in db.execute(
            "SELECT query_id, group_concat(unit_id, char(31)), count(*) FROM results "
            "WHERE run_id = ? AND rank <= ? GROUP BY query_id",
            [run_id, k],
        ):
            units = unit_text.split(_UNIT_SEPARATOR)
            if len(units) != n:
                again.append(query_id)
            pool = out.get(query_id)
            if pool is None:
                out[query_id] = set(units)
            else:
                pool.update(units)
    if again:
        out.update(pooled_units_unchecked(db, study_id, again))
    return out


#: The separator :func:`study_pools_unchecked` reads unit ids with.
_UNIT_SEPARATOR = "\x1f"
