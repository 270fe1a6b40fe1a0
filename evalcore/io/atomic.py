"""Writing a file all-or-nothing: a temporary file beside it, renamed over it at the end.

A failure while writing leaves the previous file (or no file) and no partial
data. The new file gets the mode a plain ``open(path, "w")`` would give it
(0666 minus the umask), or keeps the mode of the file it replaces, not the
0600 of a bare ``tempfile.mkstemp``.
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from os import PathLike
from pathlib import Path
from typing import TextIO


@contextmanager
def atomic_writer(path: str | PathLike[str], *, newline: str = "\n") -> Iterator[TextIO]:
    """A UTF-8 text stream whose content replaces ``path`` only if the block succeeds."""
    target = Path(path)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, _mode_for(target))
        with os.fdopen(fd, "w", encoding="utf-8", newline=newline) as stream:
            yield stream
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


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
