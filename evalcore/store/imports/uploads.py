"""Imports from uploaded bytes (the app's Data page): safe names, safe zip extraction.

An uploaded file's name is *never* used as a path: it only labels error
messages (:func:`display_name`). Bytes are decoded in memory
(:func:`evalcore.io.text_lines.decode_source`); a BEIR zip is extracted into a
fresh temporary folder under names this module chooses, after checking every
member (no absolute paths, no ``..``, no links, bounded total size), and the
folder is removed afterwards. Every import is all-or-nothing (see
:mod:`evalcore.store.imports`).
"""

import re
import shutil
import stat
import tempfile
import zipfile
from collections.abc import Mapping
from io import BytesIO
from pathlib import Path, PurePosixPath
from typing import Literal

import sqlite_utils

from evalcore.io.errors import InputError, InputErrors
from evalcore.io.text_lines import decode_source
from evalcore.store.imports import (
    ImportSummary,
    import_beir,
    import_labels,
    import_observations,
    import_qrels,
    import_run,
)

UploadKind = Literal["qrels", "run", "observations", "labels-csv", "labels-jsonl", "beir"]
UPLOAD_KINDS: tuple[UploadKind, ...] = (
    "qrels", "run", "observations", "labels-csv", "labels-jsonl", "beir",
)
#: Largest upload accepted, in MiB: the same number as ``server.maxUploadSize`` in
#: ``.streamlit/config.toml`` (a test keeps the two equal).
MAX_UPLOAD_MB = 200
MAX_UPLOAD_BYTES = MAX_UPLOAD_MB * 1024 * 1024
#: Largest uncompressed BEIR zip accepted (bytes).
MAX_UNZIPPED_BYTES = 2 * 1024**3
#: Largest number of members in a BEIR zip.
MAX_ZIP_MEMBERS = 10_000
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
) -> ImportSummary:
    """Import one uploaded file of ``kind`` into the study (all or nothing).

    Raises :class:`InputErrors` (every error with file, line and field; an
    upload larger than ``max_bytes`` is refused before it is read) or
    ``ValueError`` for bad options; nothing is written then.
    """
    name = display_name(filename)
    if len(data) > max_bytes:
        raise InputErrors([InputError(
            file=name,
            message=f"the upload is {len(data) / 1024**2:,.1f} MiB; uploads are limited to "
                    f"{max_bytes / 1024**2:,.0f} MiB",
            hint="import a larger file from the command line (evalcore import ...), "
                 "which reads it from disk",
        )])
    if kind == "beir":
        return _import_beir_zip(db, data, name, study_id=study_id, actor=actor,
                                complete=complete, allow_unknown_ids=allow_unknown_ids,
                                gain_map=gain_map, owner_org=owner_org)
    source = decode_source(data, name)
    if kind == "qrels":
        return import_qrels(db, source, study_id=study_id, annotator=annotator or None,
                            complete=complete, gain_map=gain_map,
                            allow_unknown_ids=allow_unknown_ids, actor=actor)
    if kind == "run":
        if k is None:
            raise ValueError("a run import needs k, the cutoff depth its metrics are measured at")
        return import_run(db, source, study_id=study_id, k=k, name=run_name or None,
                          allow_unknown_ids=allow_unknown_ids, actor=actor)
    if kind == "observations":
        return import_observations(db, source, study_id=study_id, run_name=run_name or None,
                                   annotator=annotator or None,
                                   allow_unknown_ids=allow_unknown_ids, actor=actor)
    if kind in ("labels-csv", "labels-jsonl"):
        return import_labels(db, source, study_id=study_id, format=kind.split("-")[1],
                             annotator=annotator or None, gain_map=gain_map,
                             allow_unknown_ids=allow_unknown_ids, actor=actor,
                             keep_annotators=keep_annotators)
    raise ValueError(f"unknown upload kind {kind!r}; choose one of {', '.join(UPLOAD_KINDS)}")


def _import_beir_zip(db: sqlite_utils.Database, data: bytes, name: str, **options) -> ImportSummary:
    workdir = Path(tempfile.mkdtemp(prefix="relevance-ledger-beir-"))
    try:
        folder = extract_beir_zip(data, name, workdir)
        summary = import_beir(db, folder, **options)
        return summary.model_copy(update={"source": name})
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def extract_beir_zip(data: bytes, name: str, workdir: Path) -> Path:
    """Extract a BEIR zip safely into ``workdir``; return the folder holding ``corpus.jsonl``.

    Member names are checked (relative, no ``..``, no links, no drive letters)
    and written only below ``workdir``; the zip's total uncompressed size and
    member count are bounded. Raises :class:`InputErrors` naming the problem.
    """

    def fail(message: str, hint: str | None = None) -> InputErrors:
        return InputErrors([InputError(file=name, message=message, hint=hint)])

    try:
        archive = zipfile.ZipFile(BytesIO(data))
    except zipfile.BadZipFile:
        raise fail("not a zip file", "upload the BEIR dataset folder as a .zip") from None
    with archive:
        members = archive.infolist()
        if len(members) > MAX_ZIP_MEMBERS:
            raise fail(f"the zip holds {len(members)} entries; at most {MAX_ZIP_MEMBERS} are accepted")
        total = sum(m.file_size for m in members)
        if total > MAX_UNZIPPED_BYTES:
            raise fail(f"the zip unpacks to {total:,} bytes; at most {MAX_UNZIPPED_BYTES:,} "
                       "are accepted")
        for member in members:
            parts = _safe_parts(member)
            if parts is None:
                raise fail(f"zip entry {display_name(member.filename)!r} has an unsafe path "
                           "(absolute, '..', a drive or a link)", "zip the dataset folder itself")
            if not parts:
                continue
            target = workdir.joinpath(*parts)
            if member.is_dir():
                target.mkdir(parents=True, exist_ok=True)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            with archive.open(member) as src, target.open("wb") as dst:
                shutil.copyfileobj(src, dst, length=1024 * 1024)
    corpora = sorted(workdir.rglob("corpus.jsonl"), key=lambda p: len(p.parts))
    if not corpora:
        raise fail("the zip holds no corpus.jsonl",
                   "a BEIR folder has corpus.jsonl, queries.jsonl and qrels/<split>.tsv")
    return corpora[0].parent


def _safe_parts(member: zipfile.ZipInfo) -> tuple[str, ...] | None:
    """The member's path components if it is a safe relative path, else None."""
    if stat.S_ISLNK(member.external_attr >> 16):
        return None
    raw = member.filename.replace("\\", "/")
    if raw.startswith("/") or re.match(r"^[A-Za-z]:", raw) or "\x00" in raw:
        return None
    parts = tuple(p for p in PurePosixPath(raw).parts if p not in ("", "."))
    if any(p == ".." for p in parts):
        return None
    return parts
