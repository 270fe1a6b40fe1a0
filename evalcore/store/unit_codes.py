"""The per-study unit dictionary: every unit id a stored run of a study returned has a dense
integer code, and each packed ranking holds its units' codes.

* ``study_units``: (study, code) <-> unit id. Codes are 0, 1, 2, ... in first-written order,
  assigned when a run is written (:func:`assign_unit_codes`) and never changed, reused or
  deleted (append-only; only a staged study's discard deletes its dictionary).
* ``run_rankings.unit_codes``: each ranking's codes, best first, as a little-endian int32
  BLOB beside the JSON ``unit_ids``.

Readers pack rankings with numpy (:func:`run_ranking_codes`, then
:meth:`ObservationBatch.from_unit_codes <evalcore.compute.batch.ObservationBatch.from_unit_codes>`)
and name only the units a page shows (:class:`UnitNamer`). A label on a unit no run
returned has no code: it can never match a returned position."""

import json
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
import sqlite_utils

from evalcore.store.dialect import in_chunks, write_rows
from evalcore.store.location import open_read_only
from evalcore.store.store_identity import store_location
from evalcore.store.study_handle import Study

#: The packed codes' on-disk type: little-endian int32.
CODE_DTYPE = np.dtype("<i4")
T = TypeVar("T")
#: Units asked for at least 1/_WHOLE of a study's dictionary: it is read whole.
_WHOLE = 4
#: A namer reads a dictionary of at most this many codes whole at its first read.
_WHOLE_NAMES = 50_000


def pack_codes(codes: Sequence[int]) -> bytes:
    """A ranking's codes as the ``run_rankings.unit_codes`` BLOB."""
    return np.asarray(codes, dtype=CODE_DTYPE).tobytes()


def unit_codes_of(study: Study, unit_ids: Iterable[str]) -> dict[str, int]:
    """unit id -> code of those of ``unit_ids`` that have one (the others were never
    returned by a stored run of the study)."""
    wanted = list(dict.fromkeys(unit_ids))
    if not wanted:
        return {}
    table, _ = _code_table(study.db, study.study_id, wanted)
    return {unit: table[unit] for unit in wanted if unit in table}


def _code_table(
    db: sqlite_utils.Database, study_id: str, unit_ids: Sequence[str]
) -> tuple[dict[str, int], int]:
    """unit id -> code of (at least) those of ``unit_ids`` that have one, and the dictionary's
    size. Asked for a :data:`_WHOLE`-th of it or more, the dictionary is read whole; else each
    id is looked up in the index by a correlated subquery (a join or an ``IN`` list lets
    PostgreSQL, whose statistics lag behind a growing dictionary, scan it inside the write lock)."""
    size = int(db.conn.execute("SELECT coalesce(max(unit_code) + 1, 0) FROM study_units "
                               "WHERE study_id = ?", [study_id]).fetchone()[0])  # codes are dense
    if size <= _WHOLE * len(unit_ids):
        ids, codes = db.conn.execute(
            "SELECT json_group_array(unit_id), json_group_array(unit_code) FROM study_units "
            "WHERE study_id = ?", [study_id]).fetchone()
        return dict(zip(json.loads(ids), json.loads(codes), strict=True)), size
    rows = db.conn.execute(
        "SELECT j.value, (SELECT u.unit_code FROM study_units AS u WHERE u.study_id = ? AND "
        "u.unit_id = j.value) FROM json_each(?) AS j",
        [study_id, json.dumps(list(dict.fromkeys(unit_ids)), ensure_ascii=False)]).fetchall()
    return {unit: code for unit, code in rows if code is not None}, size


def assign_unit_codes(
    db: sqlite_utils.Database, study_id: str, unit_ids: Sequence[str]
) -> list[int]:
    """The code of each of ``unit_ids``, in order, giving the units without one the next codes in
    first-seen order (inside the caller's write transaction)."""
    if not unit_ids:
        return []
    table, start = _code_table(db, study_id, unit_ids)  # new codes follow the last one
    codes: list[int | None] = list(map(table.get, unit_ids))
    if None in codes:
        new = list(dict.fromkeys(u for u, c in zip(unit_ids, codes, strict=True) if c is None))
        fresh = dict(zip(new, range(start, start + len(new)), strict=True))
        write_rows(db, "study_units", ["study_id", "unit_code", "unit_id"],
                   [[(study_id, code, unit) for unit, code in fresh.items()]])
        codes = [fresh[u] if c is None else c for u, c in zip(unit_ids, codes, strict=True)]
    return codes  # type: ignore[return-value]  # no None left


def permitted_unit_codes(study: Study, protocol: str) -> np.ndarray | None:
    """The sorted codes of a pinned protocol's documents that have one (a document no run
    returned cannot be at a returned position); None when the study has no such protocol."""
    rows = study.db.conn.execute(
        "SELECT u.unit_code FROM protocols r "
        "LEFT JOIN protocol_documents p ON p.study_id = r.study_id AND p.protocol = r.name "
        "LEFT JOIN study_units u ON u.study_id = p.study_id AND u.unit_id = p.doc_id "
        "WHERE r.study_id = ? AND r.name = ?",
        [study.study_id, protocol],
    ).fetchall()
    if not rows:
        return None
    codes = [r[0] for r in rows if r[0] is not None]
    return np.sort(np.fromiter(codes, dtype=np.int64, count=len(codes)))


@dataclass(frozen=True, eq=False)
class RankingCodes:
    """A run's rankings as codes: query ``query_ids[i]`` ranked
    ``codes[offsets[i]:offsets[i + 1]]``, best first (queries in the store's key order)."""

    query_ids: list[str]
    offsets: np.ndarray  # int64[n + 1]
    codes: np.ndarray  # int32[total]


def run_ranking_codes(
    study: Study, run_id: int, query_ids: Sequence[str] | None = None
) -> RankingCodes:
    """The run's rankings (of every query, or of those of ``query_ids`` it answered) as
    :class:`RankingCodes` (a run that returned nothing: no query answered)."""
    if query_ids is None:
        rows = study.db.conn.execute(
            "SELECT query_id, unit_codes FROM run_rankings WHERE run_id = ?", [run_id]
        ).fetchall()
    else:
        rows = []
        for marks, chunk in in_chunks(query_ids):
            rows += study.db.conn.execute(
                "SELECT query_id, unit_codes FROM run_rankings WHERE run_id = ? "
                f"AND query_id IN ({marks})", [run_id, *chunk]).fetchall()
    blobs = [r[1] for r in rows]
    offsets = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, blobs), dtype=np.int64, count=len(blobs))
              // CODE_DTYPE.itemsize, out=offsets[1:])
    codes = np.frombuffer(b"".join(blobs), dtype=CODE_DTYPE)
    return RankingCodes([r[0] for r in rows], offsets, codes)


def unit_names(study: Study, codes: Iterable[int]) -> dict[int, str]:
    """code -> unit id of ``codes`` (the whole dictionary in one scan when asked for many)."""
    return _names(study.db.conn, study.study_id, codes)


def _small_dictionary(conn: sqlite3.Connection, study_id: str) -> dict[int, str]:
    """code -> unit id of the whole dictionary if it has at most :data:`_WHOLE_NAMES` codes,
    else nothing (one statement)."""
    return dict(conn.execute(
        "SELECT unit_code, unit_id FROM study_units WHERE study_id = ? AND (SELECT "
        "coalesce(max(unit_code) + 1, 0) FROM study_units WHERE study_id = ?) <= ?",
        [study_id, study_id, _WHOLE_NAMES]).fetchall())


def _names(conn: sqlite3.Connection, study_id: str, codes: Iterable[int], *,
           whole: bool = False) -> dict[int, str]:
    """code -> unit id of ``codes``; ``whole``: every name of a dictionary of at most
    :data:`_WHOLE_NAMES` codes (a namer's first read: its later calls open nothing)."""
    wanted = sorted(set(map(int, codes)))
    if len(wanted) > 10_000:
        return dict(conn.execute("SELECT unit_code, unit_id FROM study_units WHERE study_id = ?",
                                 [study_id]).fetchall())
    if whole and wanted:
        small = _small_dictionary(conn, study_id)
        if small:
            return small
    out: dict[int, str] = {}
    for marks, chunk in in_chunks(wanted):
        out.update(conn.execute("SELECT unit_code, unit_id FROM study_units WHERE study_id = ? "
                                f"AND unit_code IN ({marks})", [study_id, *chunk]).fetchall())
    return out


class UnitNamer:
    """Names codes of one study's dictionary when asked (codes -> unit ids, in order).

    Each read opens the store read-only and closes it, so a namer outliving the connection it
    was built with still names its units (an in-memory store: read through that connection).
    Names read are kept (a code never changes); a small dictionary is read whole at first."""

    def __init__(self, study: Study) -> None:
        self.study_id = study.study_id
        self._location = store_location(study.db)
        self._conn = None if self._location else study.db.conn
        self._names: dict[int, str] = {}

    def __call__(self, codes: np.ndarray) -> list[str]:
        names = self._names
        missing = [c for c in dict.fromkeys(np.asarray(codes).tolist()) if c not in names]
        if missing:
            names.update(self._read(missing))
        return [names[c] for c in np.asarray(codes).tolist()]

    def read_small(self, study: Study) -> None:
        """Read a small dictionary (at most :data:`_WHOLE_NAMES` codes) whole now through the handle's
        connection, if nothing was read yet: a state about to name its units then opens no
        connection of its own. A larger dictionary reads nothing."""
        if self._names or study.study_id != self.study_id:
            return
        self._names.update(_small_dictionary(study.db.conn, self.study_id))

    def code_of(self, unit_id: str) -> int | None:
        """The code of ``unit_id`` (None: no stored run of the study returned it)."""
        return self._with_conn(lambda conn: conn.execute(
            "SELECT unit_code FROM study_units WHERE study_id = ? AND unit_id = ?",
            [self.study_id, unit_id]).fetchone() or (None,))[0]

    def _read(self, codes: list[int]) -> dict[int, str]:
        first = not self._names
        return self._with_conn(lambda conn: _names(conn, self.study_id, codes, whole=first))

    def _with_conn(self, read: Callable[[sqlite3.Connection], T]) -> T:
        if self._conn is not None:
            return read(self._conn)
        store = open_read_only(self._location)
        try:
            return read(store.conn)
        finally:
            store.conn.close()


def backfill_unit_codes(db: sqlite_utils.Database) -> None:
    """Schema v15's backfill (inside the migration's transaction): a code for every unit of every
    packed ranking (per study: runs, queries, ranks in order), then for every other labeled
    unit, and each ranking's and label event's codes written."""
    for (study_id,) in db.conn.execute("SELECT study_id FROM studies ORDER BY rowid").fetchall():
        codes: dict[str, int] = {}
        for (run_id,) in db.conn.execute(
                "SELECT run_id FROM runs WHERE study_id = ? ORDER BY run_id", [study_id]).fetchall():
            rows = db.conn.execute("SELECT query_id, unit_ids FROM run_rankings WHERE run_id = ?",
                                   [run_id]).fetchall()
            if not rows:
                continue
            parsed = json.loads("[" + ",".join([r[1] for r in rows]) + "]")
            setdefault = codes.setdefault
            packed = []
            for (query_id, _), units in zip(rows, parsed, strict=True):
                packed.append((pack_codes([setdefault(u, len(codes)) for u in units]),
                               run_id, query_id))
            db.conn.executemany(
                "UPDATE run_rankings SET unit_codes = ? WHERE run_id = ? AND query_id = ?", packed)
        for (unit,) in db.conn.execute(
                "SELECT DISTINCT unit_id FROM label_events WHERE study_id = ?", [study_id]):
            codes.setdefault(unit, len(codes))
        db.conn.executemany(
            "INSERT INTO study_units (study_id, unit_code, unit_id) VALUES (?, ?, ?)",
            ((study_id, code, unit) for unit, code in codes.items()))
    db.conn.execute(
        "UPDATE label_events SET unit_code = (SELECT u.unit_code FROM study_units u "
        "WHERE u.study_id = label_events.study_id AND u.unit_id = label_events.unit_id)")


def backfill_packed_rankings(db: sqlite_utils.Database) -> None:
    """Schema v21's backfill (inside the migration's transaction): every run with results but no
    packed ranking (stored before v7) gets its ``run_rankings`` rows as the run writer writes
    them (new codes in run, query and rank order)."""
    runs = db.conn.execute(
        "SELECT u.run_id, u.study_id FROM runs u WHERE EXISTS (SELECT 1 FROM results r "
        "WHERE r.run_id = u.run_id) AND NOT EXISTS (SELECT 1 FROM run_rankings p "
        "WHERE p.run_id = u.run_id) ORDER BY u.run_id").fetchall()
    for run_id, study_id in runs:
        rows = db.conn.execute("SELECT query_id, unit_id, score FROM results WHERE run_id = ? "
                               "ORDER BY query_id, rank", [run_id]).fetchall()
        queries: dict[str, tuple[list[str], list[float | None]]] = {}
        for query_id, unit_id, score in rows:
            units, scores = queries.setdefault(query_id, ([], []))
            units.append(unit_id)
            scores.append(score)
        codes = iter(assign_unit_codes(db, study_id, [r[1] for r in rows]))
        db.conn.executemany(
            "INSERT INTO run_rankings (run_id, query_id, unit_ids, scores, unit_codes) "
            "VALUES (?, ?, ?, ?, ?)",
            [(run_id, query_id, json.dumps(units, ensure_ascii=False), json.dumps(scores),
              pack_codes([next(codes) for _ in units]))
             for query_id, (units, scores) in queries.items()])
