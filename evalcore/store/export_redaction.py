"""What an export leaves out: every derived value of a document the exporter may not read.

A study can hold facts about documents some members may not read (a pin by someone in two
organisations lists the other's documents with their content hashes; a lexical run they
executed scored them; the pin's audit row counts them per organisation; a refusal names the
changed ones). Pages show such facts only to whoever may read the documents; an export
leaves the store, so it carries none of them (docs/access-model.md, "Exports"):

* ``protocol_documents`` rows of documents the exporter may not read (then or now) are left
  out: a content hash (unsalted sha256 of title and text) confirms a guessed text offline,
  and a keyed hash would still tell the document's id, owner and how many there are.
* A result's score of such a document is null (a lexical score says which terms it
  contains); its rank and id stay, as on the study's pages.
* A pin's per-organisation document counts (its ``lexical.pin`` audit row, a run's
  ``pinned_document_count``) keep only the organisations the exporter may read, naming the
  others in ``withheld_organisations``; a refusal of such a pin keeps nothing else
  (:func:`evalcore.store.refusals.withheld_refusal`).

Corpus fingerprints stay: one hashes every (id, content hash) pair of a pin's whole set, so
it confirms a guess about one document only to someone who knows every other one exactly,
and reports and comparisons are pinned to it."""

from __future__ import annotations

import json
from typing import Any

import sqlite_utils

from evalcore.store.document_imports import published
from evalcore.store.refusals import withheld_refusal
from evalcore.store.scoping import ReadableFilter, readable_filter, unreadable_organisations


def unreadable_unit(readable: ReadableFilter) -> str:
    """SQL: the unit of the ``results`` row aliased ``x`` is a document of the corpus
    ``:corpus`` that the reader of ``readable`` may not read."""
    return ("EXISTS (SELECT 1 FROM documents d WHERE d.corpus_id = :corpus AND "
            f"d.doc_id = x.unit_id AND {published('d')} AND NOT ({readable.where}))")


def score_column(readable: ReadableFilter) -> str:
    """SQL: the score of the ``results`` row aliased ``x``, null for a document the reader
    of ``readable`` may not read (params: ``readable.params`` and ``:corpus``)."""
    if readable.where == "1":
        return "x.score"
    return f"CASE WHEN {unreadable_unit(readable)} THEN NULL ELSE x.score END"


class ExportRedaction:
    """The exporter's view of a study's rows: SQL for the row-level rules, and the rows
    that name a pin whose documents they may not all read, rewritten."""

    def __init__(self, db: sqlite_utils.Database, actor: str | None, study_id: str,
                 corpus_id: str) -> None:
        self.readable: ReadableFilter = readable_filter(db, actor, corpus_id)
        self.params: dict[str, Any] = {"study": study_id, "corpus": corpus_id,
                                       **self.readable.params}
        #: pin name -> the organisations it sees whose documents the exporter may not read
        self.partial: dict[str, list[str]] = {}
        for name, protocol_json in db.execute(
                "SELECT name, protocol_json FROM protocols WHERE study_id = ?", [study_id]):
            orgs = json.loads(protocol_json).get("organisations") or []
            missing = unreadable_organisations(db, actor, corpus_id, orgs)
            if missing:
                self.partial[name] = missing
        self.everything = self.readable.where == "1"
        self.withheld: set[str] = set()
        self._count_withheld(db)

    @property
    def protocol_documents_sql(self) -> str:
        """``protocol_documents`` rows of documents readable by the exporter (pin-time owner,
        and the current one while the document is there)."""
        return (
            "SELECT pd.protocol, pd.doc_id, pd.content_hash, pd.owner_org FROM "
            "protocol_documents pd LEFT JOIN documents d ON d.corpus_id = :corpus AND "
            f"d.doc_id = pd.doc_id AND {published('d')} WHERE pd.study_id = :study AND "
            f"({self.readable.on('pd.owner_org')}) AND (d.doc_id IS NULL OR "
            f"({self.readable.where})) ORDER BY pd.protocol, pd.doc_id")

    def _count_withheld(self, db: sqlite_utils.Database) -> None:
        if self.everything:
            return
        pinned = db.execute("SELECT count(*) FROM protocol_documents WHERE study_id = :study",
                            self.params).fetchone()[0]
        shown = db.execute(f"SELECT count(*) FROM ({self.protocol_documents_sql})",
                           self.params).fetchone()[0]
        if shown != pinned:
            self.withheld.add("protocol_documents.jsonl")
        if db.execute(
                "SELECT 1 FROM results x JOIN runs r ON r.run_id = x.run_id WHERE "
                f"r.study_id = :study AND r.staged_by IS NULL AND x.score IS NOT NULL AND "
                f"{unreadable_unit(self.readable)} LIMIT 1", self.params).fetchone():
            self.withheld.add("results.jsonl")

    def row(self, member: str, row: tuple) -> tuple:
        """``row`` of ``member`` as the exporter may take it (see the module docstring)."""
        if not self.partial:
            return row
        if member == "runs.jsonl":
            return self._run(row)
        if member == "audit.jsonl":
            return self._audit(row)
        if member == "retrieval_refusals.jsonl" and row[0] in self.partial:
            self.withheld.add(member)
            message, detail = withheld_refusal(row[0], self.partial[row[0]])
            return (*row[:4], message, json.dumps(detail, sort_keys=True))
        return row

    def _run(self, row: tuple) -> tuple:
        protocol = json.loads(row[2])
        missing = self.partial.get(protocol.get("pinned_protocol"))
        if not missing or "pinned_document_count" not in protocol:
            return row
        self.withheld.add("runs.jsonl")
        protocol.pop("pinned_document_count")
        protocol["withheld_organisations"] = missing
        return (*row[:2], json.dumps(protocol), *row[3:])

    def _audit(self, row: tuple) -> tuple:
        detail = json.loads(row[3])
        missing = self.partial.get(detail.get("protocol")) if isinstance(detail, dict) else None
        if not missing or "documents_by_organisation" not in detail:
            return row
        self.withheld.add("audit.jsonl")
        shown = {o: n for o, n in detail["documents_by_organisation"].items()
                 if o not in missing}
        detail.update(documents_by_organisation=shown, document_count=sum(shown.values()),
                      withheld_organisations=missing)
        return (*row[:3], json.dumps(detail, sort_keys=True), *row[4:])
