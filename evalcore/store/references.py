"""Frozen reference versions: a named, hashed, immutable snapshot of the evidence.

Freezing copies a study's working reference (the resolved labels, units in conflict
**excluded**: they count as unlabeled, and every query's completeness) into
``reference_labels`` / ``reference_completeness``. A version name is never reused, its rows
are never updated or deleted, and once sealed no row can be added (triggers refuse all
three), so a report pinned to ``v1`` means the same evidence forever; its content hash
(``sha256:`` over canonical JSON of labels and completeness) lets anyone verify that."""

import hashlib
import json

import sqlite_utils

from evalcore.access.roles import Permission
from evalcore.contract.frozen import FrozenModel
from evalcore.contract.limits import MAX_NAME_CHARS, require_fits
from evalcore.io.clock import utc_now_iso
from evalcore.store.audit import record_audit
from evalcore.store.authorize import require_known_study
from evalcore.store.completeness import completeness_states
from evalcore.store.lookup import exists, models, not_found
from evalcore.store.resolution import resolved_gains
from evalcore.store.study_handle import Study, open_study
from evalcore.store.transaction import write_transaction


class ReferenceVersion(FrozenModel):

    study_id: str
    name: str
    created_at: str
    created_by: str
    content_hash: str
    n_queries: int
    n_labels: int
    n_complete: int


class ReferenceNotFoundError(LookupError):
    """The named reference version is not in this study."""


class ReferenceExistsError(ValueError):
    """A reference version of that name already exists (names are never reused)."""


def reference_hash(labels: dict[str, dict[str, int]], complete: dict[str, bool]) -> str:
    """``sha256:<hex>`` of the canonical JSON of the labels and completeness."""
    canonical = {
        "labels": sorted([q, u, g] for q, units in labels.items() for u, g in units.items()),
        "complete": sorted([q, bool(c)] for q, c in complete.items()),
    }
    text = json.dumps(canonical, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def freeze_reference(
    db: sqlite_utils.Database, *, study_id: str, name: str, actor: str
) -> ReferenceVersion:
    """Snapshot the working reference of the study under ``name``."""
    if not isinstance(name, str) or not name.strip():
        raise ValueError("a reference version needs a non-empty name (e.g. 'v1')")
    require_fits(name, MAX_NAME_CHARS, "a reference version name", "choose a shorter one")
    if not isinstance(actor, str) or not actor.strip():
        raise ValueError("actor is required: say who freezes this reference")
    require_known_study(db, actor, study_id)
    with write_transaction(db):
        study = open_study(db, study_id, actor, Permission.FREEZE_REFERENCE)
        if exists(
            db, "SELECT 1 FROM reference_versions WHERE study_id = ? AND name = ?", [study_id, name]
        ):
            raise ReferenceExistsError(
                f"reference version {name!r} already exists in study {study_id!r}; "
                "names are never reused: choose a new name"
            )
        labels = resolved_gains(study)
        complete = completeness_states(study)
        for query_id in labels:
            complete.setdefault(query_id, False)
        digest = reference_hash(labels, complete)
        created = utc_now_iso()
        db.execute(
            "INSERT INTO reference_versions (study_id, name, created_at, created_by, content_hash) "
            "VALUES (?, ?, ?, ?, ?)",
            [study_id, name, created, actor, digest],
        )
        db.conn.executemany(
            "INSERT INTO reference_labels (study_id, version, query_id, unit_id, gain) "
            "VALUES (?, ?, ?, ?, ?)",
            (
                (study_id, name, q, u, g)
                for q, units in sorted(labels.items())
                for u, g in sorted(units.items())
            ),
        )
        db.conn.executemany(
            "INSERT INTO reference_completeness (study_id, version, query_id, population_complete) "
            "VALUES (?, ?, ?, ?)",
            ((study_id, name, q, int(c)) for q, c in sorted(complete.items())),
        )
        # Sealed: from here on no row can be added to this version.
        db.execute(
            "INSERT INTO reference_seals (study_id, name, sealed_at) VALUES (?, ?, ?)",
            [study_id, name, created],
        )
        version = ReferenceVersion(
            study_id=study_id, name=name, created_at=created, created_by=actor,
            content_hash=digest, n_queries=len(complete),
            n_labels=sum(len(u) for u in labels.values()),
            n_complete=sum(1 for c in complete.values() if c))
        frozen = version.model_dump(exclude={"study_id", "created_at", "created_by"})
        record_audit(db, actor, "reference.freeze", study_id=study_id, detail=frozen)
    return version


_VERSIONS = (
    "SELECT v.study_id, v.name, v.created_at, v.created_by, v.content_hash, "
    "(SELECT count(*) FROM reference_completeness c WHERE c.study_id = v.study_id "
    "AND c.version = v.name), "
    "(SELECT count(*) FROM reference_labels l WHERE l.study_id = v.study_id "
    "AND l.version = v.name), "
    "(SELECT coalesce(sum(population_complete), 0) FROM reference_completeness c "
    "WHERE c.study_id = v.study_id AND c.version = v.name) FROM reference_versions v"
)


def _versions(db: sqlite_utils.Database, where: str, params: list[str]) -> list[ReferenceVersion]:
    return models(ReferenceVersion, db.execute(
        f"{_VERSIONS} WHERE {where} ORDER BY v.created_at, v.name", params))


def list_references(study: Study) -> list[ReferenceVersion]:
    """The study's frozen versions."""
    return _versions(study.db, "v.study_id = ?", [study.study_id])


def get_reference(study: Study, name: str) -> ReferenceVersion:
    """The frozen version ``name``."""
    found = _versions(study.db, "v.study_id = ? AND v.name = ?", [study.study_id, name])
    if not found:
        raise not_found(
            ReferenceNotFoundError,
            f"no reference version {name!r} in study {study.study_id!r}",
            [version.name for version in list_references(study)],
            listing="frozen versions",
            none_yet="none is frozen yet",
        )
    return found[0]


def reference_labels(study: Study, name: str) -> dict[str, dict[str, int]]:
    """query_id -> unit_id -> gain of the frozen version."""
    get_reference(study, name)
    return _labels(study.db, study.study_id, name)


def reference_completeness(study: Study, name: str) -> dict[str, bool]:
    """query_id -> population complete, as frozen."""
    get_reference(study, name)
    return _completeness(study.db, study.study_id, name)


def verify_reference(study: Study, name: str) -> bool:
    """Whether the stored rows still hash to the recorded content hash."""
    return _intact(study.db, study.study_id, get_reference(study, name))


def altered_references(db: sqlite_utils.Database) -> list[tuple[str, str]]:
    """``(study_id, name)`` of every frozen version of the store whose rows no longer hash to
    its recorded content hash (a check of the store file: no study's data is returned)."""
    return sorted((v.study_id, v.name) for v in _versions(db, "1 = 1", [])
                  if not _intact(db, v.study_id, v))


def _intact(db: sqlite_utils.Database, study_id: str, version: ReferenceVersion) -> bool:
    digest = reference_hash(
        _labels(db, study_id, version.name), _completeness(db, study_id, version.name)
    )
    return digest == version.content_hash


def _labels(db: sqlite_utils.Database, study_id: str, name: str) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for q, u, g in db.execute(
        "SELECT query_id, unit_id, gain FROM reference_labels WHERE study_id = ? AND version = ? "
        "ORDER BY query_id, unit_id",
        [study_id, name],
    ):
        out.setdefault(q, {})[u] = g
    return out


def _completeness(db: sqlite_utils.Database, study_id: str, name: str) -> dict[str, bool]:
    return {
        q: bool(c)
        for q, c in db.execute(
            "SELECT query_id, population_complete FROM reference_completeness "
            "WHERE study_id = ? AND version = ? ORDER BY query_id",
            [study_id, name],
        )
    }
