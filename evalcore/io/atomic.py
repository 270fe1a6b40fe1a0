"""Writing a file all-or-nothing: a temporary file beside it, renamed over it at the end.

A failure while writing leaves the previous file (or no file) and no partial
data. The new file gets the mode a plain ``open(path, "w")`` would give it
(0666 minus the umask), or keeps the mode of the file it replaces, not the
0600 of a bare ``tempfile.mkstemp``.

A target that exists and is not a regular file (``/dev/stdout``, a named pipe,
``/dev/full``) is written in place: renaming over it would replace the device
or pipe with a plain file (as root, even ``/dev/full``). A directory is refused.
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from os import PathLike
from pathlib import Path
from typing import IO, BinaryIO, TextIO


@contextmanager
def atomic_writer(path: str | PathLike[str], *, newline: str = "\n") -> Iterator[TextIO]:
    """A UTF-8 text stream whose content replaces ``path`` only if the block succeeds."""
    with _replacing(path, lambda f: open(f, "w", encoding="utf-8", newline=newline)) as stream:
        yield stream


@contextmanager
def atomic_binary_writer(path: str | PathLike[str]) -> Iterator[BinaryIO]:
    """A binary stream whose content replaces ``path`` only if the block succeeds."""
    with _replacing(path, lambda f: open(f, "wb")) as stream:
        yield stream


@contextmanager
def _replacing(path: str | PathLike[str], opener: Callable[[int | Path], IO]) -> Iterator[IO]:
    """``opener``'s stream on a temporary file renamed over ``path`` at the end (see module)."""
    target = Path(path)
    kind = _existing_kind(target)
    if kind is not None and stat.S_ISDIR(kind):
        raise IsADirectoryError(errno.EISDIR, "is a directory, expected a file", str(target))
    if kind is not None and not stat.S_ISREG(kind):
        with opener(target) as stream:
            yield stream
        return
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, _mode_for(target))
        with opener(fd) as stream:
            yield stream
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


@contextmanager
def atomic_path(path: str | PathLike[str]) -> Iterator[Path]:
    """A temporary path beside ``path`` for a writer that needs a file name (SQLite's
    backup); it replaces ``path`` only if the block succeeds, and is removed otherwise."""
    target = Path(path)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, _mode_for(target))
        os.close(fd)
        yield Path(tmp)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


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
