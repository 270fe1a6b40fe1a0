"""Runs and their ranked results."""

import json
from collections.abc import Iterable, Mapping, Sequence
from itertools import chain, repeat
from operator import itemgetter
from typing import Any, Literal

import sqlite_utils

from evalcore.access.roles import Permission
from evalcore.contract.frozen import FrozenModel
from evalcore.contract.limits import MAX_NAME_CHARS, require_fits
from evalcore.io.clock import utc_now_iso
from evalcore.store.authorize import authorize, require_known_study
from evalcore.store.dialect import write_rows
from evalcore.store.lookup import exists, models, not_found
from evalcore.store.staging import staging_owner
from evalcore.store.study_handle import Study
from evalcore.store.transaction import write_transaction
from evalcore.store.trec_ids import record_run_suspects
from evalcore.store.unit_codes import CODE_DTYPE, assign_unit_codes, pack_codes


class RunInfo(FrozenModel):

    run_id: int
    study_id: str
    name: str
    source: Literal["lexical", "imported"]
    protocol: dict
    corpus_fingerprint: str | None
    k: int
    scan_complete: bool
    created_at: str

    @property
    def pinned_protocol(self) -> str | None:
        """The name the run's protocol pins under (a retrieval protocol of that name stored
        in the study: the run's pinned set), or None when it names none."""
        name = self.protocol.get("pinned_protocol") or self.protocol.get("name")
        return name if isinstance(name, str) else None


class RunNotFoundError(LookupError):
    """The named run is not in this study."""


#: One query's ranking as a ranker returns it: ``(unit_id, score)``, best first (ranks 1, 2, ...).
Ranking = Sequence[tuple[str, float | None]]


def add_run(
    db: sqlite_utils.Database,
    *,
    study_id: str,
    name: str,
    source: Literal["lexical", "imported"],
    k: int,
    results: Iterable[tuple[str, int, str, float | None]] | None = None,
    rankings: Mapping[str, Ranking] | None = None,
    protocol: dict | None = None,
    corpus_fingerprint: str | None = None,
    scan_complete: bool = True,
    actor: str | None = None,
    staged: bool = False,
) -> int:
    """Store a run atomically from ``results`` (rows ``(query_id, rank, unit_id, score)``) or
    ``rankings`` (query id -> :data:`Ranking`; an empty one stores nothing); return its run_id.
    A run name is unique in a study (never overwritten). In a team-mode study ``actor`` needs
    the lead role. ``staged``: only an invisible run row, filled by :func:`write_run_results`
    and made visible by :func:`publish_run` (:mod:`evalcore.store.staging`)."""
    if not staged and (results is None) == (rankings is None):
        raise TypeError("add_run takes results or rankings (one of them)")
    require_known_study(db, actor, study_id)
    with write_transaction(db):
        authorize(db, study_id=study_id, actor=actor, permission=Permission.CREATE_RUN)
        _check_name_free(db, study_id, name)
        cursor = db.execute(
            "INSERT INTO runs (study_id, name, source, protocol_json, corpus_fingerprint, k, "
            "scan_complete, created_at, staged_by) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [study_id, name, source, json.dumps(protocol or {}, sort_keys=True),
             corpus_fingerprint, k, int(scan_complete), utc_now_iso(),
             staging_owner() if staged else None],
        )
        run_id = int(cursor.lastrowid)
        if rankings is not None:
            columns = [(q, range(1, len(ranking) + 1), *zip(*ranking, strict=True))
                       for q, ranking in rankings.items() if ranking]
            _write_queries(db, run_id, columns)
        elif not staged:
            write_run_results(db, run_id, results or ())
    return run_id


def write_run_results(
    db: sqlite_utils.Database, run_id: int, results: Iterable[tuple[str, int, str, float | None]]
) -> None:
    """Insert results (whole queries) and their packed rankings (inside the caller's
    transaction)."""
    grouped: dict[str, list[tuple[int, str, float | None]]] = {}
    for q, r, u, s in results:
        grouped.setdefault(q, []).append((r, u, s))
    for entries in grouped.values():
        entries.sort(key=itemgetter(0))
    _write_queries(db, run_id, [(q, *zip(*entries, strict=True)) for q, entries in grouped.items()])


#: One query's results as columns: (query_id, ranks, unit_ids, scores), ranks ascending.
_Columns = tuple[str, Sequence[int], Sequence[str], Sequence[float | None]]


def _write_queries(db: sqlite_utils.Database, run_id: int, queries: list[_Columns]) -> None:
    """Insert the queries' results (a row per result) and packed rankings (a row per query: JSON
    arrays, best first, ``repr`` floats, and the units' codes, new ones in query and rank
    order), inside the caller's transaction, and record whether they hold an id a TREC file
    cannot hold (:mod:`evalcore.store.trec_ids`)."""
    conn = db.conn
    results = chain.from_iterable(zip(repeat(run_id), repeat(q), ranks, units, scores)
                                  for q, ranks, units, scores in queries)
    write_rows(db, "results", ["run_id", "query_id", "rank", "unit_id", "score"], [results])
    study_id = conn.execute("SELECT study_id FROM runs WHERE run_id = ?", [run_id]).fetchone()[0]
    every_unit = list(chain.from_iterable(units for _, _, units, _ in queries))
    packed = pack_codes(assign_unit_codes(db, study_id, every_unit))  # sliced per query below
    size = CODE_DTYPE.itemsize
    rows = []
    start = 0
    for q, _, units, scores in queries:
        end = start + size * len(units)
        unit_ids = json.dumps(units, ensure_ascii=False)
        rows.append((run_id, q, unit_ids, json.dumps(scores), packed[start:end]))
        start = end
    columns = ["run_id", "query_id", "unit_ids", "scores", "unit_codes"]
    write_rows(db, "run_rankings", columns, [rows])
    record_run_suspects(db, run_id, ((q, units) for q, _, units, _ in queries))


def publish_run(db: sqlite_utils.Database, run_id: int, *, study_id: str, actor: str | None) -> None:
    """Make a staged run visible (inside the caller's transaction, re-authorised there)."""
    authorize(db, study_id=study_id, actor=actor, permission=Permission.CREATE_RUN)
    db.execute("UPDATE runs SET staged_by = NULL, created_at = ? WHERE run_id = ?",
               [utc_now_iso(), run_id])


def _check_name_free(db: sqlite_utils.Database, study_id: str, name: str) -> None:
    require_fits(name, MAX_NAME_CHARS, "a run name", "choose a shorter one")
    row = db.execute(
        "SELECT staged_by FROM runs WHERE study_id = ? AND name = ?", [study_id, name]
    ).fetchone()
    if row is not None:
        being = " (it is being imported right now)" if row[0] is not None else ""
        raise ValueError(
            f"run {name!r} already exists in study {study_id!r}{being}; choose another run name"
        )


def packed_unit_ids(text: str) -> list[str]:
    """A packed ranking's unit ids (``run_rankings.unit_ids``, as :func:`_write_queries` writes
    them): split at the separators ``json.dumps`` writes when no id needed an escape (no
    backslash: no id holds a quote or a control character), else parsed as JSON."""
    if "\\" in text:
        return json.loads(text)
    return text[2:-2].split('", "') if len(text) > 2 else []


def run_exists(study: Study, name: str) -> bool:
    return exists(study.db, "SELECT 1 FROM runs WHERE study_id = ? AND name = ? AND "
                  "staged_by IS NULL", [study.study_id, name])


#: The columns of a :class:`RunInfo`, in its fields' order.
_RUN_COLUMNS = ("run_id, study_id, name, source, protocol_json, corpus_fingerprint, k, "
                "scan_complete, created_at")


def get_run(study: Study, name: str) -> RunInfo:
    """The study's run ``name``."""
    row = study.db.execute(
        f"SELECT {_RUN_COLUMNS} FROM runs WHERE study_id = ? AND name = ? AND staged_by IS NULL",
        [study.study_id, name],
    ).fetchone()
    if row is None:
        raise not_found(
            RunNotFoundError,
            f"no run {name!r} in study {study.study_id!r}",
            sorted(run.name for run in list_runs(study)),
            listing="runs in this study",
            none_yet="the study has no run yet",
        )
    return _run_info(row)


def _run_info(row: Sequence[Any]) -> RunInfo:
    """A :class:`RunInfo` from a row of :data:`_RUN_COLUMNS` (its JSON protocol parsed)."""
    return models(RunInfo, [(*row[:4], json.loads(row[4]), *row[5:])])[0]


def list_runs(study: Study) -> list[RunInfo]:
    """The study's runs, in import order: one statement whatever their number."""
    rows = study.db.execute(
        f"SELECT {_RUN_COLUMNS} FROM runs WHERE study_id = ? AND staged_by IS NULL ORDER BY run_id",
        [study.study_id],
    ).fetchall()
    return [_run_info(row) for row in rows]


def run_results(
    study: Study, run_id: int, query_ids: Iterable[str] | None = None
) -> dict[str, list[tuple[str, float | None]]]:
    """Ranked (unit_id, score) lists per query, best first, of a run of the study."""
    db = study.db
    if not exists(db, "SELECT 1 FROM runs WHERE run_id = ? AND study_id = ? AND "
                  "staged_by IS NULL", [run_id, study.study_id]):
        raise RunNotFoundError(f"no run with id {run_id} in study {study.study_id!r}")
    out: dict[str, list[tuple[str, float | None]]] = {}
    if query_ids is None:
        rows = db.execute("SELECT query_id, unit_id, score FROM results WHERE run_id = ? "
                          "ORDER BY query_id, rank", [run_id])
        for q, u, s in rows:
            out.setdefault(q, []).append((u, s))
        return out
    for q in query_ids:
        rows = db.execute("SELECT unit_id, score FROM results WHERE run_id = ? AND query_id = ? "
                          "ORDER BY rank", [run_id, q])
        out[q] = [(u, s) for u, s in rows]
    return out


def permitted_ids_for_run(db: sqlite_utils.Database, run: RunInfo) -> list[str] | None:
    """The pinned document ids of the run's retrieval protocol, or None if none is pinned (one
    statement; a protocol pinning none is a row without a document)."""
    name = run.pinned_protocol
    if name is None:
        return None
    rows = db.execute(
        "SELECT d.doc_id FROM protocols p LEFT JOIN protocol_documents d "
        "ON d.study_id = p.study_id AND d.protocol = p.name "
        "WHERE p.study_id = ? AND p.name = ? ORDER BY d.doc_id",
        [run.study_id, name],
    ).fetchall()
    if not rows:
        return None
    return [r[0] for r in rows if r[0] is not None]
