"""Exports from the evidence store, each readable back by the matching import.

* :func:`export_qrels`: a reference (a frozen version, or the working reference) as TREC
  qrels ``query_id 0 unit_id gain``, sorted by query id then unit id (code-point order),
  units in conflict left out. Imported into an empty study with its completeness and
  frozen, it gives the same labels and content hash.
* :func:`export_labels`: every label event, in event order, as CSV or JSONL
  (:data:`LABEL_COLUMNS`; JSONL adds ``event_id``): importing it replays the same events.
* :func:`export_run`: a stored run as a TREC run file ``query_id Q0 unit_id rank score
  tag``, queries sorted, ranks as stored. TREC tools re-order by score descending, ties by
  doc id descending, so the stored order survives only if it is that order.
  ``scores="auto"`` writes the stored scores when the order survives for every query,
  else rank-derived scores (``n - rank + 1``) with a warning; ``"original"`` refuses an
  order that would not survive; ``"rank"`` always writes rank-derived scores. Scores are
  written with ``repr`` (they read back exactly). The score of a document the reader may
  not read is withheld (a lexical score tells which terms it contains): such a run is
  written with rank-derived scores (``auto``) or refused (``original``).
* :func:`export_tool_labels`: a reference as another tool's ratings (Quepid CSV, RRE,
  ``_rank_eval``): one per (query, unit) with a resolved gain, query text from the study
  (its id when it has none); importing it reproduces them.

The ``*_refusal`` checks say up front why an export would be refused (the app builds
downloads only when clicked): each first asks whether there is a *suspect* (a superset
of what the export refuses: the facts :mod:`evalcore.store.trec_ids` records, or a frozen
version's ids read one row per query); only then is the export itself run, so the
message and each rule stay the export's own.

Files are written atomically, no more readable than the store file (its permission bits
or 0600, whichever is stricter). CSV text cells a spreadsheet would run as a formula start
with a quote, which the labels CSV import removes (:mod:`evalcore.io.spreadsheet_cells`).
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Literal, TextIO

import sqlite_utils
from pydantic import BaseModel, Field

from evalcore.io.atomic import atomic_writer, private_mode
from evalcore.io.progress import counted, reporter
from evalcore.io.spreadsheet_cells import csv_writer
from evalcore.io.tool_labels import ToolFormat, write_tool_labels
from evalcore.store.export_redaction import score_column
from evalcore.store.lookup import exists
from evalcore.store.query_reads import query_texts
from evalcore.store.references import reference_labels
from evalcore.store.resolution import resolved_gains
from evalcore.store.runs import get_run
from evalcore.store.scoping import readable_filter
from evalcore.store.store_identity import store_file
from evalcore.store.study_handle import Study
from evalcore.store.trec_ids import PER_QUERY, TREC_SPACE, ids_suspect

LABEL_COLUMNS = ("query_id", "unit_id", "gain", "annotator", "kind", "created_at", "note", "source")
ScoreMode = Literal["auto", "original", "rank"]


class ExportSummary(BaseModel):
    kind: str
    rows: int
    warnings: list[str] = Field(default_factory=list)


class ExportRefusedError(ValueError):
    """The export would not read back as stored (e.g. a run order TREC tools would change)."""


def export_file_mode(db: sqlite_utils.Database) -> int:
    """The mode of a file holding a copy of the store's data: the store file's permission
    bits or 0600, whichever is stricter (0600 for an in-memory store)."""
    return private_mode(store_file(db))


def write_export(db: sqlite_utils.Database, out: str | Path | TextIO,
                 produce: Callable[[TextIO], int]) -> int:
    """Run ``produce`` on a stream: ``out`` itself, or the path written atomically with
    :func:`export_file_mode`."""
    if not isinstance(out, str | Path):
        return produce(out)
    with atomic_writer(out, newline="", mode=export_file_mode(db)) as stream:
        return produce(stream)


def _check_token(kind: str, value: str) -> None:
    """Refuse a value a TREC reader would read back differently."""
    if not value or TREC_SPACE.search(value):
        raise ExportRefusedError(
            f"{kind} {value!r} contains whitespace, which TREC files cannot hold; "
            "export labels as CSV or JSONL instead"
        )
    if kind == "query id" and value.startswith("#"):
        raise ExportRefusedError(
            f"query id {value!r} starts with '#': its TREC line would read back as a comment; "
            "export labels as CSV or JSONL instead"
        )


def _reference(study: Study, reference: str | None) -> dict[str, dict[str, int]]:
    """The frozen version ``reference``'s labels, or the working reference's (None)."""
    return resolved_gains(study) if reference is None else reference_labels(study, reference)


def export_qrels(
    study: Study, out: str | Path | TextIO, reference: str | None = None
) -> ExportSummary:
    """Write the reference as TREC qrels (see the module docstring)."""
    labels = _reference(study, reference)
    rows = sorted((q, u, g) for q, units in labels.items() for u, g in units.items())
    for q, u, _ in rows:
        _check_token("query id", q)
        _check_token("unit id", u)

    def produce(stream: TextIO) -> int:
        reporter().stage("writing qrels", len(rows), "rows")
        stream.writelines(f"{q} 0 {u} {g}\n" for q, u, g in counted(rows))
        return len(rows)

    return ExportSummary(kind="qrels", rows=write_export(study.db, out, produce))


def export_labels(
    study: Study, out: str | Path | TextIO, format: Literal["csv", "jsonl"] = "csv"
) -> ExportSummary:
    """Write every label event of the study as CSV or JSONL (see the module docstring)."""
    rows = study.db.execute(
        "SELECT event_id, query_id, unit_id, gain, annotator, kind, created_at, note, source "
        "FROM label_events WHERE study_id = ? ORDER BY event_id",
        [study.study_id],
    ).fetchall()

    def produce_csv(stream: TextIO) -> int:
        writer = csv_writer(stream, lineterminator="\n")
        writer.writerow(LABEL_COLUMNS)
        reporter().stage("writing label events", len(rows), "rows")
        for r in counted(rows):
            writer.writerow(["" if v is None else v for v in r[1:]])
        return len(rows)

    def produce_jsonl(stream: TextIO) -> int:
        reporter().stage("writing label events", len(rows), "rows")
        for r in counted(rows):
            record = dict(zip(("event_id", *LABEL_COLUMNS), r, strict=True))
            stream.write(json.dumps(record, ensure_ascii=False, sort_keys=False) + "\n")
        return len(rows)

    if format not in ("csv", "jsonl"):
        raise ValueError(f"format must be 'csv' or 'jsonl', got {format!r}")
    count = write_export(study.db, out, produce_csv if format == "csv" else produce_jsonl)
    return ExportSummary(kind=f"labels-{format}", rows=count)


def _survives(units: list[str], scores: list[float | None]) -> bool:
    """Whether TREC tools (score descending, then doc id descending) keep this order."""
    if any(s is None for s in scores):
        return False
    for i in range(len(units) - 1):
        higher, lower = scores[i], scores[i + 1]
        if higher < lower or (higher == lower and units[i] < units[i + 1]):  # type: ignore[operator]
            return False
    return True


def export_run(study: Study, run_name: str, out: str | Path | TextIO,
               scores: ScoreMode = "auto") -> ExportSummary:
    """Write a stored run as a TREC run file (see the module docstring)."""
    run = get_run(study, run_name)
    tag = re.sub(r"\s+", "_", run_name)
    readable = readable_filter(study.db, study.actor, study.settings.corpus_id)
    ranking: dict[str, tuple[list[str], list[float | None]]] = {}
    withheld = 0
    for q, u, s, hidden in study.db.execute(
        f"SELECT x.query_id, x.unit_id, {score_column(readable)}, "
        f"x.score IS NOT NULL AND {score_column(readable)} IS NULL FROM results x "
        "WHERE x.run_id = :run ORDER BY x.query_id, x.rank",
        {"run": run.run_id, "corpus": study.settings.corpus_id, **readable.params},
    ):
        entry = ranking.setdefault(q, ([], []))
        entry[0].append(u)
        entry[1].append(s)
        withheld += hidden
    for q, (units, _) in ranking.items():
        _check_token("query id", q)
        for u in units:
            _check_token("unit id", u)
    broken = [q for q, (units, sc) in ranking.items() if not _survives(units, sc)]
    warnings: list[str] = []
    if withheld:
        warnings.append(
            f"{withheld} result(s) are documents you may not read: their scores are withheld "
            "(a score tells which terms a document contains)")
    use_rank = scores == "rank"
    if broken and scores == "original":
        raise ExportRefusedError(
            f"the stored order of {len(broken)} query(ies) (e.g. {broken[0]}) would change on "
            "re-import (TREC tools order by score, ties by doc id descending)"
            + (", or has scores withheld from you" if withheld else "")
            + "; export with --scores rank to keep the order"
        )
    if broken and scores == "auto":
        use_rank = True
        warnings.append(
            f"{len(broken)} query(ies) (e.g. {broken[0]}) have ties or missing scores that TREC "
            "tools would re-order; wrote rank-derived scores (n - rank + 1) for the whole run"
        )

    def produce(stream: TextIO) -> int:
        count = 0
        buffer = io.StringIO()
        reporter().stage("writing run", len(ranking), "queries")
        for q in counted(sorted(ranking), every=100):
            units, sc = ranking[q]
            n = len(units)
            for i, u in enumerate(units):
                value = float(n - i) if use_rank else sc[i]
                buffer.write(f"{q} Q0 {u} {i + 1} {value!r} {tag}\n")
            count += n
            if buffer.tell() > 1 << 20:
                stream.write(buffer.getvalue())
                buffer = io.StringIO()
        stream.write(buffer.getvalue())
        return count

    return ExportSummary(kind="run", rows=write_export(study.db, out, produce), warnings=warnings)


def export_tool_labels(
    study: Study,
    out: str | Path | TextIO,
    fmt: ToolFormat,
    *,
    reference: str | None = None,
    index: str | None = None,
) -> ExportSummary:
    """Write the reference's ratings in ``fmt`` (``index`` default: the study's corpus id)."""
    settings = study.settings
    labels = _reference(study, reference)
    ratings = {q: dict(units) for q, units in labels.items() if units}
    texts = query_texts(study, ratings)
    if fmt == "quepid":
        by_text: dict[str, str] = {}
        for q in ratings:
            shown = texts.get(q) or q
            other = by_text.setdefault(shown, q)
            if other != q:
                raise ExportRefusedError(
                    f"queries {other} and {q} have the same text {shown!r}; Quepid names "
                    "queries by text, so they would merge: export as rre or rank-eval instead")

    def produce(stream: TextIO) -> int:
        return write_tool_labels(
            stream,
            fmt,
            ratings,
            texts,
            index=index or settings.corpus_id,
            title=settings.name or settings.study_id,
        )

    return ExportSummary(kind=f"labels-{fmt}", rows=write_export(study.db, out, produce))


# -- would an export be refused? (see the module docstring) ----------------------------


def qrels_suspect(study: Study, reference: str | None) -> bool:
    """Whether the study's label events (every one, undone or not: a superset), or the frozen
    ``reference``'s labels, hold an id a TREC qrels export may refuse; for the working labels
    the fact recorded as they were written."""
    if reference is None:
        return exists(study.db, "SELECT 1 FROM label_id_suspects WHERE study_id = ?",
                      [study.study_id])
    return ids_suspect(
        study.db.execute(
            PER_QUERY.format(source="reference_labels WHERE study_id = ? AND version = ?"),
            [study.study_id, reference],
        )
    )


def _refusal(export) -> str | None:
    try:
        export(io.StringIO())
    except ExportRefusedError as error:
        return str(error)
    return None


def qrels_refusal(
    study: Study, reference: str | None, *, suspect: bool | None = None
) -> str | None:
    """Why :func:`export_qrels` would refuse these qrels, or None. ``suspect``: whether the labels
    hold a suspect, when the caller knows (e.g. kept per content hash); else read here."""
    if suspect is None:
        suspect = qrels_suspect(study, reference)
    if not suspect:
        return None
    return _refusal(lambda out: export_qrels(study, out, reference=reference))


def tool_labels_refusal(study: Study, fmt: str, reference: str | None) -> str | None:
    """Why :func:`export_tool_labels` would refuse, or None (only Quepid refuses: two rated
    queries shown with the same text)."""
    if fmt != "quepid":
        return None
    suspect = study.db.execute(
        "SELECT 1 FROM queries WHERE study_id = ? GROUP BY coalesce(nullif(text, ''), query_id) "
        "HAVING count(*) > 1 LIMIT 1",
        [study.study_id],
    ).fetchone()
    if suspect is None:
        return None
    return _refusal(lambda out: export_tool_labels(study, out, fmt, reference=reference))


def run_suspect(study: Study, run_id: int) -> bool:
    """Whether the stored run ``run_id`` holds an id a TREC run export refuses: the fact
    recorded as its results were written (a stored run never changes)."""
    row = study.db.execute("SELECT trec_suspect FROM runs WHERE run_id = ?", [run_id]).fetchone()
    return row is not None and bool(row[0])


def run_refusal(study: Study, run_name: str, *, suspect: bool | None = None) -> str | None:
    """Why :func:`export_run` would refuse this run, or None. ``suspect``: :func:`run_suspect` of
    the run, when the caller knows."""
    run = get_run(study, run_name)
    if not (run_suspect(study, run.run_id) if suspect is None else suspect):
        return None
    return _refusal(lambda out: export_run(study, run_name, out))
