"""Safe, bounded extraction of an uploaded zip (a BEIR dataset folder).

Everything is checked *while streaming*, so a hostile zip costs at most the
limits below in disk, memory and time, never what it claims or hides:

* the archive must open as a zip, hold at most :data:`MAX_ZIP_MEMBERS` entries
  and declare at most ``max_unzipped`` bytes in total;
* every entry must have a safe relative path (no absolute path, ``..``, drive
  letter, NUL byte or link), must not be encrypted and must use a compression
  method Python can read (stored, deflate, bzip2, lzma);
* while an entry is copied (1 MiB at a time) the bytes actually produced are
  counted by the unpacking budget every decompressing reader shares
  (:class:`evalcore.io.decompress.UnpackBudget`): more than it declared, more
  than ``max_unzipped`` in total, or more than
  :data:`~evalcore.contract.limits.MAX_UNPACK_RATIO` times its compressed size (a zip
  bomb) stops the extraction at once;
* a corrupt entry (bad CRC, truncated data) is an error naming the entry.

Every refusal is an :class:`~evalcore.io.errors.InputErrors` naming the upload
(``name``) and the entry; nothing outside ``workdir`` is ever written.
"""

from __future__ import annotations

import lzma
import re
import stat
import zipfile
import zlib
from io import BytesIO
from pathlib import Path, PurePosixPath

from evalcore.contract.limits import MAX_UNPACKED_BYTES, ReadLimits
from evalcore.io.decompress import BLOCK, UnpackBudget
from evalcore.io.errors import InputErrors
from evalcore.io.progress import reporter

#: Largest number of entries in a zip.
MAX_ZIP_MEMBERS = 10_000

_SUPPORTED = {zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA}
_ENCRYPTED_FLAG = 0x1
_NO_PASSWORD = "zip the dataset again without a password"
_DEFLATE = "zip the dataset again with ordinary (deflate) compression"
#: What a damaged entry raises while it is read.
_CORRUPT = (zipfile.BadZipFile, zlib.error, EOFError, lzma.LZMAError, OSError, ValueError)


def _entry_name(member: zipfile.ZipInfo) -> str:
    return re.sub(r"[\x00-\x1f\x7f]+", "_", member.filename)[:200]


class _Extraction:
    def __init__(self, name: str, max_unzipped: int) -> None:
        self.name = name
        self.max_unzipped = max_unzipped
        self.progress = reporter()
        advice = "if it is genuine, unzip it and import the folder from the command line"
        limits = ReadLimits(max_unpacked_bytes=max_unzipped)
        self.budget = UnpackBudget(name, limits, bomb="a zip bomb", advice=advice)

    def fail(self, message: str, hint: str | None = None) -> InputErrors:
        return InputErrors.one(self.name, message, hint)

    def check_declared(self, members: list[zipfile.ZipInfo]) -> None:
        if len(members) > MAX_ZIP_MEMBERS:
            count = f"{len(members):,} entries"
            raise self.fail(f"the zip holds {count}; at most {MAX_ZIP_MEMBERS:,} are accepted")
        declared = sum(m.file_size for m in members)
        if declared > self.max_unzipped:
            raise self.fail(f"the zip unpacks to {declared:,} bytes; at most "
                            f"{self.max_unzipped:,} are accepted",
                            "import a larger dataset from the command line (evalcore import "
                            "beir FOLDER)")
        for member in members:
            entry = _entry_name(member)
            if member.flag_bits & _ENCRYPTED_FLAG:
                raise self.fail(f"zip entry {entry!r} is encrypted", _NO_PASSWORD)
            if member.compress_type not in _SUPPORTED:
                method = f"compression method {member.compress_type}"
                raise self.fail(f"zip entry {entry!r} uses {method}, which cannot be read",
                                _DEFLATE)
            what = f"zip entry {entry!r}"
            self.budget.check_ratio(member.file_size, member.compress_size, what=what)

    def copy(self, archive: zipfile.ZipFile, member: zipfile.ZipInfo, target: Path) -> None:
        entry = _entry_name(member)
        what = f"zip entry {entry!r}"
        written = 0
        try:
            with archive.open(member) as src, target.open("wb") as dst:
                while chunk := src.read(BLOCK):
                    written += len(chunk)
                    if written > member.file_size:
                        raise self.fail(f"zip entry {entry!r} unpacks to more than the "
                                        f"{member.file_size:,} bytes it declares")
                    self.budget.add(len(chunk), what="the zip")
                    self.budget.check_ratio(written, member.compress_size, what=what)
                    dst.write(chunk)
                    self.progress.advance(len(chunk))
        except InputErrors:
            raise
        except NotImplementedError:
            problem = f"zip entry {entry!r} uses a compression method that cannot be read"
            raise self.fail(problem, _DEFLATE) from None
        except RuntimeError:  # zipfile: "File ... is encrypted, password required"
            raise self.fail(f"zip entry {entry!r} is encrypted", _NO_PASSWORD) from None
        except _CORRUPT as exc:
            if isinstance(exc, OSError) and exc.errno is not None:
                raise  # the disk, not the zip (e.g. no space left): the environment's failure
            hint = "download or zip the dataset again"
            raise self.fail(f"zip entry {entry!r} is damaged: {exc}", hint) from None


def extract_zip(data: bytes | Path, name: str, workdir: Path, *,
                max_unzipped: int = MAX_UNPACKED_BYTES,
                hint: str = "upload the BEIR dataset folder as a .zip") -> None:
    """Extract the zip ``data`` (its bytes, or a zip file's path; named ``name`` in messages)
    into ``workdir``; see the module. ``hint``: what to do when it is not a zip at all."""
    job = _Extraction(name, max_unzipped)
    try:
        archive = zipfile.ZipFile(data if isinstance(data, Path) else BytesIO(data))
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, ValueError):
        raise job.fail("not a zip file (or a damaged one)", hint) from None
    with archive:
        members = archive.infolist()
        job.check_declared(members)
        reporter().stage(f"unpacking {name}", sum(m.file_size for m in members), "B")
        for member in members:
            parts = _safe_parts(member)
            if parts is None:
                raise job.fail(f"zip entry {_entry_name(member)!r} has an unsafe path "
                               "(absolute, '..', a drive or a link)",
                               "zip the dataset folder itself")
            if not parts:
                continue
            target = workdir.joinpath(*parts)
            if member.is_dir():
                target.mkdir(parents=True, exist_ok=True)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            job.copy(archive, member, target)


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
