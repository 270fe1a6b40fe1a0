"""Imports from uploaded bytes (the app's Data page): safe names, safe zip extraction.

An uploaded file's name is never a path: it only labels messages (:func:`display_name`).
Bytes are read as files are (compression told by content, within the same bounds:
:func:`evalcore.io.text_lines.read_source`, :func:`evalcore.io.documents.documents_from_bytes`).
A BEIR zip is extracted into a fresh temporary folder under names chosen here, every member
checked and sizes bounded while streaming (:mod:`evalcore.io.zip_extract`), and removed
after; its errors name the upload (``data.zip:corpus.jsonl:3``), never the folder."""

import re
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Literal, get_args

import sqlite_utils

from evalcore.contract.limits import DEFAULT_LIMITS, ReadLimits
from evalcore.io.documents import DocumentFields, documents_from_bytes, resolve_format
from evalcore.io.errors import InputErrors
from evalcore.io.queries import QueryFields
from evalcore.io.records import AUTO, Layout
from evalcore.io.text_lines import read_source
from evalcore.io.zip_extract import extract_zip
from evalcore.store.imports import (
    ImportSummary,
    import_beir,
    import_labels,
    import_observations,
    import_qrels,
    import_run,
)
from evalcore.store.imports.documents import import_documents
from evalcore.store.imports.queries import import_queries
from evalcore.store.imports.tool_labels import import_tool_labels

UploadKind = Literal["qrels", "run", "observations", "labels-csv", "labels-jsonl", "beir",
                     "documents", "queries", "labels-quepid", "labels-rre", "labels-rank-eval"]
UPLOAD_KINDS: tuple[UploadKind, ...] = get_args(UploadKind)
#: Largest upload accepted, in MiB: the same number as ``server.maxUploadSize`` in
#: ``.streamlit/config.toml`` (a test keeps the two equal).
MAX_UPLOAD_MB = 200
MAX_UPLOAD_BYTES = MAX_UPLOAD_MB * 1024 * 1024
_UNSAFE_NAME = re.compile(r"[\x00-\x1f\x7f/\\]+")


def display_name(filename: str, *, fallback: str = "upload") -> str:
    """A label for messages: the last path component, control characters and slashes removed."""
    name = re.split(r"[/\\]", filename or "")[-1]
    name = _UNSAFE_NAME.sub("_", name).strip(" .")[:120]
    return name or fallback


def import_upload(
    db: sqlite_utils.Database,
    kind: UploadKind,
    data: bytes,
    filename: str,
    *,
    study_id: str,
    actor: str,
    k: int | None = None,
    run_name: str | None = None,
    annotator: str | None = None,
    complete: bool = False,
    allow_unknown_ids: bool = False,
    owner_org: str | None = None,
    keep_annotators: bool = False,
    gain_map: Mapping[int, int] | None = None,
    max_bytes: int = MAX_UPLOAD_BYTES,
    fmt: str = "auto",
    document_fields: DocumentFields | None = None,
    query_fields: QueryFields | None = None,
    layout: Layout = AUTO,
    limits: ReadLimits = DEFAULT_LIMITS,
) -> ImportSummary:
    """Import one uploaded file of ``kind`` into the study (all or nothing). :class:`InputErrors`
    (every error with file, line and field; an upload over ``max_bytes`` refused unread) or
    ``ValueError`` for bad options write nothing."""
    name = display_name(filename)
    if len(data) > max_bytes:
        raise InputErrors.one(name, f"the upload is {len(data) / 1024**2:,.1f} MiB; uploads are "
                              f"limited to {max_bytes / 1024**2:,.0f} MiB", "import a larger file "
                              "from the command line (evalcore import ...), which reads it from disk")
    # the options every kind of labels, run or BEIR import takes; a label file's besides
    common = {"study_id": study_id, "actor": actor, "allow_unknown_ids": allow_unknown_ids}
    labels = {**common, "annotator": annotator or None, "gain_map": gain_map}
    if kind == "beir":
        return _import_beir_zip(db, data, name, complete=complete, gain_map=gain_map,
                                owner_org=owner_org, limits=limits, **common)
    if kind == "documents":
        chosen = resolve_format(fmt, name)
        parsed = documents_from_bytes(data, name, chosen, document_fields, layout=layout,
                                      limits=limits)
        return import_documents(db, parsed, study_id=study_id, owner_org=owner_org, actor=actor)
    source = read_source(data, name, limits=limits)
    if kind == "queries":
        return import_queries(db, source, study_id=study_id, fmt=resolve_format(fmt, name),
                              fields=query_fields, layout=layout, actor=actor)
    if kind in ("labels-quepid", "labels-rre", "labels-rank-eval"):
        tool = kind.removeprefix("labels-")
        return import_tool_labels(db, source, fmt=tool, **labels)  # type: ignore[arg-type]
    if kind == "qrels":
        return import_qrels(db, source, complete=complete, **labels)
    if kind == "run":
        if k is None:
            raise ValueError("a run import needs k, the cutoff depth its metrics are measured at")
        return import_run(db, source, k=k, name=run_name or None, **common)
    if kind == "observations":
        return import_observations(db, source, run_name=run_name or None,
                                   annotator=annotator or None, **common)
    if kind in ("labels-csv", "labels-jsonl"):
        return import_labels(db, source, format=kind.split("-")[1],
                             keep_annotators=keep_annotators, **labels)
    raise ValueError(f"unknown upload kind {kind!r}; choose one of {', '.join(UPLOAD_KINDS)}")


def _import_beir_zip(db: sqlite_utils.Database, data: bytes, name: str, *, limits: ReadLimits,
                     **options) -> ImportSummary:
    workdir = Path(tempfile.mkdtemp(prefix="relevance-ledger-beir-"))
    try:
        folder = extract_beir_zip(data, name, workdir, limits=limits)
        try:
            summary = import_beir(db, folder, limits=limits, **options)
        except InputErrors as exc:
            raise _named_after_upload(exc, folder, name) from None
        return summary.model_copy(update={"source": name})
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def extract_beir_zip(data: bytes, name: str, workdir: Path, *,
                     limits: ReadLimits = DEFAULT_LIMITS) -> Path:
    """Extract a BEIR zip safely into ``workdir`` (the checks of
    :func:`evalcore.io.zip_extract.extract_zip`); return the folder holding ``corpus.jsonl``."""
    extract_zip(data, name, workdir, max_unzipped=limits.max_unpacked_bytes)
    corpora = sorted(workdir.rglob("corpus.jsonl"), key=lambda p: len(p.parts))
    if not corpora:
        raise InputErrors.one(name, "the zip holds no corpus.jsonl",
                              "a BEIR folder has corpus.jsonl, queries.jsonl and qrels/<split>.tsv")
    return corpora[0].parent


def _named_after_upload(exc: InputErrors, folder: Path, name: str) -> InputErrors:
    """The same errors, naming ``upload.zip:corpus.jsonl`` instead of a temporary path."""
    prefix = str(folder)

    def rename(file: str) -> str:
        if file == prefix:
            return name
        if file.startswith(prefix + "/"):
            return f"{name}:{file[len(prefix) + 1:]}"
        return file

    errors = [e.model_copy(update={"file": rename(e.file)}) for e in exc.errors]
    return type(exc)(errors, exc.total)
