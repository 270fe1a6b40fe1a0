"""A whole study out of one store and into another: ``evalcore export study`` / ``import study``.

The archive format is :mod:`evalcore.io.study_archive`. **Export** (lead only) reads the
study in one read snapshot; documents the exporter may not read are left out with
everything derived from them (:mod:`evalcore.store.export_redaction`), and the archive is
signed with the organisation's key when given.

**Import** restores the archive as history, never as updates (same annotators, times,
notes; frozen references and reports keep their hashes; the importer vouches for them and
becomes the study's lead), under the store's rules for organisations, corpora and people.
It never blocks annotators: (1) one short transaction creates the study, after every
check, staged (invisible, :mod:`evalcore.store.staged_studies`); (2) new documents (a
pending import) and each run's results (a staged run) are written in chunks; (3) the
history is appended in paced short transactions, then one small transaction restores the
members and publishes everything at once. A failure removes what was written; an import
whose process died is removed by the next ``open_store``: all or nothing.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import partial
from itertools import groupby, islice
from pathlib import Path
from typing import Any

import sqlite_utils
from pydantic import BaseModel

from evalcore.access.decisions import named_user
from evalcore.access.organisations import OrgPermission, require_org_role
from evalcore.access.roles import Permission
from evalcore.contract.limits import DEFAULT_LIMITS, ReadLimits
from evalcore.contract.measures import UnknownMeasure
from evalcore.contract.version import __version__
from evalcore.io.atomic import atomic_path
from evalcore.io.clock import utc_now_iso
from evalcore.io.errors import InputError, InputErrors
from evalcore.io.progress import reporter
from evalcore.io.study_archive import (
    DOCUMENTS_POLICY,
    FORMAT,
    FORMAT_VERSION,
    MEMBERS,
    Manifest,
    OpenedArchive,
    open_archive,
    spec_table,
    write_member,
    write_zip,
)
from evalcore.store import dialect, document_imports, membership, staging
from evalcore.store.audit import record_audit
from evalcore.store.authorize import (
    authorize,
    authorize_corpus_write,
    authorize_organisation_entry,
    require_known_study,
)
from evalcore.store.corpora import corpus_registered
from evalcore.store.corpus import upsert_document_rows
from evalcore.store.export_redaction import ExportRedaction, score_column
from evalcore.store.exports import export_file_mode
from evalcore.store.hashing import content_hash
from evalcore.store.members import GRANT_STUDY_ROLE
from evalcore.store.references import reference_hash
from evalcore.store.removed_queries import removals_in_audit
from evalcore.store.reports import body_hash
from evalcore.store.runs import write_run_results
from evalcore.store.schema import SCHEMA_VERSION
from evalcore.store.staged_studies import discard_staged_study, forget_created, record_created
from evalcore.store.studies import StudyIn, study_exists
from evalcore.store.study_measures import parse_measure_list
from evalcore.store.study_setup import create_study
from evalcore.store.transaction import read_snapshot, write_transaction

#: Rows of the first chunk of each paced write of an import (documents, results, history).
CHUNK_ROWS = 2_000

_LIVE_RUNS = "SELECT run_id FROM runs WHERE study_id = :study AND staged_by IS NULL"

#: Member -> (the table it holds rows of, their order in the archive): the members whose
#: columns are their table's (a ``sample`` column is the table's ``name``).
_TABLES: dict[str, tuple[str, str]] = {
    "queries.jsonl": ("queries", "query_id"),
    "label_events.jsonl": ("label_events", "event_id"),
    "completeness_events.jsonl": ("completeness_events", "event_id"),
    "reference_labels.jsonl": ("reference_labels", "version, query_id, unit_id"),
    "reference_completeness.jsonl": ("reference_completeness", "version, query_id"),
    "protocols.jsonl": ("protocols", "pinned_at, name"),
    "protocol_documents.jsonl": ("protocol_documents", "protocol, doc_id"),
    "retrieval_refusals.jsonl": ("retrieval_refusals", "refusal_id"),
    "reports.jsonl": ("reports", "report_id"),
    "members.jsonl": ("study_members", "user_id"),
    "samples.jsonl": ("samples", "created_at, name"),
    "sample_units.jsonl": ("sample_units", "name, position"),
    "sample_nonresponses.jsonl": ("sample_nonresponses", "response_id"),
    "audit.jsonl": ("audit_log", "entry_id"),
}


def _columns(member: str) -> str:
    """The table columns of a member of :data:`_TABLES`, in the member's order."""
    return ", ".join("name" if c.name == "sample" else c.name for c in MEMBERS[member])


#: The study's published automatic imports, numbered from 1 in the order they were made.
_IMPORTS = (
    "SELECT import_id, ROW_NUMBER() OVER (ORDER BY import_id) AS number, source, file, format, "
    "imported_by, imported_at FROM automatic_imports WHERE study_id = :study AND staged_by IS NULL"
)

#: Member -> the SELECT of its rows in archive order (named parameter ``:study``): from its
#: table for a member of :data:`_TABLES`, else as below (``{score}``: the score column, by the
#: exporter's redaction; ``{imports}``: :data:`_IMPORTS`).
_SELECTS: dict[str, str] = {
    member: f"SELECT {_columns(member)} FROM {table} WHERE study_id = :study ORDER BY {order}"
    for member, (table, order) in _TABLES.items()
} | {member: sql.replace("{imports}", _IMPORTS) for member, sql in spec_table("""
study.jsonl: SELECT s.name, s.corpus_id, s.retrieval_unit, s.relevance_threshold, s.gain, s.org_id,
    s.created_at, o.name, c.owner_org, s.measures FROM studies s LEFT JOIN organisations o
    ON o.org_id = s.org_id LEFT JOIN corpora c ON c.corpus_id = s.corpus_id
    WHERE s.study_id = :study
runs.jsonl: SELECT name, source, protocol_json, corpus_fingerprint, k, scan_complete, created_at
    FROM runs WHERE study_id = :study AND staged_by IS NULL ORDER BY run_id
results.jsonl: SELECT r.name, x.query_id, x.rank, x.unit_id, {score} FROM results x
    JOIN runs r ON r.run_id = x.run_id WHERE r.study_id = :study AND r.staged_by IS NULL
    ORDER BY r.run_id, x.query_id, x.rank
references.jsonl: SELECT v.name, v.created_at, v.created_by, v.content_hash, s.sealed_at
    FROM reference_versions v LEFT JOIN reference_seals s ON s.study_id = v.study_id
    AND s.name = v.name WHERE v.study_id = :study ORDER BY v.created_at, v.name
users.jsonl: SELECT u.user_id, u.display_name, u.created_at FROM users u WHERE u.user_id
    IN (SELECT user_id FROM study_members WHERE study_id = :study) ORDER BY u.user_id
organisation_members.jsonl: SELECT o.user_id, o.granted_by, o.granted_at, o.role
    FROM user_organisations o JOIN studies s ON s.org_id = o.org_id WHERE s.study_id = :study
    AND o.user_id IN (SELECT user_id FROM study_members WHERE study_id = :study)
    ORDER BY o.user_id
automatic_imports.jsonl: SELECT number, source, file, format, imported_by, imported_at
    FROM ({imports}) ORDER BY number
automatic_labels.jsonl: SELECT n.number, l.query_id, l.unit_id, l.gain FROM automatic_labels l
    JOIN ({imports}) n ON n.import_id = l.import_id ORDER BY n.number, l.query_id, l.unit_id
""").items()}

#: The study's history as appended by an import (members, and the tables it derives from them
#: in :meth:`_Import.append_history`), in an order the tables' rules accept: a reference's
#: seal after its rows (nothing can be added to a sealed version).
_HISTORY = (
    "queries.jsonl label_events.jsonl completeness_events.jsonl reference_versions "
    "reference_labels.jsonl reference_completeness.jsonl reference_seals protocols.jsonl "
    "protocol_documents.jsonl retrieval_refusals.jsonl reports.jsonl samples.jsonl "
    "sample_units.jsonl sample_nonresponses.jsonl audit.jsonl removed_queries"
).split()

_USED_DOCUMENTS = (
    f"{document_imports.published('d')} AND d.corpus_id = :corpus AND d.doc_id IN ("
    f"SELECT unit_id FROM results WHERE run_id IN ({_LIVE_RUNS}) "
    "UNION SELECT unit_id FROM label_events WHERE study_id = :study "
    "UNION SELECT unit_id FROM reference_labels WHERE study_id = :study "
    "UNION SELECT doc_id FROM protocol_documents WHERE study_id = :study)"
)


class ArchiveSummary(BaseModel):
    """What an export wrote or an import restored."""

    study_id: str
    bytes: int = 0
    rows: dict[str, int]
    documents_withheld: int = 0
    #: Members from which the export left out what the exporter may not read.
    withheld: list[str] = []
    #: Export: signed with a key (an import's archive tells its origin: ``OpenedArchive.origin``).
    signed: bool = False
    seconds: float = 0.0


# --- export -----------------------------------------------------------------------------------


def export_study(db: sqlite_utils.Database, study_id: str, out: str | Path, *,
                 actor: str | None, signing_key: bytes | None = None) -> ArchiveSummary:
    """Write the whole study to the new archive ``out`` (see the module docstring), signed
    with ``signing_key`` when given (:func:`evalcore.io.study_archive.load_signing_key`).

    ``actor`` must be a lead of a team-mode study (PermissionDenied otherwise,
    nothing is written); an existing ``out`` is never overwritten. Nothing derived
    from a document ``actor`` may not read is written
    (:mod:`evalcore.store.export_redaction`); the manifest names the members that
    left something out (``withheld``).
    """
    started, out = time.monotonic(), Path(out)
    require_known_study(db, actor, study_id)
    authorize(db, study_id=study_id, actor=actor, permission=Permission.EXPORT_STUDY)
    if out.exists() or out.is_symlink():
        raise FileExistsError(17, "already exists; choose a new file name (an export never "
                                  "overwrites a file)", str(out))
    with tempfile.TemporaryDirectory(prefix="study-export-") as tmp, read_snapshot(db):
        reporter().stage(f"exporting study {study_id}", None, "rows")
        (corpus,) = db.execute("SELECT corpus_id FROM studies WHERE study_id = ?",
                               [study_id]).fetchone()
        redaction = ExportRedaction(db, actor, study_id, corpus)
        readable, params = redaction.readable, redaction.params
        #: The members whose SELECT the exporter's redaction shapes.
        selects = _SELECTS | {
            "documents.jsonl": "SELECT d.doc_id, d.title, d.text, d.owner_org, d.created_at, "
                               f"d.content_hash FROM documents d WHERE {_USED_DOCUMENTS} "
                               f"AND {readable.where} ORDER BY d.doc_id",
            "protocol_documents.jsonl": redaction.protocol_documents_sql,
            "results.jsonl": _SELECTS["results.jsonl"].replace("{score}", score_column(readable)),
        }
        entries = {member: write_member(Path(tmp), member, (
            redaction.row(member, row) for row in db.execute(selects[member], params)))
            for member in MEMBERS}
        used = db.execute(f"SELECT count(*) FROM documents d WHERE {_USED_DOCUMENTS}",
                          params).fetchone()[0]
        withheld = used - entries["documents.jsonl"].rows
        if withheld:
            redaction.withheld.add("documents.jsonl")
        manifest = Manifest(
            format=FORMAT, format_version=FORMAT_VERSION, schema_version=SCHEMA_VERSION,
            evalcore_version=__version__, study_id=study_id, exported_at=utc_now_iso(),
            exported_by=named_user(actor), documents=DOCUMENTS_POLICY, members=entries,
            withheld=sorted(redaction.withheld))
        with atomic_path(out, mode=export_file_mode(db)) as target:
            write_zip(Path(tmp), manifest, target, signing_key=signing_key)
    return ArchiveSummary(study_id=study_id, bytes=out.stat().st_size,
                          rows={m: e.rows for m, e in entries.items()},
                          documents_withheld=withheld, withheld=manifest.withheld,
                          signed=signing_key is not None,
                          seconds=round(time.monotonic() - started, 2))


# --- import -----------------------------------------------------------------------------------


def read_archive(path: str | Path, workdir: Path, *, signing_key: bytes | None = None,
                 accept_unsigned: bool = False,
                 limits: ReadLimits = DEFAULT_LIMITS) -> OpenedArchive:
    """Unpack and check the archive (every hostile case is an InputErrors, nothing written):
    its signature with ``signing_key`` when given, which refuses an unsigned archive unless
    ``accept_unsigned`` (:func:`evalcore.io.study_archive.open_archive`); ``limits`` bound
    what it unpacks to and each row."""
    archive = open_archive(Path(path), workdir, known_schema=SCHEMA_VERSION,
                           signing_key=signing_key, accept_unsigned=accept_unsigned,
                           limits=limits)
    _check_consistency(archive)
    return archive


_ALTERED = "(altered after export)"


def _check_consistency(archive: OpenedArchive) -> None:
    """What the members must agree on: hashes recomputed, names that refer to each other."""
    problems: list[InputError] = []

    def problem(member: str, line: int, message: str) -> None:
        if len(problems) < 200:
            problems.append(InputError(file=f"{archive.name}:{member}", line=line or None,
                                       message=message))

    def unique(member: str, key: str) -> set[str]:
        """The ``key`` values of ``member``'s rows (as text); a problem for each repeated one."""
        seen: set[str] = set()
        for n, row in enumerate(archive.rows(member), 1):
            if str(row[key]) in seen:
                problem(member, n, f"{key} {row[key]!r} appears twice")
            seen.add(str(row[key]))
        return seen

    def unknown(member: str, column: str, known: set[str], message: str) -> None:
        """The first row of ``member`` whose ``column`` names none of ``known``."""
        for n, row in enumerate(archive.rows(member), 1):
            if str(row[column]) not in known:
                problem(member, n, message.format(row[column]))
                return

    docs: set[str] = set()
    for n, row in enumerate(archive.rows("documents.jsonl"), 1):
        doc = row["doc_id"]
        if doc in docs:
            problem("documents.jsonl", n, f"document {doc!r} appears twice")
        docs.add(doc)
        if content_hash(row["title"], row["text"]) != row["content_hash"]:
            what = f"document {doc!r}: its title and text do not hash to its content_hash"
            problem("documents.jsonl", n, f"{what} {_ALTERED}")
    runs = unique("runs.jsonl", "name")
    unknown("results.jsonl", "run", runs, "result of run {!r}, which runs.jsonl lacks")
    versions = {r["name"]: r["content_hash"] for r in archive.rows("references.jsonl")}
    labels: dict[str, dict[str, dict[str, int]]] = {v: {} for v in versions}
    complete: dict[str, dict[str, bool]] = {v: {} for v in versions}
    for member in ("reference_labels.jsonl", "reference_completeness.jsonl"):
        for n, row in enumerate(archive.rows(member), 1):
            version = row["version"]
            if version not in versions:
                problem(member, n, f"row of reference {version!r}, which references.jsonl lacks")
            elif member == "reference_labels.jsonl":
                labels[version].setdefault(row["query_id"], {})[row["unit_id"]] = row["gain"]
            else:
                complete[version][row["query_id"]] = bool(row["population_complete"])
    for version, digest in versions.items():
        if reference_hash(labels[version], complete[version]) != digest:
            what = f"reference {version!r}: its rows do not hash to its content hash {digest}"
            problem("references.jsonl", 0, f"{what} {_ALTERED}")
    samples = unique("samples.jsonl", "name")
    for member in ("sample_units.jsonl", "sample_nonresponses.jsonl"):
        unknown(member, "sample", samples, "row of sample {!r}, which samples.jsonl lacks")
    imports = unique("automatic_imports.jsonl", "number")
    unknown("automatic_labels.jsonl", "import", imports, "automatic label of import {}, which "
            "automatic_imports.jsonl lacks (no import row has that number)")
    protocols = unique("protocols.jsonl", "name")
    unknown("protocol_documents.jsonl", "protocol", protocols,
            "document of protocol {!r}, which protocols.jsonl lacks")
    unique("reports.jsonl", "name")
    for n, row in enumerate(archive.rows("reports.jsonl"), 1):
        if body_hash(row["body_json"]) != row["content_hash"]:
            what = f"report {row['name']!r}: its body does not hash to its content hash"
            problem("reports.jsonl", n, f"{what} {_ALTERED}")
    unique("members.jsonl", "user_id")
    if problems:
        raise InputErrors(problems)


def import_study(db: sqlite_utils.Database, archive: OpenedArchive, *, actor: str | None,
                 study_id: str | None = None) -> ArchiveSummary:
    """Restore the checked ``archive`` (:func:`read_archive`) as study ``study_id`` (default:
    the archive's id); see the module docstring. ``actor`` becomes its lead."""
    started = time.monotonic()
    importer = named_user(actor)
    if not importer:
        raise ValueError("name who imports the study (--actor): they become its lead")
    target = study_id or archive.manifest.study_id
    settings = next(archive.rows("study.jsonl"))
    study = StudyIn(study_id=target, **{f: settings[f] for f in StudyIn.model_fields
                                        if f != "study_id"})
    try:  # the study's chosen measures ('' or absent: the default set), parsed before writing
        if settings.get("measures"):
            chosen = parse_measure_list(settings["measures"])
            settings["measures"] = ",".join(m.canonical for m in chosen)
    except (UnknownMeasure, ValueError) as error:
        raise InputErrors.one(f"{archive.name}:study.jsonl", f"the study's measures do not parse: {error}",
                      "export the study again with this version") from None
    if study_exists(db, target):
        raise InputErrors.one(archive.name, f"study {target!r} already exists in this store; nothing was "
                               "written", "import it under another id with --as NEW_ID")
    job = _Import(db, archive, study, settings, importer)
    listed = archive.manifest.members  # a member an older format lacks: no rows
    rows = {m: listed[m].rows if m in listed else 0 for m in MEMBERS}
    reporter().stage(f"importing study {target}", sum(rows.values()), "rows")
    try:
        job.create()
        job.write_documents()
        job.stage_runs()
        job.append_history()
    except BaseException as exc:
        job.undo()
        if isinstance(exc, dialect.integrity_errors()):
            raise InputErrors.one(archive.name, f"the archive's rows break a rule of the store ({exc}); "
                                   "nothing was written", "export the study again") from None
        raise
    seconds = round(time.monotonic() - started, 2)
    return ArchiveSummary(study_id=target, rows=rows, withheld=archive.manifest.withheld,
                          seconds=seconds)


def _archive_row(archive: OpenedArchive, member: str, user: str) -> dict | None:
    """The row of ``member`` whose ``user_id`` is ``user``."""
    return next((r for r in archive.rows(member) if r["user_id"] == user), None)


_RECONCILE = "import into a store without that corpus, or reconcile the documents first"
_NEW_ORGANISATION = ("INSERT INTO organisations (org_id, name, created_by) VALUES (?, ?, ?) "
                     "ON CONFLICT DO NOTHING")
_NEW_RUN = ("INSERT INTO runs (study_id, name, source, protocol_json, corpus_fingerprint, k, "
            "scan_complete, created_at, staged_by) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)")
_NEW_USER = ("INSERT INTO users (user_id, display_name, created_at) VALUES (?, ?, ?) "
             "ON CONFLICT DO NOTHING")


def _paced(db: sqlite_utils.Database, rows: Iterable[tuple],
           write: Callable[[list[tuple]], object]) -> None:
    """``write`` each chunk of ``rows`` in paced short transactions (``staging.Pacer``)."""
    pacer = staging.Pacer(CHUNK_ROWS)
    rows = iter(rows)
    chunks = iter(lambda: list(islice(rows, pacer.rows)), [])
    staging.paced_writes(db, pacer, chunks, write, _advance)


def _advance(rows: int, _: object) -> None:
    reporter().advance(rows)


def _insert(db: sqlite_utils.Database, table: str, columns: str, rows: Iterable[tuple]) -> None:
    """Insert ``rows`` (values of ``columns``) into ``table`` of the staged study, paced."""
    sql = f"INSERT INTO {table} ({columns}) VALUES ({', '.join('?' * (columns.count(',') + 1))})"
    _paced(db, rows, partial(db.conn.executemany, sql))


def _append_automatic(db: sqlite_utils.Database, archive: OpenedArchive, study_id: str) -> None:
    """The archive's automatic imports (new store ids, published with the staged study that
    hides them until then) and their labels, each mapped from its import's number."""
    counts: dict[int, int] = {}
    for row in archive.rows("automatic_labels.jsonl"):
        counts[row["import"]] = counts.get(row["import"], 0) + 1
    ids: dict[int, int] = {}
    sql = ("INSERT INTO automatic_imports (study_id, source, file, format, imported_by, "
           "imported_at, n_labels) VALUES (?, ?, ?, ?, ?, ?, ?)")
    with write_transaction(db):
        for number, *values in _values(archive, "automatic_imports.jsonl"):
            ids[number] = db.execute(sql, [study_id, *values, counts.get(number, 0)]).lastrowid
    _insert(db, "automatic_labels", "import_id, query_id, unit_id, gain",
            ((ids[number], *r) for number, *r in _values(archive, "automatic_labels.jsonl")))


def _values(archive: OpenedArchive, member: str) -> Iterator[tuple]:
    """The rows of ``member`` as tuples, in its columns' order."""
    return (tuple(r.values()) for r in archive.rows(member))


@dataclass
class _Import:
    """One archive's import (see the module docstring), and what its steps 1-2 wrote, so a
    failure removes it (the staged study takes with it the rows its import created outside
    it: :func:`evalcore.store.staged_studies.record_created`)."""

    db: sqlite_utils.Database
    archive: OpenedArchive
    study: StudyIn
    settings: dict[str, Any]
    importer: str
    created: bool = False
    import_id: str | None = None
    runs: list[int] = field(default_factory=list)
    #: Organisations this import created (their members keep the archive's roles).
    new_orgs: list[str] = field(default_factory=list)

    def undo(self) -> None:
        for run_id in self.runs:
            staging.discard_staged_run(self.db, run_id)
        if self.import_id is not None:
            document_imports.discard_import(self.db, self.import_id)
        if self.created:
            discard_staged_study(self.db, self.study.study_id)

    def create(self) -> None:
        """Step 1: the study, with the importer as its only member (a lead), after every check."""
        db, archive, study, importer = self.db, self.archive, self.study, self.importer
        settings, s = self.settings, study.study_id
        owner = settings["corpus_owner"]
        owners = {r["owner_org"] for r in archive.rows("documents.jsonl")}
        org_rows: list[tuple[str, str]] = []
        with write_transaction(db):
            new_corpus = not corpus_registered(db, study.corpus_id)
            if owner not in (None, study.org_id) and new_corpus:
                what = f"register corpus {study.corpus_id!r} for organisation {owner!r}"
                authorize_organisation_entry(db, org_id=owner, study_id=s, actor=importer,
                                             what=what)
            # An organisation new to this store is created by the importer, its first member and
            # owner (as `create_organisation` does); an existing one is joined only by its rules.
            names = {study.org_id: settings["org_name"]}
            for org in dict.fromkeys((study.org_id, owner, *sorted(owners - {None}))):
                values = [org, names.get(org) or org, importer]
                if org is not None and db.execute(_NEW_ORGANISATION, values).rowcount:
                    self.new_orgs.append(org)
            create_study(db, study, actor=importer, created_at=settings["created_at"])
            self.created = True
            if settings.get("measures"):
                db.execute("UPDATE studies SET measures = ? WHERE study_id = ?",
                           [settings["measures"], s])
            if new_corpus:
                db.execute("UPDATE corpora SET owner_org = ?, created_at = ? WHERE corpus_id = ?",
                           [owner, settings["created_at"], study.corpus_id])
            user = _archive_row(archive, "users.jsonl", importer) or {
                "user_id": importer, "display_name": "", "created_at": utc_now_iso()}
            new_user = db.execute(_NEW_USER, list(user.values())).rowcount > 0
            db.execute("INSERT INTO study_members (study_id, user_id, role, granted_by, "
                       "granted_at) VALUES (?, ?, 'lead', ?, ?)",
                       [s, importer, importer, utc_now_iso()])
            for org in dict.fromkeys([study.org_id, *self.new_orgs]):
                if org is None or membership.in_organisation(db, importer, org):
                    continue
                if membership.organisation_claimed(db, org):  # joined only through its admins
                    require_org_role(org_id=org, user=importer, role=None, study_id=s,
                                     permission=OrgPermission.READ, what="import a study",
                                     granters=membership.organisation_admins(db, org))
                archived = org == study.org_id and _archive_row(
                    archive, "organisation_members.jsonl", importer)
                grant = archived or {"granted_by": importer, "granted_at": None}
                # an unclaimed organisation: its first member, the importer, is its owner
                membership.join_organisation(db, importer, org, grant["granted_by"],
                                  granted_at=grant["granted_at"])
                org_rows.append((importer, org))
            if study.org_id is not None:
                self._check_arrivals()
            for permission in (Permission.IMPORT, Permission.CREATE_RUN):
                authorize(db, study_id=s, actor=importer, permission=permission)
            authorize_corpus_write(db, corpus_id=study.corpus_id, actor=importer, owner_orgs=owners)
            record_created(db, study_id=s, actor=importer, organisations=self.new_orgs,
                           users=[importer] if new_user else [], memberships=org_rows,
                           corpus=study.corpus_id if new_corpus else None)
            # Invisible from here on (checked above, while it could still be read), until step 3.
            db.execute("UPDATE studies SET staged_by = ? WHERE study_id = ?", [staging.staging_owner(), s])

    def _check_arrivals(self) -> None:
        """The archive's members of the study's organisation are restored into it (step 3):
        people it does not hold yet are admitted only by one of its admins, never by an
        archive a member wrote."""
        db, archive, study, importer = self.db, self.archive, self.study, self.importer
        org = study.org_id
        assert org is not None
        listed = {r["user_id"] for r in archive.rows("organisation_members.jsonl")}
        arrivals = sorted(u for u in listed - {importer} if not membership.in_organisation(db, u, org))
        if arrivals:
            more = f" and {len(arrivals) - 5} more" if len(arrivals) > 5 else ""
            what = (f"import a study whose archive adds {len(arrivals)} people to it "
                    f"({', '.join(arrivals[:5])}{more})")
            require_org_role(org_id=org, user=importer, role=membership.organisation_role(db, importer, org),
                             permission=OrgPermission.ADD_MEMBERS, what=what,
                             granters=membership.organisation_admins(db, org), study_id=study.study_id)

    def write_documents(self) -> None:
        """Step 2a: documents new to the corpus; one already there must be the same document."""
        db, archive, study, importer = self.db, self.archive, self.study, self.importer
        corpus = study.corpus_id
        self.import_id = document_imports.begin_import(db, corpus)

        sql = ("SELECT doc_id, content_hash FROM documents WHERE corpus_id = ? AND doc_id IN "
               f"(SELECT value FROM json_each(?)) AND {document_imports.current()}")

        def write(chunk: list[tuple]) -> None:
            existing = dict(db.execute(sql, [corpus, json.dumps([r[1] for r in chunk])]).fetchall())
            changed = sorted(r[1] for r in chunk if r[1] in existing and existing[r[1]] != r[6])
            if changed:
                raise InputErrors.one(f"{archive.name}:documents.jsonl", f"{len(changed)} document(s) of corpus {corpus!r} differ "
                                       f"from this store's (first: {changed[:5]}); an import never "
                                       "changes a document other studies use; nothing was written",
                              _RECONCILE)
            new = [r for r in chunk if r[1] not in existing]
            if new:
                owner_orgs = {r[4] for r in new}
                authorize_corpus_write(db, corpus_id=corpus, actor=importer, owner_orgs=owner_orgs)
                upsert_document_rows(db, new, keep_owner=True, import_id=self.import_id)

        _paced(db, ((corpus, *r) for r in _values(archive, "documents.jsonl")), write)

    def stage_runs(self) -> None:
        """Step 2b: each run as a staged (invisible) run, its results in short transactions."""
        db, archive, study = self.db, self.archive, self.study
        run_ids: dict[str, int] = {}
        for run in archive.rows("runs.jsonl"):
            with write_transaction(db):  # the importer may create runs: checked in step 1
                values = [study.study_id, *run.values(), staging.staging_owner()]
                run_ids[run["name"]] = int(db.execute(_NEW_RUN, values).lastrowid)
            self.runs.append(run_ids[run["name"]])
        pacer = staging.Pacer(CHUNK_ROWS)
        for name, rows in groupby(archive.rows("results.jsonl"), key=lambda r: r["run"]):
            ranked = ((r["query_id"], r["rank"], r["unit_id"], r["score"]) for r in rows)
            write = partial(write_run_results, db, run_ids[name])
            staging.paced_writes(db, pacer, staging.whole_query_chunks(ranked, pacer), write, _advance)

    def append_history(self) -> None:
        """Step 3: the study's history appended to the staged study in short transactions, then
        one small transaction restores the members and publishes the study, its runs and its
        documents."""
        db, archive, study, importer = self.db, self.archive, self.study, self.importer
        s = study.study_id

        versions = list(_values(archive, "references.jsonl"))
        # table -> (its columns after study_id, rows): the tables no member holds as they are
        derived: dict[str, tuple[str, Iterable[tuple]]] = {
            "reference_versions": ("name, created_at, created_by, content_hash",
                                   (v[:4] for v in versions)),
            "reference_seals": ("name, sealed_at", ((v[0], v[4] or v[1]) for v in versions)),
            "removed_queries": ("query_id, removed_at, removed_by, reason",
                                removals_in_audit(archive.rows("audit.jsonl"))),
        }
        for name in _HISTORY:
            table, (columns, values) = (name, derived[name]) if name in derived else (
                _TABLES[name][0], (_columns(name), _values(archive, name)))
            _insert(db, table, f"study_id, {columns}", ((s, *r) for r in values))
        _append_automatic(db, archive, s)
        with write_transaction(db):
            forget_created(db, s)  # while the study is staged: its rows may still be deleted
            db.execute("UPDATE studies SET staged_by = NULL WHERE study_id = ?", [s])
            authorize(db, study_id=s, actor=importer, permission=Permission.IMPORT)
            self._restore_members()
            db.conn.executemany("UPDATE runs SET staged_by = NULL WHERE run_id = ?",
                                [(r,) for r in self.runs])
            if self.import_id is not None:
                document_imports.publish_import(db, self.import_id)
            manifest = archive.manifest
            detail = {"archive": archive.name, "source_study": manifest.study_id,
                      "exported_at": manifest.exported_at, "exported_by": manifest.exported_by,
                      "rows": {m: e.rows for m, e in manifest.members.items()},
                      "origin": archive.origin.model_dump(exclude={"note"}), "withheld": manifest.withheld}
            record_audit(db, actor=importer, action="study.import", study_id=s, detail=detail)

    def _restore_members(self) -> None:
        """The archive's members as they were; the importer stays a lead (their archive row is
        restored only if it made them a lead). Its organisation's members are restored too:
        with their roles into an organisation this import created, as members into an
        existing one (admitted by its admin: :func:`_check_arrivals`)."""
        db, archive, study, importer = self.db, self.archive, self.study, self.importer
        s = study.study_id
        db.conn.executemany(_NEW_USER, _values(archive, "users.jsonl"))
        for m in archive.rows("members.jsonl"):
            if m["user_id"] == importer and m["role"] != "lead":
                continue
            db.execute(GRANT_STUDY_ROLE, [s, *m.values()])
        if study.org_id is not None:
            created = study.org_id in self.new_orgs
            rows = _values(archive, "organisation_members.jsonl")
            db.conn.executemany(
                "INSERT INTO user_organisations (user_id, org_id, granted_by, granted_at, "
                "role) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                ((user, study.org_id, by, at, role if created else "member")
                 for user, by, at, role in rows))
