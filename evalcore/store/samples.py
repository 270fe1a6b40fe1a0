"""Named samples of a comparison's unknown units, as stored (contract section 13).

:mod:`evalcore.estimation.stored` draws a sample; the store keeps what was drawn (the design
as JSON, runs, measures, seed, size, and the units in the order annotators take them) to
show, export, label and estimate from. Drawing and growing are lead-only in team mode
(``DRAW_SAMPLE``), audited (``sample.draw`` / ``sample.grow``) in the same transaction. A
sample only grows by appending units (those sampled, and their labels, stay valid); a
sampled unit is never rewritten. A unit skipped or judged "can't judge" in the sample's
queue is a **non-response** (:func:`record_nonresponse`, append-only): not a label, the unit
stays unknown and the estimate takes it at its worst case."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Literal

import sqlite_utils

from evalcore.access.identity import normalise_user_id
from evalcore.access.roles import Permission
from evalcore.contract.frozen import FrozenModel
from evalcore.contract.limits import clipped
from evalcore.io.clock import utc_now_iso
from evalcore.store.audit import record_audit
from evalcore.store.lookup import column, exists, models, not_found
from evalcore.store.studies import get_study
from evalcore.store.study_handle import Study, open_study
from evalcore.store.transaction import write_transaction

#: The longest sample name.
MAX_NAME = 100
NonResponseKind = Literal["skip", "cant_judge"]
NONRESPONSE_KINDS: tuple[NonResponseKind, ...] = ("skip", "cant_judge")


class SampleNotFoundError(LookupError):
    """No sample of that name in the study."""


class SampledUnit(FrozenModel):
    """One sampled unit, at its place in the sample's order."""

    position: int
    query_id: str
    unit_id: str
    stratum: int
    #: The draw (sampled query) it came with, from 1.
    draw: int


class StoredSample(FrozenModel):
    """A sample as the store holds it; ``design_json`` is the design as drawn and grown."""

    study_id: str
    name: str
    run_a: str
    run_b: str
    measures: list[str]
    seed: int
    size: int
    draws: int
    design_json: str
    created_at: str
    created_by: str
    grown_at: str | None
    n_units: int


class NonResponse(FrozenModel):
    """A skip or "can't judge" on a sampled unit."""

    query_id: str
    unit_id: str
    kind: NonResponseKind
    annotator: str
    created_at: str


def check_sample_name(name: str) -> str:
    """``name`` stripped, or ValueError saying what a sample name may be."""
    cleaned = name.strip()
    if not cleaned or len(cleaned) > MAX_NAME or any(c in cleaned for c in "\n\r\t"):
        raise ValueError(
            f"sample name {clipped(name)!r} is not usable: give 1 to {MAX_NAME} characters "
            "on one line (e.g. --name s1)"
        )
    return cleaned


_COLUMNS = (
    "s.study_id, s.name, s.run_a, s.run_b, s.measures_json, s.seed, s.size, s.draws, "
    "s.design_json, s.created_at, s.created_by, s.grown_at, "
    "(SELECT count(*) FROM sample_units u WHERE u.study_id = s.study_id AND u.name = s.name)"
)


def _samples(study: Study, where: str = "", params: Sequence[str] = ()) -> list[StoredSample]:
    """The study's samples (``where``: a further condition on ``s``), oldest first."""
    rows = study.db.execute(f"SELECT {_COLUMNS} FROM samples s WHERE s.study_id = ?{where} "
                            "ORDER BY s.created_at, s.name", [study.study_id, *params])
    return models(StoredSample, [(*r[:4], json.loads(r[4]), *r[5:]) for r in rows])


def sample_names(study: Study) -> list[str]:
    """The study's sample names, oldest first."""
    return column(study.db, "SELECT name FROM samples WHERE study_id = ? ORDER BY created_at, name",
                  [study.study_id])


def list_samples(study: Study) -> list[StoredSample]:
    """The study's samples, oldest first."""
    return _samples(study)


def get_sample(study: Study, name: str) -> StoredSample:
    """The sample, or :class:`SampleNotFoundError` listing the study's samples."""
    found = _samples(study, " AND s.name = ?", [name])
    if not found:
        raise not_found(SampleNotFoundError, f"no sample {name!r} in study {study.study_id!r}",
                        sample_names(study), listing="samples", none_yet="no sample drawn yet",
                        advice="; draw one with: evalcore sample draw")
    return found[0]


def sample_units(study: Study, name: str) -> list[SampledUnit]:
    """The sample's units in the order annotators take them (SampleNotFoundError lists the
    study's samples)."""
    get_sample(study, name)
    return models(SampledUnit, study.db.execute(
        "SELECT position, query_id, unit_id, stratum, draw FROM sample_units "
        "WHERE study_id = ? AND name = ? ORDER BY position", [study.study_id, name]))


def _insert_units(
    db: sqlite_utils.Database,
    study_id: str,
    name: str,
    start: int,
    units: Sequence[tuple[str, str, int, int]],
) -> None:
    db.conn.executemany(
        "INSERT INTO sample_units (study_id, name, position, query_id, unit_id, stratum, draw) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        [(study_id, name, start + i, q, u, h, d) for i, (q, u, h, d) in enumerate(units)],
    )


def create_sample(
    db: sqlite_utils.Database,
    *,
    study_id: str,
    name: str,
    run_a: str,
    run_b: str,
    measures: Sequence[str],
    seed: int,
    size: int,
    draws: int,
    design_json: str,
    units: Sequence[tuple[str, str, int, int]],
    actor: str | None,
) -> StoredSample:
    """Store a drawn sample (lead only in team mode): ``units`` are ``(query_id, unit_id,
    stratum, draw)`` in order. ValueError when the name is taken (grow it instead) or not
    usable; nothing is written then."""
    name = check_sample_name(name)
    get_study(db, study_id)
    with write_transaction(db):
        study = open_study(db, study_id, actor, Permission.DRAW_SAMPLE)
        if exists(db, "SELECT 1 FROM samples WHERE study_id = ? AND name = ?", [study_id, name]):
            raise ValueError(
                f"study {study_id!r} has a sample {name!r} already; grow it with: evalcore "
                f"sample grow --name {name} --size N, or choose another --name"
            )
        drawn = {"name": name, "runs": [run_a, run_b], "measures": list(measures),
                 "seed": seed, "size": size, "draws": draws}
        db.execute(
            "INSERT INTO samples (study_id, name, run_a, run_b, measures_json, seed, size, "
            "draws, design_json, created_at, created_by) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, "
            "?, ?)",
            [study_id, name, run_a, run_b, json.dumps(drawn["measures"]), seed, size, draws,
             design_json, utc_now_iso(), actor or "local"],
        )
        _insert_units(db, study_id, name, 1, units)
        record_audit(db, actor, "sample.draw", study_id=study_id, detail={**drawn, "units": len(units)})
    return get_sample(study, name)


def grow_sample(
    db: sqlite_utils.Database,
    *,
    study_id: str,
    name: str,
    size: int,
    draws: int,
    design_json: str,
    units: Sequence[tuple[str, str, int, int]],
    actor: str | None,
) -> StoredSample:
    """Grow a stored sample (lead only in team mode): ``units`` is the grown sample's whole
    order, whose head must be the units stored already (they and their labels stay); the
    rest is appended. ValueError when it would shrink or reorder the sample."""
    get_study(db, study_id)
    with write_transaction(db):
        study = open_study(db, study_id, actor, Permission.DRAW_SAMPLE)
        before = get_sample(study, name)
        stored = [(u.query_id, u.unit_id, u.stratum, u.draw) for u in sample_units(study, name)]
        if size < before.size or draws < before.draws or list(units[: len(stored)]) != stored:
            raise ValueError(
                f"sample {name!r} has size {before.size}; a sample only grows, keeping its "
                f"units in their order: ask for a size of {before.size} or more"
            )
        added = list(units[len(stored) :])
        _insert_units(db, study_id, name, len(stored) + 1, added)
        db.execute(
            "UPDATE samples SET size = ?, draws = ?, design_json = ?, grown_at = ? "
            "WHERE study_id = ? AND name = ?",
            [size, draws, design_json, utc_now_iso(), study_id, name],
        )
        grown = {"name": name, "size": size, "draws": draws, "units_added": len(added),
                 "size_before": before.size}
        record_audit(db, actor, "sample.grow", study_id=study_id, detail=grown)
    return get_sample(study, name)


def record_nonresponse(
    db: sqlite_utils.Database,
    *,
    study_id: str,
    name: str,
    query_id: str,
    unit_id: str,
    kind: NonResponseKind,
    annotator: str,
) -> NonResponse:
    """Record that ``annotator`` skipped (``skip``) or could not judge (``cant_judge``) a
    sampled unit (anyone who may label). ValueError for another kind, an empty annotator
    or a unit not in the sample; LookupError for an unknown sample."""
    if kind not in NONRESPONSE_KINDS:
        raise ValueError(
            f"non-response kind {kind!r}: choose one of {', '.join(NONRESPONSE_KINDS)}"
        )
    if not annotator.strip():
        raise ValueError("annotator is required: say who skipped the unit")
    who = normalise_user_id(annotator)
    get_study(db, study_id)
    with write_transaction(db):
        get_sample(open_study(db, study_id, annotator, Permission.LABEL), name)
        if not exists(
            db, "SELECT 1 FROM sample_units WHERE study_id = ? AND name = ? AND query_id = ? "
            "AND unit_id = ?",
            [study_id, name, query_id, unit_id],
        ):
            raise ValueError(
                f"unit {unit_id!r} of query {query_id!r} is not in sample {name!r}; "
                "only a sampled unit can be skipped in a sample's queue"
            )
        at = utc_now_iso()
        db.execute(
            "INSERT INTO sample_nonresponses (study_id, name, query_id, unit_id, kind, "
            "annotator, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [study_id, name, query_id, unit_id, kind, who, at],
        )
    return NonResponse(query_id=query_id, unit_id=unit_id, kind=kind, annotator=who, created_at=at)


def nonresponses(study: Study, name: str) -> list[NonResponse]:
    """The sample's non-responses, oldest first."""
    return models(NonResponse, study.db.execute(
        "SELECT query_id, unit_id, kind, annotator, created_at FROM sample_nonresponses "
        "WHERE study_id = ? AND name = ? ORDER BY response_id", [study.study_id, name]))


def units_labeled_since(study: Study, name: str) -> set[tuple[str, str]]:
    """The sampled units with a label event written since the sample was drawn (a unit
    answered in the queue but left in conflict is then a non-response)."""
    return {
        (r[0], r[1])
        for r in study.db.execute(
            "SELECT DISTINCT u.query_id, u.unit_id FROM sample_units u "
            "JOIN samples s ON s.study_id = u.study_id AND s.name = u.name "
            "JOIN label_events e ON e.study_id = u.study_id AND e.query_id = u.query_id "
            "AND e.unit_id = u.unit_id AND e.created_at >= s.created_at "
            "WHERE u.study_id = ? AND u.name = ?",
            [study.study_id, name],
        )
    }
