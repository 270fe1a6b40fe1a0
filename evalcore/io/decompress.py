"""Input bytes as they were meant: plain, or gzip, bzip2 and xz recognised by content, streamed
within bounds.

Every reader of a file or an upload opens it here (:func:`open_input`), so one
set of rules holds everywhere:

* compression is told by the first bytes (gzip ``1f 8b``, bzip2 ``BZh``, xz
  ``fd 37 7a 58 5a 00``), not by the name: ``corpus.jsonl.gz``, a gzip named
  ``qrels.txt`` and a plain file named ``x.gz`` are each read as what they are;
* decompression streams (a block at a time: memory does not grow with the
  input) and is bounded (:class:`UnpackBudget`): at most
  ``ReadLimits.max_unpacked_bytes`` in all, and past its first
  :data:`~evalcore.contract.limits.RATIO_FREE_BYTES` at most
  :data:`~evalcore.contract.limits.MAX_UNPACK_RATIO` times the compressed bytes
  read so far; either refusal is raised at once, naming the file, what it
  unpacked to and the option that raises the bound. The zip extractor
  (:mod:`evalcore.io.zip_extract`) counts its members with the same budget;
* damaged or truncated compressed data is an :class:`InputErrors` naming the
  file, never a traceback;
* the bytes of the file read so far are reported to the progress hook
  (:mod:`evalcore.io.progress`), so every import shows how far it is.

What is done with the bytes (lines, records, documents and their own bounds)
is the readers' business: :mod:`evalcore.io.text_lines`, :mod:`evalcore.io.trec_docs`.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
import stat
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from evalcore.contract.limits import (
    DEFAULT_LIMITS,
    MAX_UNPACK_RATIO,
    RATIO_FREE_BYTES,
    UNPACKED_OPTION,
    ReadLimits,
    size_text,
)
from evalcore.io.progress import reporter

if TYPE_CHECKING:
    from evalcore.io.errors import InputErrors

#: Leading bytes of each compression this module reads.
MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"\x1f\x8b", "gzip"),
    (b"BZh", "bzip2"),
    (b"\xfd7zXZ\x00", "xz"),
)
#: Leading bytes of a zip archive (a member, or an empty archive): refused by name, since
#: read as text it would only show NUL bytes.
ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")
#: File name endings of compressed files (dropped when a format is told by the name).
SUFFIXES = (".gz", ".bz2", ".xz")
#: Bytes read from a file (compressed or not) at a time.
BLOCK = 1024 * 1024
#: What a damaged compressed stream raises while it is read.
_DAMAGED = (OSError, EOFError, zlib.error, lzma.LZMAError, ValueError)


def input_errors(file: str, message: str, hint: str | None = None) -> InputErrors:
    """One :class:`~evalcore.io.errors.InputErrors` (imported here only when raised: the
    columnar TREC reader asks :func:`is_compressed` and must start without pydantic)."""
    from evalcore.io.errors import InputErrors

    return InputErrors.one(file, message, hint)


def compression_of(head: bytes) -> str | None:
    """"gzip", "bzip2" or "xz" when ``head`` (a file's first bytes) starts like one, else None."""
    for magic, kind in MAGIC:
        if head.startswith(magic):
            return kind
    return None


def without_compression_suffix(name: str) -> str:
    """``corpus.jsonl.gz`` -> ``corpus.jsonl`` (for telling a format from the name)."""
    lower = name.lower()
    for suffix in SUFFIXES:
        if lower.endswith(suffix):
            return name[: -len(suffix)]
    return name


class UnpackBudget:
    """Counts what a decompression produced against what it consumed; refuses a bomb.

    :meth:`add` raises :class:`InputErrors` naming ``name`` as soon as the output
    passes ``limits.max_unpacked_bytes``; :meth:`check_ratio` when an output
    passes :data:`RATIO_FREE_BYTES` and :data:`MAX_UNPACK_RATIO` times its input.
    """

    def __init__(self, name: str, limits: ReadLimits = DEFAULT_LIMITS, *,
                 bomb: str = "a decompression bomb",
                 advice: str = "if it is genuine, decompress it yourself and import the plain "
                               "file") -> None:
        self.name = name
        self.limits = limits
        self.produced = 0
        self.bomb = bomb
        self.advice = advice

    def add(self, produced: int, *, what: str = "the file") -> None:
        """``produced`` more bytes came out (of ``what``, named in the refusal)."""
        self.produced += produced
        cap = self.limits.max_unpacked_bytes
        if self.produced > cap:
            raise input_errors(
                self.name,
                f"{what} unpacks to more than {size_text(cap)}: refused",
                f"raise the bound with {UNPACKED_OPTION} if the file is genuine, or split it")

    def check_ratio(self, produced: int, consumed: int, *, what: str = "the file") -> None:
        """Refuse ``produced`` output bytes from ``consumed`` input bytes past the ratio."""
        if produced > RATIO_FREE_BYTES and produced > MAX_UNPACK_RATIO * max(consumed, 1):
            raise input_errors(
                self.name,
                f"{what} unpacks to {produced:,} bytes from {consumed:,}: more than "
                f"{MAX_UNPACK_RATIO} times its compressed size, refused as {self.bomb}",
                self.advice)


class _Unpacking(io.RawIOBase):
    """A raw stream of the decompressed bytes of ``unpacked`` (read from ``raw``), counted
    against the budget, with the raw bytes read reported as progress."""

    def __init__(self, raw: BinaryIO, unpacked: BinaryIO | None, kind: str | None,
                 budget: UnpackBudget) -> None:
        super().__init__()
        self._raw = raw
        self._source = unpacked if unpacked is not None else raw
        self._kind = kind
        self._budget = budget
        self._reported = 0
        self._progress = reporter()

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:  # type: ignore[no-untyped-def, override]
        try:
            n = self._source.readinto(buffer)  # type: ignore[attr-defined]
        except _DAMAGED as exc:
            if isinstance(exc, OSError) and exc.errno is not None:
                raise  # the disk, not the data
            raise self._damaged(exc) from None
        n = n or 0
        consumed = self._raw.tell()
        if self._kind is not None:
            self._budget.add(n)
            self._budget.check_ratio(self._budget.produced, consumed)
        if consumed > self._reported:
            self._progress.advance(consumed - self._reported)
            self._reported = consumed
        return n

    def _damaged(self, exc: BaseException) -> InputErrors:
        if isinstance(exc, EOFError):
            message = f"the {self._kind} data ends early: the file is truncated"
        else:
            message = f"not readable {self._kind} data ({str(exc)[:200]})"
        hint = f"check the file (e.g. `{self._kind} -t`), or give it decompressed"
        return input_errors(self._budget.name, message, hint)

    def close(self) -> None:
        try:
            if self._source is not self._raw:
                self._source.close()
        finally:
            self._raw.close()
            super().close()


@dataclass(frozen=True)
class Opened:
    """An input opened for reading: its (decompressed) bytes and what it was."""

    stream: io.BufferedReader
    name: str
    compression: str | None


def _unpacker(raw: BinaryIO, kind: str) -> BinaryIO:
    if kind == "gzip":
        return gzip.GzipFile(fileobj=raw, mode="rb")  # type: ignore[return-value]
    if kind == "bzip2":
        return bz2.BZ2File(raw, mode="rb")  # type: ignore[return-value]
    return lzma.LZMAFile(raw, mode="rb")  # type: ignore[return-value]


@contextmanager
def open_input(
    source: str | PathLike[str] | bytes,
    name: str | None = None,
    *,
    limits: ReadLimits = DEFAULT_LIMITS,
    stage: bool = True,
) -> Iterator[Opened]:
    """Open a file path or uploaded bytes for streaming reading (see the module docstring).

    ``name`` labels messages (default: the path). With ``stage``, a progress
    stage "reading <name>" is started with the file's size as its total.
    Raises :class:`InputErrors` when the file cannot be opened (missing, a
    directory, a device, no permission).
    """
    label = name if name is not None else str(source) if not isinstance(source, bytes) else "upload"
    raw: BinaryIO
    if isinstance(source, bytes | bytearray | memoryview):
        raw = io.BytesIO(source)
        size: int | None = len(source)
    else:
        raw, size = _open_file(source, label)
    try:
        head = raw.read(8)
        raw.seek(0)
    except OSError as exc:
        raw.close()
        raise _unreadable(label, exc) from None
    if head.startswith(ZIP_MAGIC):
        raw.close()
        raise input_errors(label, "is a zip archive, not a text or gzip, bzip2, xz file",
                           "unzip it and give the file inside (a BEIR dataset: unzip it and "
                           "give its folder to evalcore import beir)")
    kind = compression_of(head)
    if stage:
        reporter().stage(f"reading {Path(label).name}", size, "B")
    unpacking = _Unpacking(raw, _unpacker(raw, kind) if kind else None, kind,
                           UnpackBudget(label, limits))
    stream = io.BufferedReader(unpacking, buffer_size=BLOCK)
    try:
        yield Opened(stream, label, kind)
    finally:
        stream.close()


def _open_file(path: str | PathLike[str], label: str) -> tuple[BinaryIO, int | None]:
    try:
        mode = os.stat(path).st_mode
        if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
            problem = "is a device, not a file (it may never end)"
            raise input_errors(label, problem, "give the path of a file")
        if stat.S_ISDIR(mode):
            raise input_errors(label, "is a directory, expected a file")
        handle = open(path, "rb")  # noqa: SIM115 - closed by open_input
    except FileNotFoundError:
        raise input_errors(label, "file not found", "check the path") from None
    except IsADirectoryError:
        raise input_errors(label, "is a directory, expected a file") from None
    except OSError as exc:
        raise _unreadable(label, exc) from None
    return handle, (os.fstat(handle.fileno()).st_size if stat.S_ISREG(mode) else None)


def _unreadable(label: str, exc: OSError) -> InputErrors:
    return input_errors(label, f"cannot read file: {exc.strerror or exc}")


def is_compressed(path: str | PathLike[str]) -> bool:
    """Does the file at ``path`` start like a compressed file or a zip archive (False when it
    cannot be read)?

    For readers that take plain files only (they leave these to :func:`open_input`, which
    decompresses the one and names the other).
    """
    try:
        with open(path, "rb") as handle:
            head = handle.read(8)
            return compression_of(head) is not None or head.startswith(ZIP_MAGIC)
    except OSError:
        return False
