"""The study archive format: one zip holding a whole study, member by member.

A study archive (``evalcore export study``) is a zip of JSON-lines members, one per kind of
row (:data:`MEMBERS`: the columns of each, in order), and a ``manifest.json`` naming the
format and its version, the store's schema version, the study id, and per member its row
count, byte size and sha256. Every row is one compact JSON object per line, keys in column
order, so the same study always gives the same bytes. Store-local numbers (event ids, run
ids, report ids) are not written: a row's position in its member is its order, and runs and
reports are named.

**Signing.** Member hashes prove an archive whole, not its origin: anyone can rewrite a
member and recompute the manifest. With the organisation's signing key (at least 32 secret
bytes in a file only its owner reads, kept outside the store: :func:`load_signing_key`) the
archive holds ``signature.json``, an HMAC-SHA256 of ``manifest.json``'s exact bytes with the
key's id. Reading with the key refuses a signature that does not match, and an unsigned
archive unless ``accept_unsigned``; reading without one reports the origin as unverified
(:class:`ArchiveOrigin`), which the import records in the audit log.

Reading (:func:`open_archive`) trusts nothing: the zip is unpacked by the bounded extractor
of :mod:`evalcore.io.zip_extract` (sizes, compression ratio, entry count, safe paths); the
manifest must name this format and a version this reader knows; every member must be there,
nothing else may be, each must match its sha256 and row count; every row must have exactly
its member's columns with values of the right type and range, and be no longer than one
document may be (:func:`max_row_bytes`; a longer row stops reading at once). Every problem
is an :class:`~evalcore.io.errors.InputErrors` naming the archive, the member and the line.
No SQL here: the store reads and writes the rows (:mod:`evalcore.store.study_archive`).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import shutil
import stat
import zipfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from evalcore.contract.frozen import FrozenModel
from evalcore.contract.limits import DEFAULT_LIMITS, DOCUMENT_OPTION, ReadLimits
from evalcore.io.errors import ErrorLog, InputError, InputErrors
from evalcore.io.json_objects import not_text
from evalcore.io.progress import reporter
from evalcore.io.zip_extract import extract_zip

FORMAT = "relevance-ledger.study-archive"
#: Written: 3 (the study's samples: their designs, units and non-responses; its automatic
#: judgments: their imports and labels). 2 added
#: organisation members' roles, the manifest's list of what the exporter withheld and an
#: optional signature. Read: 1, 2 and 3.
FORMAT_VERSION = 3
READABLE_VERSIONS = (1, 2, 3)
MANIFEST = "manifest.json"
SIGNATURE = "signature.json"
#: The shortest signing key accepted, in bytes.
KEY_MIN_BYTES = 32

#: What the archive holds of the corpus (written into the manifest).
DOCUMENTS_POLICY = (
    "the documents the study uses: every unit its runs returned, its label events and "
    "frozen references name, and its pinned protocols' document sets, that the exporting "
    "lead may read (not the whole corpus: a corpus is shared by studies and organisations)"
)


@dataclass(frozen=True)
class Column:
    name: str
    kind: str  # "str", "int", "num" (int or float), "json" (a JSON text)
    optional: bool = False
    choices: tuple[Any, ...] = ()
    minimum: int | None = None
    maximum: int | None = None


def _column(spec: str) -> Column:
    """A column of :data:`MEMBERS`: ``name`` (text) or ``name=kind``, kind ``json`` (a JSON
    text), ``num`` (an int or a float), ``N..`` or ``N..M`` (an integer at least N, at most
    M) or ``a|b|c`` (one of these strings); a final ``?``: the value may be null."""
    name, _, kind = spec.rstrip("?").partition("=")
    optional = spec.endswith("?")
    if "|" in kind:
        return Column(name, "str", optional, choices=tuple(kind.split("|")))
    if ".." in kind:
        low, high = kind.split("..")
        return Column(name, "int", optional, minimum=int(low), maximum=int(high) if high else None)
    return Column(name, kind or "str", optional)


def spec_table(text: str) -> dict[str, str]:
    """The ``key: value`` lines of ``text`` as a dict; a line that starts with four spaces
    goes on with the line above."""
    return dict(line.split(": ", 1) for line in text.replace("\n    ", " ").strip().splitlines())


#: Member file -> its columns, in the order written (:func:`_column`). ``study.jsonl`` has
#: one row. Automatic judgments (never evidence): each published import numbered from 1 in
#: the order it was made (``number``: the archive's own key, store ids are not written), and
#: each import's labels naming it by that number.
MEMBERS: dict[str, tuple[Column, ...]] = {
    member: tuple(_column(c) for c in columns.split()) for member, columns in spec_table("""
study.jsonl: name corpus_id retrieval_unit relevance_threshold=1..4 gain=linear|exponential
    org_id? created_at org_name? corpus_owner? measures?
queries.jsonl: query_id text description narrative
documents.jsonl: doc_id title text owner_org? created_at content_hash
runs.jsonl: name source=lexical|imported protocol_json=json corpus_fingerprint? k=1..
    scan_complete=0..1 created_at
results.jsonl: run query_id rank=1.. unit_id score=num?
label_events.jsonl: query_id unit_id kind=label|undo|adjudicate gain=0..4? annotator created_at
    note source
completeness_events.jsonl: query_id state=complete|reopened actor created_at reason
references.jsonl: name created_at created_by content_hash sealed_at?
reference_labels.jsonl: version query_id unit_id gain=0..4
reference_completeness.jsonl: version query_id population_complete=0..1
protocols.jsonl: name protocol_json=json corpus_fingerprint pinned_at pinned_by
protocol_documents.jsonl: protocol doc_id content_hash owner_org?
retrieval_refusals.jsonl: protocol run_name created_at actor message detail_json=json
reports.jsonl: name reference_version? created_at created_by evalcore_version body_json=json
    content_hash
users.jsonl: user_id display_name created_at
members.jsonl: user_id role=annotator|reviewer|lead granted_by granted_at
organisation_members.jsonl: user_id granted_by granted_at role=member|admin|owner
audit.jsonl: created_at actor action detail_json=json channel os_user
samples.jsonl: name run_a run_b measures_json=json seed=0.. size=0.. draws=0.. design_json=json
    created_at created_by grown_at?
sample_units.jsonl: sample position=1.. query_id unit_id stratum=0.. draw=1..
sample_nonresponses.jsonl: sample query_id unit_id kind=skip|cant_judge annotator created_at
automatic_imports.jsonl: number=1.. source file format imported_by imported_at
automatic_labels.jsonl: import=1.. query_id unit_id gain=0..4
""").items()
}

#: Members a format version added (absent from older archives, read as empty).
ADDED_IN: dict[str, int] = dict.fromkeys(
    ("samples.jsonl", "sample_units.jsonl", "sample_nonresponses.jsonl")
    + ("automatic_imports.jsonl", "automatic_labels.jsonl"),
    3,
)


def members_of(version: int = FORMAT_VERSION) -> list[str]:
    """The members an archive of format ``version`` holds."""
    return [m for m in MEMBERS if ADDED_IN.get(m, 1) <= version]


def member_columns(member: str, version: int = FORMAT_VERSION) -> tuple[Column, ...]:
    """The columns of ``member`` in archives of format ``version`` (version 1's organisation
    members have no role)."""
    columns = MEMBERS[member]
    return columns[:3] if version == 1 and member == "organisation_members.jsonl" else columns


class MemberEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    rows: int
    bytes: int
    sha256: str


class Manifest(BaseModel):
    """``manifest.json``: what the archive is and how to check every member."""

    model_config = ConfigDict(extra="forbid")

    format: str
    format_version: int
    schema_version: int
    evalcore_version: str
    study_id: str
    exported_at: str
    exported_by: str
    documents: str
    members: dict[str, MemberEntry]
    #: Members from which the exporter left out what they may not read (rows, or values
    #: such as scores): see docs/access-model.md, "Exports". Empty: nothing was withheld.
    withheld: list[str] = []


class ArchiveSignature(BaseModel):
    """``signature.json``: an HMAC of ``manifest.json``'s bytes and the id of its key."""

    model_config = ConfigDict(extra="forbid")

    algorithm: str
    key_id: str
    manifest_hmac: str


class ArchiveOrigin(FrozenModel):
    """What is known of who wrote an archive: verified with the reader's key, or not."""

    verified: bool
    signed: bool
    key_id: str | None = None
    note: str


def load_signing_key(path: str | Path) -> bytes:
    """The signing key in the file at ``path`` (surrounding whitespace dropped).

    ValueError, naming the file and the fix, when it cannot be read, is shorter than
    :data:`KEY_MIN_BYTES`, or is readable by anyone but its owner (a key others can read
    signs nothing: they could forge with it)."""
    key_path = Path(path)
    try:
        mode = key_path.stat().st_mode
        data = key_path.read_bytes() if stat.S_ISREG(mode) else b""
    except OSError as exc:
        raise ValueError(f"cannot read the signing key file {key_path}: "
                         f"{exc.strerror or exc}") from None
    if not stat.S_ISREG(mode):
        raise ValueError(f"the signing key {key_path} is not a regular file")
    if mode & 0o077:
        raise ValueError(f"the signing key file {key_path} may be read by others (mode "
                         f"{stat.S_IMODE(mode):o}): anyone who reads it can forge archives; "
                         f"make it the owner's only: chmod 600 {key_path}")
    key = data.strip()
    if len(key) < KEY_MIN_BYTES:
        raise ValueError(
            f"the signing key in {key_path} is {len(key)} bytes; give at least "
            f"{KEY_MIN_BYTES}, e.g. (umask 077; python3 -c \"import secrets; "
            f"print(secrets.token_hex(32))\" > {key_path})")
    return key


def key_id(key: bytes) -> str:
    """A public name for ``key`` (16 hex digits of a hash): says which key signed, never
    what it is."""
    return hashlib.sha256(b"relevance-ledger archive signing key\0" + key).hexdigest()[:16]


def _hmac(key: bytes, manifest: bytes) -> str:
    """The HMAC-SHA256 of the manifest's exact bytes under ``key``."""
    return hmac.new(key, manifest, hashlib.sha256).hexdigest()


def _sha256(path: Path) -> str:
    with path.open("rb") as stream:
        return hashlib.file_digest(stream, "sha256").hexdigest()


_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def write_member(folder: Path, member: str, rows: Iterable[tuple]) -> MemberEntry:
    """Write ``rows`` (values in :data:`MEMBERS` column order) as the member file in ``folder``:
    one compact JSON object a line, keys in column order."""
    names, path, count = [c.name for c in MEMBERS[member]], folder / member, 0
    with path.open("w", encoding="utf-8") as stream:
        for count, row in enumerate(rows, 1):
            stream.write(_ENCODER.encode(dict(zip(names, row, strict=True))) + "\n")
            if not count % 10_000:
                reporter().advance(10_000)
    reporter().advance(count % 10_000)
    return MemberEntry(rows=count, bytes=path.stat().st_size, sha256=_sha256(path))


def write_zip(folder: Path, manifest: Manifest, out: Path, *,
              signing_key: bytes | None = None) -> None:
    """Zip ``manifest`` and the member files in ``folder`` into ``out``, with
    ``signature.json`` when a ``signing_key`` is given. Every entry has a fixed time, so the
    same members always make the same zip."""
    manifest_bytes = (manifest.model_dump_json(indent=2) + "\n").encode("utf-8")
    entries = {MANIFEST: manifest_bytes}
    if signing_key is not None:
        signature = ArchiveSignature(algorithm="HMAC-SHA256", key_id=key_id(signing_key),
                                     manifest_hmac=_hmac(signing_key, manifest_bytes))
        entries[SIGNATURE] = (signature.model_dump_json(indent=2) + "\n").encode("utf-8")
    entries |= dict.fromkeys(MEMBERS)
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=6) as archive:
        for name, data in entries.items():
            info = zipfile.ZipInfo(name, (1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            with archive.open(info, "w") as dst:
                if data is None:
                    with (folder / name).open("rb") as src:
                        shutil.copyfileobj(src, dst, 1024 * 1024)
                else:
                    dst.write(data)


@dataclass
class OpenedArchive:
    """An unpacked, checked archive: its manifest and its members' rows."""

    name: str
    folder: Path
    manifest: Manifest
    origin: ArchiveOrigin

    def rows(self, member: str) -> Iterator[dict[str, Any]]:
        """The member's rows as dicts (already checked by :func:`open_archive`), in the
        columns of this format version (:data:`MEMBERS`): a column an older version lacks
        has its default (an organisation member's role: ``member``)."""
        if member not in self.manifest.members:  # added by a later format version
            return
        added = {c.name: "member" for c in MEMBERS[member][
            len(member_columns(member, self.manifest.format_version)):]}
        with (self.folder / member).open(encoding="utf-8") as stream:
            for line in stream:
                yield {**json.loads(line), **added} if added else json.loads(line)


_NOT_AN_ARCHIVE = "give a file written by `evalcore export study`"
_REEXPORT = "export the study again with `evalcore export study` and import that archive"


def open_archive(path: Path, workdir: Path, *, known_schema: int,
                 signing_key: bytes | None = None, accept_unsigned: bool = False,
                 limits: ReadLimits = DEFAULT_LIMITS) -> OpenedArchive:
    """Unpack the archive at ``path`` into ``workdir`` and check it (see the module docstring):
    its signature first when ``signing_key`` is given.

    ``limits`` bound what the zip unpacks to and each member's rows (a row holds
    at most one document: :func:`max_row_bytes`).
    """
    name = path.name
    hint = "give a study archive written by `evalcore export study`"
    extract_zip(path, name, workdir, max_unzipped=limits.max_unpacked_bytes, hint=hint)
    manifest_path = workdir / MANIFEST
    if not manifest_path.is_file():
        raise InputErrors.one(name, f"no {MANIFEST} in the archive: not a study archive", _NOT_AN_ARCHIVE)
    manifest = _manifest(name, manifest_path, known_schema)
    signed = manifest_path.read_bytes(), workdir / SIGNATURE
    origin = _origin(name, *signed, signing_key, accept_unsigned)
    version = manifest.format_version
    expected = set(members_of(version))
    listed = set(manifest.members)
    present = {p.relative_to(workdir).as_posix() for p in workdir.rglob("*") if p.is_file()}
    present.discard(MANIFEST)
    if manifest.format_version >= 2:
        present.discard(SIGNATURE)
    problems = [f"member {m!r} is missing from the manifest" for m in sorted(expected - listed)]
    problems += [f"member {m!r} is listed in the manifest but not in the zip"
                 for m in sorted(listed - present)]
    problems += [f"unexpected member {m!r} (not part of format version {version})"
                 for m in sorted((present | listed) - expected)]
    if problems:
        raise InputErrors([InputError(file=name, message=p, hint=_REEXPORT) for p in problems])
    reporter().stage(f"checking {name}", sum(e.rows for e in manifest.members.values()), "rows")
    for member in members_of(version):
        _check_member(name, workdir, member, manifest, limits)
    return OpenedArchive(name, workdir, manifest, origin)


_UNVERIFIED = ("its origin is unverified: anyone could have written or altered it (member "
               "hashes prove only that it is whole)")


def _origin(name: str, manifest: bytes, signature_path: Path, key: bytes | None,
            accept_unsigned: bool) -> ArchiveOrigin:
    """Check ``signature.json`` against the manifest's bytes (see the module docstring)."""
    signature: ArchiveSignature | None = None
    if signature_path.is_file():
        try:
            signature = ArchiveSignature.model_validate_json(signature_path.read_bytes())
        except (ValidationError, ValueError):
            raise InputErrors.one(name, f"{SIGNATURE} is malformed", _REEXPORT) from None
        if signature.algorithm != "HMAC-SHA256":
            raise InputErrors.one(name, f"{SIGNATURE} names algorithm {signature.algorithm[:80]!r}; this "
                              "evalcore verifies HMAC-SHA256 only", _REEXPORT)
    if key is None:
        state = f"signed with key {signature.key_id}, but " if signature else "not signed, and "
        note = (f"the archive is {state}no signing key is configured to verify it: "
                f"{_UNVERIFIED}; set the organisation's key (--signing-key FILE or "
                "RELEVANCE_LEDGER_ARCHIVE_KEY_FILE) to verify archives")
    elif signature is None:
        if not accept_unsigned:
            raise InputErrors.one(name, f"the archive is not signed, and a signing key (id {key_id(key)}) "
                              f"is configured: {_UNVERIFIED}; nothing was written",
                        "ask its exporter for an archive signed with your organisation's key, "
                        "or import it with --accept-unsigned to take it as unverified (recorded "
                        "in the audit log)")
        note = f"the archive is not signed (accepted unsigned, as asked): {_UNVERIFIED}"
    else:
        mine = key_id(key)
        if signature.key_id != mine:
            raise InputErrors.one(name, f"the archive is signed with key {signature.key_id[:16]}, not with "
                              f"the configured key {mine}: it cannot be verified; nothing was "
                              "written", "give the key it was signed with (--signing-key FILE)")
        if not hmac.compare_digest(_hmac(key, manifest), signature.manifest_hmac):
            raise InputErrors.one(name, "the archive's signature does not match its manifest: it was "
                              "altered after it was signed; nothing was written",
                        "import the archive its exporter signed, or ask them to export it again")
        note = f"the archive's origin is verified: signed with key {mine}"
    signed = signature is not None
    return ArchiveOrigin(verified=signed and key is not None, signed=signed,
                         key_id=signature.key_id if signature else None, note=note)


def max_row_bytes(limits: ReadLimits) -> int:
    """The longest member row read: one document, JSON-escaped (a control character takes six
    bytes), with its other columns."""
    return 6 * limits.max_document_bytes + 64 * 1024


def _manifest(name: str, path: Path, known_schema: int) -> Manifest:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputErrors.one(name, f"{MANIFEST} is not valid JSON: {exc}", _REEXPORT) from None
    if not isinstance(raw, dict) or raw.get("format") != FORMAT:
        message = f"{MANIFEST} does not name the format {FORMAT!r}: not a study archive"
        raise InputErrors.one(name, message, _NOT_AN_ARCHIVE)
    version = raw.get("format_version")
    if version not in READABLE_VERSIONS or isinstance(version, bool):
        raise InputErrors.one(name, f"archive format version {version!r}"[:120] + " is not one this "
                          f"evalcore reads (it reads version "
                          f"{', '.join(map(str, READABLE_VERSIONS))})",
                    "import it with the evalcore version that wrote it, or upgrade")
    try:
        manifest = Manifest.model_validate(raw)
    except ValidationError as exc:
        raise InputErrors.one(name, f"{MANIFEST} is malformed: {exc.errors()[0]['msg']} at "
                          f"{'.'.join(str(p) for p in exc.errors()[0]['loc'])}", _REEXPORT) from None
    if manifest.schema_version > known_schema:
        raise InputErrors.one(name, f"the archive was written by a store at schema version "
                          f"{manifest.schema_version}, newer than this evalcore's {known_schema}",
                    "upgrade relevance-ledger to import it")
    return manifest


def _check_member(name: str, folder: Path, member: str, manifest: Manifest,
                  limits: ReadLimits) -> None:
    """``member`` against its manifest entry (hash, size, rows) and its columns, row by row."""
    path, max_row, where = folder / member, max_row_bytes(limits), f"{name}:{member}"
    entry, columns = manifest.members[member], member_columns(member, manifest.format_version)
    digest, size = _sha256(path), path.stat().st_size
    if digest != entry.sha256 or size != entry.bytes:
        raise InputErrors.one(where, f"sha256 {digest[:16]}... ({size:,} bytes) does not match the "
                                  f"manifest's {entry.sha256[:16]}... ({entry.bytes:,} bytes): "
                                  "the member was altered or damaged after export", _REEXPORT)
    log, rows = ErrorLog(where), 0
    with path.open("rb") as stream:
        for rows, raw in enumerate(iter(partial(stream.readline, max_row + 1), b""), 1):
            if len(raw) > max_row:
                raise InputErrors.one(where, f"a row longer than {max_row:,} bytes: larger than one "
                                          "document may be; reading stopped here",
                                    f"raise the bound with {DOCUMENT_OPTION} if the archive is "
                                    "genuine", line=rows)
            if not rows % 10_000:
                reporter().advance(10_000)
            try:
                _check_row(log, where, rows, raw.decode("utf-8"), columns)
            except UnicodeDecodeError as exc:
                log.append(InputError(file=where, line=rows, message=f"not UTF-8: {str(exc)[:200]}"))
    reporter().advance(rows % 10_000)
    if rows != entry.rows:
        message = f"{rows:,} row(s), the manifest says {entry.rows:,}"
        log.append(InputError(file=where, message=message, hint=_REEXPORT))
    if member == "study.jsonl" and rows != 1:
        log.append(InputError(file=where, message="must hold exactly one row"))
    log.raise_if_any()


def _check_row(log: ErrorLog, where: str, number: int, line: str,
               columns: tuple[Column, ...]) -> None:
    try:
        record = json.loads(line)
    except (json.JSONDecodeError, RecursionError, ValueError) as exc:
        log.append(InputError(file=where, line=number, message=f"not a JSON line: {exc}"))
        return
    if "\\u" in line and (bad := not_text(record, nul=True)):  # no store holds a NUL
        log.append(InputError(file=where, line=number, field=bad[0] or None, message=bad[1]))
        return
    if not isinstance(record, dict) or list(record) != [c.name for c in columns]:
        keys = list(record) if isinstance(record, dict) else type(record).__name__
        log.append(InputError(file=where, line=number, message=(
            f"expected the columns {[c.name for c in columns]}, got {keys}")))
        return
    for column in columns:
        problem = _value_problem(column, record[column.name])
        if problem:
            log.append(InputError(file=where, line=number, field=column.name, message=problem))


def _value_problem(column: Column, value: object) -> str | None:
    if value is None:
        return None if column.optional else "must not be null"
    if column.kind in ("str", "json"):
        if not isinstance(value, str):
            return f"must be a string, got {type(value).__name__}"
        if column.kind == "json":
            try:
                json.loads(value)
            except (json.JSONDecodeError, RecursionError, ValueError):
                return "must be a JSON text"
    elif column.kind == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            return f"must be an integer, got {value!r}"[:200]
    elif isinstance(value, bool) or not isinstance(value, int | float) or (
            isinstance(value, float) and value != value) or value in (float("inf"), float("-inf")):
        return f"must be a finite number, got {value!r}"[:200]
    if column.choices and value not in column.choices:
        return f"must be one of {list(column.choices)}, got {value!r}"[:200]
    if column.minimum is not None and value < column.minimum:  # type: ignore[operator]
        return f"must be at least {column.minimum}, got {value!r}"
    if column.maximum is not None and value > column.maximum:  # type: ignore[operator]
        return f"must be at most {column.maximum}, got {value!r}"
    return None
