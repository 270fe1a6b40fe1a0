"""The command line's last line of defence: every failure becomes a message and an exit status.

:func:`report_failure` prints what went wrong, where and what to do: 2 for bad input, 1 for
the environment (a full disk, a locked store) and for a refusal. An unexpected exception is
a bug: a short message and the hint ``EVALCORE_DEBUG=1``, which shows the traceback.
"""

from __future__ import annotations

import errno
import os
import sqlite3

import click
from pydantic import ValidationError

from evalcore.contract.limits import clipped
from evalcore.io.errors import InputErrors, validation_messages
from evalcore.store import dialect

#: Set to 1 to let unexpected exceptions show their traceback.
DEBUG_ENV = "EVALCORE_DEBUG"

#: OSErrors caused by a path the user gave (bad input, exit 2); the rest are the environment's.
_BAD_PATH_ERRNOS = frozenset({errno.ENOENT, errno.EEXIST, errno.EISDIR, errno.ENOTDIR, errno.ENAMETOOLONG,
                              errno.EINVAL, errno.ELOOP})

_DISK_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})


def debugging() -> bool:
    return os.environ.get(DEBUG_ENV) == "1"


def _os_error(exc: OSError) -> tuple[str, int]:
    where = f" {exc.filename}" if exc.filename is not None else ""
    reason = exc.strerror or str(exc) or type(exc).__name__
    if exc.errno in _DISK_ERRNOS:
        return (f"cannot write{where}: {reason}; free some disk space (or write elsewhere) "
                "and run the command again; nothing partial was kept", 1)
    if exc.errno in _BAD_PATH_ERRNOS:
        return f"cannot use{where}: {reason}; check the path", 2
    if isinstance(exc, PermissionError) and exc.errno is None:
        return f"refused: {exc}", 1  # an access decision (evalcore.access.PermissionDenied)
    return f"cannot read or write{where}: {reason}; check the file and its permissions", 1


def _sqlite_error(exc: Exception) -> tuple[str, int]:
    """A store error (SQLite's or PostgreSQL's) for a person, with its exit status."""
    text = str(exc)
    state = getattr(exc, "sqlstate", None)
    if state is None and not isinstance(exc, sqlite3.Error) and "connection" in text:
        return (f"cannot connect to the PostgreSQL store: {text}; check the --db URL and that "
                "the server is running", 2)
    if "full" in text or state == "53100":
        return (f"the store could not be written: {text}; free some disk space and run the "
                "command again (the interrupted transaction was rolled back)", 1)
    if dialect.is_busy(exc):
        return (f"the store is busy: {text}; another process holds its write lock, try again "
                "in a moment", 1)
    if isinstance(exc, sqlite3.DatabaseError) and ("not a database" in text
                                                   or "malformed" in text):
        return (f"--db is not a usable evidence store: {text}; check the path (create one with "
                "`evalcore init`, restore a backup if it is damaged)", 2)
    return f"the store reported an error: {text}; check --db and try again", 1


def report_failure(command: str, exc: Exception) -> int:
    """Print ``exc`` for a person (no traceback) and return the exit status it deserves."""
    if isinstance(exc, InputErrors):
        for line in str(exc).splitlines():
            click.echo(line, err=True)
        at_least = "at least " if exc.stopped else ""
        click.echo(f"evalcore {command}: {at_least}{exc.total} input error(s); nothing was "
                   "written", err=True)
        return 2
    if isinstance(exc, OSError):
        message, status = _os_error(exc)
    elif isinstance(exc, dialect.database_errors()):
        message, status = _sqlite_error(exc)
    elif isinstance(exc, LookupError):  # unknown study, run, reference, protocol ...
        message, status = f"{exc.args[0] if exc.args else exc}", 2
    elif isinstance(exc, ValidationError):  # values a person typed: field and message
        message, status = "; ".join(validation_messages(exc)), 2
    elif isinstance(exc, (ValueError, OverflowError)):
        message, status = f"{exc}", 2
    elif isinstance(exc, MemoryError):
        message, status = "out of memory; the input is too large for this machine", 1
    else:
        click.echo(f"error: evalcore {command} stopped on an unexpected "
                   f"{type(exc).__name__}: {str(exc)[:300]}", err=True)
        click.echo(f"this is a bug; rerun with {DEBUG_ENV}=1 to see the traceback and report it",
                   err=True)
        return 1
    click.echo(f"error: {clipped(message)[:2000]}", err=True)
    return status
