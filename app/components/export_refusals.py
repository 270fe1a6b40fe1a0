"""Whether the Data page's TREC exports would be refused: facts of the store, shared by
every session of the app process and kept up to date without whole-table scans.

:mod:`evalcore.store.export_checks` reads the suspects (ids a TREC file cannot hold).
Here they are kept per store file: a stored run's answer for as long as the run (a
run never changes), a frozen reference version's for as long as its content hash,
and the working labels' as a :class:`~evalcore.store.export_checks.LabelIdsSeen`
brought up to date on every read from the label events written since (a label is
one new event: one short read, not a scan of every label). Only when there is a
suspect is the export itself run for its message, once per state of the store
(:func:`app.components.shared_results.shared_result`). Every call names the
session's ``viewer`` and is refused unless it may read the study, before anything
is looked up.
"""

import threading
from collections.abc import Callable
from dataclasses import dataclass, field

import sqlite_utils
import streamlit as st

from app.components.shared_results import shared_result
from evalcore.store.export_checks import (
    LabelIdsSeen,
    label_ids_seen_unchecked,
    qrels_refusal,
    qrels_suspect_unchecked,
    run_refusal,
    run_suspect_unchecked,
)
from evalcore.store.read_access import Viewer, require_read
from evalcore.store.references import ReferenceVersion
from evalcore.store.runs import RunInfo


@dataclass
class _Facts:
    lock: threading.Lock = field(default_factory=threading.Lock)
    labels: dict[str, LabelIdsSeen] = field(default_factory=dict)
    #: (study, version, content hash) -> suspect
    references: dict[tuple[str, str, str], bool] = field(default_factory=dict)
    #: (study, run id, run name) -> suspect
    runs: dict[tuple[str, int, str], bool] = field(default_factory=dict)


@st.cache_resource(show_spinner=False)
def _facts(path: str) -> _Facts:
    return _Facts()


def _known(facts: _Facts, table: dict, key: tuple, read: Callable[[], bool]) -> bool:
    with facts.lock:
        if key not in table:
            table[key] = read()
        return table[key]


def qrels_refusal_now(
    db: sqlite_utils.Database, path: str, study_id: str, reference: ReferenceVersion | None, *,
    viewer: Viewer,
) -> str | None:
    """Why the qrels export of the working labels (``reference`` None) or of a frozen
    version would be refused now, or None."""
    require_read(db, viewer, study_id)
    facts = _facts(path)
    if reference is None:
        with facts.lock:
            seen = facts.labels[study_id] = label_ids_seen_unchecked(
                db, study_id, facts.labels.get(study_id))
        suspect = seen.suspect
    else:
        suspect = _known(facts, facts.references,
                         (study_id, reference.name, reference.content_hash),
                         lambda: qrels_suspect_unchecked(db, study_id, reference.name))
    name = None if reference is None else reference.name
    if not suspect:
        return qrels_refusal(db, study_id, name, viewer=viewer, suspect=False)
    return shared_result(
        db, path, study_id, ("qrels_refusal", name, viewer),
        lambda: qrels_refusal(db, study_id, name, viewer=viewer, suspect=True), viewer=viewer)


def run_refusal_now(
    db: sqlite_utils.Database, path: str, study_id: str, run: RunInfo, *, viewer: Viewer
) -> str | None:
    """Why the TREC export of the stored ``run`` would be refused, or None."""
    require_read(db, viewer, study_id)
    suspect = _known(_facts(path), _facts(path).runs, (study_id, run.run_id, run.name),
                     lambda: run_suspect_unchecked(db, run.run_id))
    if not suspect:
        return run_refusal(db, study_id, run.name, viewer=viewer, suspect=False)
    return shared_result(
        db, path, study_id, ("run_refusal", run.run_id, viewer),
        lambda: run_refusal(db, study_id, run.name, viewer=viewer, suspect=True), viewer=viewer)
