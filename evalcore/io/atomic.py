"""Writing a file all-or-nothing: a temporary file beside it, renamed over it at the end.

A failure while writing leaves the previous file (or no file) and no partial
data. The new file gets the mode a plain ``open(path, "w")`` would give it
(0666 minus the umask), or keeps the mode of the file it replaces, not the
0600 of a bare ``tempfile.mkstemp`` — unless the caller gives ``mode``: a file
holding a copy of a store's data (a backup, an export, a report) is given
:func:`private_mode` of the store, its permission bits or 0600, whichever is
stricter, so a copy is never readable by more people than the store is.

A target that exists and is not a regular file (``/dev/stdout``, a named pipe,
``/dev/full``) is written in place: renaming over it would replace the device
or pipe with a plain file (as root, even ``/dev/full``). A directory is refused,
and so is a target whose folder does not exist: nothing creates folders
silently (a typo in ``--out`` would otherwise scatter files).

The temporary file is hidden (``.NAME.rl<host>-<pid>-<random>.tmp``). A writer
killed before the rename (``kill -9``, a power cut) leaves it behind; the next
write into the same folder removes such files whose process, on this host, is
gone (with the ``-journal``/``-wal``/``-shm`` files SQLite may have left beside
a backup's copy).
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import socket
import stat
import tempfile
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from os import PathLike
from pathlib import Path
from typing import IO, BinaryIO, TextIO

#: The permission bits a copy of a store's data may have at most (owner read/write).
PRIVATE = 0o600

_HOST = hashlib.sha256(socket.gethostname().encode("utf-8", "replace")).hexdigest()[:8]
_TEMPORARY = re.compile(
    r"^\..+\.rl(?P<host>[0-9a-f]{8})-(?P<pid>\d+)-[A-Za-z0-9_]+\.tmp(-journal|-wal|-shm)?$")


def private_mode(source: str | PathLike[str] | None) -> int:
    """The mode of a file holding a copy of ``source``'s data: ``source``'s permission bits
    or 0600, whichever is stricter (0600 when there is no such file: an in-memory store)."""
    if source is None:
        return PRIVATE
    try:
        return stat.S_IMODE(Path(source).stat().st_mode) & PRIVATE
    except OSError:
        return PRIVATE


def atomic_writer(path: str | PathLike[str], *, newline: str = "\n",
                  mode: int | None = None) -> AbstractContextManager[TextIO]:
    """A UTF-8 text stream whose content replaces ``path`` only if the block succeeds.

    ``mode``: the new file's permission bits (None: the umask's, or the replaced file's)."""
    return _replacing(path, lambda f: open(f, "w", encoding="utf-8", newline=newline), mode)


def atomic_binary_writer(path: str | PathLike[str], *,
                         mode: int | None = None) -> AbstractContextManager[BinaryIO]:
    """A binary stream whose content replaces ``path`` only if the block succeeds."""
    return _replacing(path, lambda f: open(f, "wb"), mode)


@contextmanager
def _replacing(path: str | PathLike[str], opener: Callable[[int | Path], IO],
               mode: int | None) -> Iterator[IO]:
    """``opener``'s stream on a temporary file renamed over ``path`` at the end (see module)."""
    target = Path(path)
    kind = _existing_kind(target)
    if kind is not None and stat.S_ISDIR(kind):
        raise IsADirectoryError(errno.EISDIR, "is a directory, expected a file", str(target))
    if kind is not None and not stat.S_ISREG(kind):
        with opener(target) as stream:
            yield stream
        return
    fd, tmp = _temporary(target)
    try:
        os.fchmod(fd, _mode_for(target) if mode is None else mode)
        with opener(fd) as stream:
            yield stream
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


@contextmanager
def atomic_path(path: str | PathLike[str], *, mode: int | None = None) -> Iterator[Path]:
    """A temporary path beside ``path`` for a writer that needs a file name (SQLite's
    backup); it replaces ``path`` only if the block succeeds, and is removed otherwise.

    The temporary file is the owner's only (0600) while it is written; ``mode`` (None:
    the umask's, or the replaced file's) is set just before the rename."""
    target = Path(path)
    fd, tmp = _temporary(target)
    try:
        os.close(fd)
        yield Path(tmp)
        os.chmod(tmp, _mode_for(target) if mode is None else mode)
        os.replace(tmp, target)
    except BaseException:
        _remove_with_companions(Path(tmp))
        raise


def _temporary(target: Path) -> tuple[int, str]:
    """A new hidden temporary file beside ``target`` (0600), once the folder is checked and
    what killed writers left in it is removed."""
    folder = target.parent
    if not folder.is_dir():
        raise FileNotFoundError(
            errno.ENOENT, "no such folder (evalcore creates none: create it first)",
            str(folder))
    remove_stale_temporaries(folder)
    return tempfile.mkstemp(dir=folder, prefix=f".{target.name}.rl{_HOST}-{os.getpid()}-",
                            suffix=".tmp")


def remove_stale_temporaries(folder: str | PathLike[str]) -> list[Path]:
    """Remove the temporary files that writers on this host, now gone, left in ``folder``
    (killed before their rename); return what was removed."""
    removed: list[Path] = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    for entry in entries:
        found = _TEMPORARY.match(entry.name)
        if found is None or found["host"] != _HOST or _alive(int(found["pid"])):
            continue
        try:
            if entry.is_file(follow_symlinks=False):
                os.unlink(entry.path)
                removed.append(Path(entry.path))
        except OSError:
            continue
    return removed


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):
        return True
    return True


def _remove_with_companions(tmp: Path) -> None:
    for suffix in ("", "-journal", "-wal", "-shm"):
        Path(f"{tmp}{suffix}").unlink(missing_ok=True)


def _existing_kind(target: Path) -> int | None:
    """The file-type bits of ``target`` (following links), or None if it does not exist."""
    try:
        return target.stat().st_mode
    except (FileNotFoundError, NotADirectoryError):
        return None


def _mode_for(target: Path) -> int:
    try:
        return stat.S_IMODE(target.stat().st_mode)
    except FileNotFoundError:
        return 0o666 & ~_umask()


def _umask() -> int:
    """The process umask, read without changing it where the OS allows."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except OSError:
        pass
    mask = os.umask(0o022)  # elsewhere: the classic set-and-restore
    os.umask(mask)
    return mask
