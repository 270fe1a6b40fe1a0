"""What every import shares: the summary, the unknown-id check, and writing label events.

Every importer parses and validates its whole input first (collecting every
error with file, line and field), then writes inside ONE ``write_transaction``:
an error at any point rolls everything back, so a failed import leaves the store
exactly as it was. Each successful import appends one audit entry.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from os import PathLike
from pathlib import Path

import sqlite_utils
from pydantic import BaseModel, Field

from evalcore.access.identity import normalise_user_id
from evalcore.access.roles import Permission
from evalcore.contract.limits import DEFAULT_LIMITS, MAX_ID_CHARS, ReadLimits, clipped, too_long
from evalcore.io.clock import utc_now_iso
from evalcore.io.errors import InputErrors
from evalcore.io.text_lines import SourceText, first_line_of, read_source
from evalcore.store.audit import record_audit
from evalcore.store.completeness import append_completeness_event, completeness_states
from evalcore.store.dialect import in_chunks
from evalcore.store.document_imports import published
from evalcore.store.lookup import exists
from evalcore.store.resolution import resolved_gains
from evalcore.store.study_handle import Study, open_study

#: How many unknown ids an error message lists.
SHOWN_UNKNOWN = 10

Source = str | PathLike[str] | SourceText


class ImportSummary(BaseModel):
    """What an import wrote (and what it noticed)."""

    kind: str
    study_id: str
    source: str
    rows: int = 0
    queries: int = 0
    documents: int = 0
    label_events: int = 0
    completeness_events: int = 0
    reopened: list[str] = Field(default_factory=list)
    run: str | None = None
    results: int = 0
    warnings: list[str] = Field(default_factory=list)
    #: How the input was read (decompressed, without a header, decimal gains read as integers).
    notes: list[str] = Field(default_factory=list)

    def lines(self) -> list[str]:
        """A human summary, one fact per line."""
        out = [f"imported {self.kind} from {self.source} into study {self.study_id}"]
        out.extend(f"  note: {n}" for n in self.notes)
        for name in ("rows", "queries", "documents", "label_events", "completeness_events",
                     "results"):
            value = getattr(self, name)
            if value:
                out.append(f"  {name.replace('_', ' ')}: {value}")
        if self.run:
            out.append(f"  run: {self.run}")
        if self.reopened:
            out.append(f"  reopened (new relevant labels): {', '.join(self.reopened)}")
        out.extend(f"  warning: {w}" for w in self.warnings)
        return out

    def count_documents(self, corpus_id: str, written: int, changed: int) -> None:
        """``written`` documents, ``changed`` of them stored before with other content."""
        self.documents = written
        if changed:
            self.warnings.append(f"{changed} document(s) already in corpus {corpus_id!r} had "
                                 "other content and were updated (their content hash changed)")

    def refuse_run_taken(self, db: sqlite_utils.Database, hint: str) -> None:
        """InputErrors if the study has a run named as the one this import writes."""
        if exists(db, "SELECT 1 FROM runs WHERE study_id = ? AND name = ?",
                  [self.study_id, self.run]):
            raise InputErrors.one(self.source, f"run {self.run!r} already exists in study "
                                  f"{self.study_id!r}", hint)

    def audit(self, db: sqlite_utils.Database, actor: str, **extra: object) -> None:
        """The import's ``import.<kind>`` audit row: this summary (not its warnings) and
        ``extra``, inside the import's transaction."""
        detail = {**self.model_dump(exclude={"warnings"}), **extra}
        record_audit(db, actor, f"import.{self.kind}", study_id=self.study_id, detail=detail)


def load_source(source: Source, limits: ReadLimits = DEFAULT_LIMITS) -> SourceText:
    """A path is read (within ``limits``); decoded text (e.g. an upload) is used as is."""
    return source if isinstance(source, SourceText) else read_source(source, limits=limits)


def source_stem(name: str) -> str:
    return Path(name).name.rsplit(".", 1)[0] or Path(name).name


@dataclass(frozen=True)
class NewEvent:
    """A label event about to be written (times default to the import time)."""

    query_id: str
    unit_id: str
    kind: str
    gain: int | None
    annotator: str
    created_at: str | None = None
    note: str = ""
    source: str = "import"


def check_known_ids(
    db: sqlite_utils.Database, corpus_id: str, ids: Iterable[str], source: SourceText | str, *,
    allow_unknown: bool, what: str = "unit", also_known: set[str] | None = None,
    arriving_documents: int = 0,
) -> None:
    """Raise InputErrors listing the first unknown ids when the corpus has documents (stored, in
    ``also_known`` or ``arriving_documents`` of the same import; an empty corpus accepts any
    id). ``allow_unknown`` turns it off. ``source``: the file's name, or the text the ids were
    read from (the error then names the first unknown id's line)."""
    if allow_unknown:
        return
    known_extra = also_known or set()
    has_docs = bool(known_extra) or arriving_documents > 0 or exists(
        db, f"SELECT 1 FROM documents WHERE corpus_id = ? AND {published()} LIMIT 1", [corpus_id])
    if not has_docs:
        return
    wanted = [i for i in dict.fromkeys(ids) if i not in known_extra]
    unknown: list[str] = []
    for marks, chunk in in_chunks(wanted, 900):
        found = {r[0] for r in db.execute(
            f"SELECT doc_id FROM documents WHERE corpus_id = ? AND doc_id IN ({marks}) "
            f"AND {published()}", [corpus_id, *chunk])}
        unknown.extend(i for i in chunk if i not in found)
    if unknown:
        text = source if isinstance(source, SourceText) else None
        raise InputErrors.one(
            text.name if text else str(source),
            f"{len(unknown)} {what} id(s) not in corpus {corpus_id!r}: {clipped(listed(unknown))}",
            "import the documents first, fix the ids, or pass --allow-unknown-ids",
            line=first_line_of(text, unknown[0]) if text else None)


def listed(ids: Sequence[str]) -> str:
    """The first :data:`SHOWN_UNKNOWN` ids, and how many more there are."""
    more = f" and {len(ids) - SHOWN_UNKNOWN} more" if len(ids) > SHOWN_UNKNOWN else ""
    return ", ".join(ids[:SHOWN_UNKNOWN]) + more


def refuse_long_ids(ids: Iterable[str], source: SourceText, what: str = "") -> None:
    """InputErrors naming the first id longer than :data:`MAX_ID_CHARS` and its line in the
    ``source`` it was read from: no such id is stored or echoed whole."""
    for value in ids:
        if len(value) > MAX_ID_CHARS:
            raise InputErrors.one(
                source.name, too_long(value, MAX_ID_CHARS, f"a {what} id" if what else "an id")
                or "", "is this the right file? ids are names, not text",
                line=first_line_of(source, value))


def register_queries(
    db: sqlite_utils.Database, study_id: str, query_ids: Iterable[str]
) -> int:
    """Add queries the study does not have yet (empty text); return how many were new."""
    before = db.execute("SELECT count(*) FROM queries WHERE study_id = ?", [study_id]).fetchone()[0]
    db.conn.executemany(
        "INSERT INTO queries (study_id, query_id, text) VALUES (?, ?, '') "
        "ON CONFLICT DO NOTHING",
        ((study_id, q) for q in dict.fromkeys(query_ids)),
    )
    after = db.execute("SELECT count(*) FROM queries WHERE study_id = ?", [study_id]).fetchone()[0]
    return int(after - before)


def write_label_events(study: Study, events: Sequence[NewEvent], summary: ImportSummary) -> None:
    """Append the events inside the import's transaction, with auto-reopen: a relevant label or
    adjudication on a unit not relevant in the working reference reopens a complete query (one
    ``reopened`` event per query, naming the first such label and the source). ``summary`` gets
    the events written and the reopened query ids."""
    db, study_id = study.db, study.study_id
    threshold = study.settings.relevance_threshold
    relevant: dict[str, list[NewEvent]] = {}
    for e in events:
        if e.kind != "undo" and e.gain is not None and e.gain >= threshold:
            relevant.setdefault(e.query_id, []).append(e)
    complete_now = [q for q, c in completeness_states(study).items() if c and q in relevant]
    before = resolved_gains(study, complete_now) if complete_now else {}
    reopen: list[tuple[str, NewEvent]] = []
    for q in complete_now:
        gains = before.get(q, {})
        for e in relevant[q]:
            if gains.get(e.unit_id, -1) < threshold:
                reopen.append((q, e))
                break
    events = [replace(e, annotator=normalise_user_id(e.annotator)) for e in events]
    now = utc_now_iso()
    register_queries(db, study_id, (e.query_id for e in events))
    db.conn.executemany(
        "INSERT INTO label_events (study_id, query_id, unit_id, kind, gain, annotator, "
        "created_at, note, source) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            (study_id, e.query_id, e.unit_id, e.kind, e.gain, e.annotator,
             e.created_at or now, e.note, e.source)
            for e in events
        ),
    )
    for q, e in reopen:
        what = "label" if e.kind == "label" else "adjudication"
        reason = f"new relevant {what} on {e.unit_id} by {e.annotator} (import of {summary.source})"
        append_completeness_event(db, study_id, q, "reopened", e.annotator, reason)
    summary.label_events, summary.reopened = len(events), [q for q, _ in reopen]


def mark_queries_complete(
    db: sqlite_utils.Database, *, study_id: str, query_ids: Iterable[str], actor: str, reason: str
) -> int:
    """Append a ``complete`` event for each query not already complete; return how many."""
    states = completeness_states(open_study(db, study_id, actor, Permission.MARK_COMPLETE))
    written = 0
    for q in dict.fromkeys(query_ids):
        if not states.get(q, False):
            append_completeness_event(db, study_id, q, "complete", actor, reason)
            written += 1
    return written
