"""The measures a study reports: chosen by a lead, shown by every table and dashboard.

A study holds catalogue measures (contract section 10) by canonical name
(``studies.measures``); until a lead chooses, :data:`DEFAULT_STUDY_MEASURES` at each run's
own cutoff. A change is lead-only in team mode and audited (``study.measures.set``) in the
same transaction. Judged@k is shown beside every measure (:func:`shown_measures`)."""

from __future__ import annotations

from collections.abc import Sequence

import sqlite_utils

from evalcore.access.roles import Permission
from evalcore.contract.measures import Measure, parse_measure
from evalcore.store.audit import record_audit
from evalcore.store.authorize import authorize
from evalcore.store.studies import get_study
from evalcore.store.study_handle import Study
from evalcore.store.transaction import write_transaction

#: The measures of a study no lead has chosen for: P, R, nDCG, RR at each run's k.
DEFAULT_STUDY_MEASURES: tuple[Measure, ...] = (
    Measure("P"), Measure("R"), Measure("nDCG"), Measure("RR"),
)
#: The most measures a study may report (a dashboard row holds them all).
MAX_STUDY_MEASURES = 12


def parse_measure_list(text: str) -> list[Measure]:
    """``"P@10, nDCG@10"`` -> the measures, in order, duplicates dropped. ``UnknownMeasure`` (listing
    the known ones) for a name that does not parse, ``ValueError`` for an empty or too long list."""
    names = [part.strip() for part in text.split(",")]
    return _checked([parse_measure(name) for name in names if name])


def _checked(measures: Sequence[Measure]) -> list[Measure]:
    parsed = [m if isinstance(m, Measure) else parse_measure(m) for m in measures]
    out = list(dict.fromkeys(parsed))
    if not out:
        raise ValueError("no measure named: give one or more, e.g. 'P@10, nDCG@10, MRR@10'")
    if len(out) > MAX_STUDY_MEASURES:
        raise ValueError(f"{len(out)} measures named; a study reports at most "
                         f"{MAX_STUDY_MEASURES}")
    return out


def _decode(stored: str) -> list[Measure]:
    if not stored:
        return list(DEFAULT_STUDY_MEASURES)
    return [parse_measure(name) for name in stored.split(",")]


def study_measures(study: Study) -> list[Measure]:
    """The measures the study reports (the default set until a lead chooses);
    ``StudyNotFoundError`` for an unknown study."""
    row = study.db.execute(
        "SELECT measures FROM studies WHERE study_id = ?", [study.study_id]
    ).fetchone()
    if row is None:
        get_study(study.db, study.study_id)  # raises StudyNotFoundError
    return _decode(row[0])


def set_study_measures(
    db: sqlite_utils.Database,
    *,
    study_id: str,
    measures: Sequence[Measure | str],
    actor: str | None,
) -> list[Measure]:
    """Replace the study's measures (lead only in team mode) with its audit entry, in one
    transaction; return the previous ones. Names are parsed first (``UnknownMeasure``)."""
    chosen = _checked(list(measures))
    get_study(db, study_id)
    with write_transaction(db):
        authorize(db, study_id=study_id, actor=actor, permission=Permission.CHOOSE_MEASURES)
        stored = db.execute(
            "SELECT measures FROM studies WHERE study_id = ?", [study_id]
        ).fetchone()[0]
        old = _decode(stored)
        db.execute("UPDATE studies SET measures = ? WHERE study_id = ?",
                   [",".join(m.canonical for m in chosen), study_id])
        change = {"old": [m.canonical for m in old], "new": [m.canonical for m in chosen],
                  "default_before": not stored}
        record_audit(db, actor, "study.measures.set", study_id=study_id, detail=change)
    return old


def shown_measures(measures: Sequence[Measure]) -> list[Measure]:
    """``measures`` and, after them, ``Judged`` at each cutoff they use that has none yet."""
    out = list(measures)
    judged_at = {m.k for m in out if m.family == "Judged"}
    for m in measures:
        if m.k not in judged_at:
            judged_at.add(m.k)
            out.append(Measure("Judged", k=m.k))
    return out


def measure_label(measure: Measure, k: int | None = None, *, aggregate: bool = False) -> str:
    """The measure's name at cutoff ``k`` when it has none of its own (``P`` at 10: ``P@10``);
    ``aggregate`` names the mean (``MRR@10`` for ``RR@10``)."""
    name = measure.aggregate_name if aggregate else measure.canonical
    if measure.k is None:
        return f"{name}@{k if k is not None else 'k'}"
    return name
