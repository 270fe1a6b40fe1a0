"""Shared helpers for the evidence-store tests (not a test module)."""

from pathlib import Path

import sqlite_utils

from evalcore.store.connection import open_store
from evalcore.store.studies import StudyIn
from evalcore.store.study_setup import create_study


def new_store(target: str | Path, study_id: str = "s", corpus_id: str = "c", **study) -> (
    sqlite_utils.Database
):
    """A store at ``target`` (a store file or database URL, as the ``store_target`` fixture
    gives; a directory means ``store.db`` in it) with study ``s`` on corpus ``c``."""
    if isinstance(target, Path) and target.is_dir():
        target = target / "store.db"
    db = open_store(target)
    create_study(db, StudyIn(study_id=study_id, corpus_id=corpus_id, **study))
    return db


def store_at_version(path: Path, version: int, *rows: str) -> None:
    """A store file left at schema ``version`` (as an older evalcore wrote it), with a study
    ``s`` on corpus ``c`` and the SQL ``rows`` run after it; closed, not migrated."""
    from evalcore.store import schema

    raw = sqlite_utils.Database(path)
    for script in schema.MIGRATIONS[:version]:
        for statement in schema._split_statements(script):
            raw.execute(statement)
    raw.execute(f"PRAGMA user_version = {int(version)}")
    raw.execute("INSERT INTO studies (study_id, name, corpus_id, created_at) "
                "VALUES ('s', 's', 'c', '2026-01-01T00:00:00Z')")
    for row in rows:
        raw.execute(row)
    raw.conn.commit()
    raw.conn.close()


def table_snapshot(db: sqlite_utils.Database) -> dict[str, list[tuple]]:
    """Every row of every ordinary table, sorted: a logical image of the store. Counters of
    writes are left out, like SQLite's own ``sqlite_sequence``: ``corpus_generations`` moves
    forward when staged rows are written and discarded, though nothing visible changed, and
    the unit dictionary ``study_units`` (schema v15) keeps the codes it gave the units of a
    discarded staged import (append-only: no visible row refers to them)."""
    from evalcore.store.dialect import store_tables

    names = [n for n in store_tables(db) if n not in ("corpus_generations", "study_units")]
    return {
        n: sorted(db.execute(f'SELECT * FROM "{n}"').fetchall(), key=repr) for n in names
    }


def built_demo(path: Path) -> Path:
    """The demo study built into a new store file at ``path`` (closed, ready to copy)."""
    from evalcore.demo.study import build_demo

    db = open_store(path)
    build_demo(db)
    db.conn.close()
    return path


def apply_label_steps(db: sqlite_utils.Database, steps, study_id: str = "s") -> None:
    """Record ``(kind, query, unit, who, gain)`` steps: a label, an undo of ``who``'s latest
    label on the query, or a reviewer's adjudication; a refused step (nothing to undo,
    nothing in conflict) is skipped, as in the app."""
    from evalcore.store.labels import adjudicate, record_label, undo_last_label

    for kind, q, u, who, gain in steps:
        try:
            if kind == "label":
                record_label(db, study_id=study_id, query_id=q, unit_id=u, gain=gain,
                             annotator=who)
            elif kind == "undo":
                undo_last_label(db, study_id=study_id, query_id=q, annotator=who)
            else:
                adjudicate(db, study_id=study_id, query_id=q, unit_id=u, gain=gain,
                           reviewer="rev")
        except (ValueError, LookupError):
            continue


def shallow_demo_runs(db: sqlite_utils.Database, depth: int) -> tuple[str, str]:
    """The demo study's two runs cut to their top ``depth`` results and stored to that depth
    (``<run>-top<depth>``): runs that hold no rank past ``depth``."""
    from evalcore.demo.study import DEMO_STUDY_ID, RUN_PROTOCOLS
    from evalcore.store.runs import add_run, get_run, run_results
    from evalcore.store.study_handle import open_study

    study = open_study(db, DEMO_STUDY_ID, None)
    names = []
    for run in RUN_PROTOCOLS:
        ranked = run_results(study, get_run(study, run).run_id)
        rows = [(q, r, u, s) for q, units in ranked.items()
                for r, (u, s) in enumerate(units[:depth], start=1)]
        name = f"{run}-top{depth}"
        add_run(db, study_id=DEMO_STUDY_ID, name=name, source="imported", k=depth, results=rows)
        names.append(name)
    return names[0], names[1]
