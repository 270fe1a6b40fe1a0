"""Import automatic judgments (an LLM judge's, a model's, a heuristic's) under a source name.

``evalcore import labels PATH --automatic NAME --format qrels|csv|jsonl``. Read by the
human label readers (:func:`evalcore.io.trec.parse_qrels`,
:func:`evalcore.io.label_rows.parse_labels`), then checked as one source's judgments: a row
of another kind than ``label`` is refused, a (query, unit) judged twice alike is one label
and a warning, differently an error naming both lines; annotator columns are ignored. Unit
ids unknown to a non-empty corpus are refused unless ``allow_unknown_ids``.

The labels are written apart from the human ones (:mod:`evalcore.store.automatic_labels`:
staged, published with one audit entry; lead-only): no value, bound, verdict or
completeness changes, and no query is reopened."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

import sqlite_utils

from evalcore.access.roles import Permission
from evalcore.io.errors import ErrorLog, InputErrors
from evalcore.io.label_rows import parse_labels
from evalcore.io.text_lines import SourceText
from evalcore.io.trec import parse_qrels
from evalcore.store.authorize import authorize
from evalcore.store.automatic_labels import write_automatic_import
from evalcore.store.imports import common
from evalcore.store.imports.labels import _conflict_errors
from evalcore.store.studies import get_study
from evalcore.store.transaction import write_transaction

AutomaticFormat = Literal["qrels", "csv", "jsonl"]
AUTOMATIC_FORMATS: tuple[str, ...] = ("qrels", "csv", "jsonl")

#: A source name: a letter or digit, then letters, digits and ``._:@/-`` (at most 100).
SOURCE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:@/-]{0,99}")


def check_source_name(name: str) -> str:
    """The source name, or a ValueError saying what a name may hold."""
    if not SOURCE_NAME.fullmatch(name):
        shown = name if len(name) <= 40 else name[:40] + "…"
        raise ValueError(
            f"automatic source name {shown!r} is not valid: use 1 to 100 letters, digits and "
            "._:@/- starting with a letter or digit (e.g. gpt-4o-umbrela)"
        )
    return name


def _rows(text: SourceText, fmt: AutomaticFormat, gain_map: Mapping[int, int] | None
          ) -> tuple[list[tuple[int | None, str, str, int]], list[str], list[str]]:
    """(line, query id, unit id, gain) of every judgment, the warnings and the notes."""
    if fmt == "qrels":
        qrels = parse_qrels(text, gain_map)
        _conflict_errors(qrels)
        rows = [(None, q, d, g) for q in qrels.doc_ids
                for d, g in zip(qrels.doc_ids[q], qrels.gains[q], strict=True)]
        return rows, list(qrels.notes), text.notes()
    parsed = parse_labels(text, fmt, default_annotator="automatic", gain_map=gain_map)
    log = ErrorLog(text.name)
    for r in parsed.rows:
        if r.kind != "label" or r.gain is None:
            log.add(r.line, "kind", f"a {r.kind!r} event is not an automatic judgment",
                    "an automatic source's file holds one label (query_id, unit_id, gain) "
                    "per unit")
    log.raise_if_any()
    warnings = list(parsed.warnings)
    first: dict[tuple[str, str], tuple[int, int]] = {}
    rows = []
    for r in parsed.rows:
        assert r.gain is not None
        earlier = first.setdefault((r.query_id, r.unit_id), (r.line, r.gain))
        if earlier[0] == r.line:
            rows.append((r.line, r.query_id, r.unit_id, r.gain))
        elif earlier[1] == r.gain:
            warnings.append(f"{text.name}:{r.line}: query {r.query_id} unit {r.unit_id} "
                            f"repeats line {earlier[0]} with the same gain; recorded once")
        else:
            log.add(r.line, "gain",
                    f"query {r.query_id} unit {r.unit_id}: gain {r.gain} contradicts line "
                    f"{earlier[0]} (gain {earlier[1]})",
                    "one source judges a unit once: keep one of the two lines")
    log.raise_if_any()
    return rows, warnings, parsed.notes


def import_automatic_labels(
    db: sqlite_utils.Database,
    source: common.Source,
    *,
    study_id: str,
    name: str,
    format: AutomaticFormat = "qrels",
    gain_map: Mapping[int, int] | None = None,
    allow_unknown_ids: bool = False,
    actor: str = "import",
) -> common.ImportSummary:
    """Import a file of automatic judgments as the source ``name`` (all or nothing);
    see the module docstring."""
    check_source_name(name)
    if format not in AUTOMATIC_FORMATS:
        raise ValueError(f"format {format!r} is not one of {', '.join(AUTOMATIC_FORMATS)}")
    study = get_study(db, study_id)
    text = common.load_source(source)
    rows, warnings, notes = _rows(text, format, gain_map)
    if not rows:
        raise InputErrors.one(text.name, "no automatic judgments in the file",
                              "one line per judged unit: query, unit, gain")
    common.refuse_long_ids((i for _, q, u, _ in rows for i in (q, u)), text)
    with write_transaction(db):  # refused before anything is staged
        authorize(db, study_id=study_id, actor=actor, permission=Permission.IMPORT)
        common.check_known_ids(db, study.corpus_id, (u for _, _, u, _ in rows), text,
                        allow_unknown=allow_unknown_ids)
    write_automatic_import(
        db, study_id=study_id, source=name, file=Path(text.name).name, format=format,
        labels=[(q, u, g) for _, q, u, g in rows], actor=actor,
    )
    return common.ImportSummary(
        kind=f"automatic labels ({name}, {format}; not evidence)", study_id=study_id,
        source=text.name, rows=len(rows), queries=len({q for _, q, _, _ in rows}),
        warnings=warnings, notes=notes,
    )
