"""Input limits: the longest id, name, note and document accepted, the deepest cutoff, and the
bounds on unpacking.

The one place these numbers are written; readers, the store and the command line read them
from here, and ``docs/input-limits.md`` lists them. Each limit is far above what a genuine
collection needs and far below what would exhaust a machine, so an oversized value is
refused with a message that names it, its length and the limit, instead of being stored or
echoed whole. A compressed file may unpack to at most :data:`MAX_UNPACK_RATIO` times the
compressed bytes read so far (past its first :data:`RATIO_FREE_BYTES`): text compresses
3-10 times, a decompression bomb 1000 times. Messages quote at most
:data:`MAX_QUOTED_CHARS` characters of any value a person gave (:func:`quoted`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MiB = 1024 * 1024
GiB = 1024 * MiB

#: Query, document and unit ids.
MAX_ID_CHARS = 1024
#: Study, corpus, organisation and user ids.
MAX_KEY_CHARS = 512
#: Names of runs, studies, reference versions, pinned protocols and reports.
MAX_NAME_CHARS = 200
#: A label's note (the app's note box too); the reason given for a completeness claim.
MAX_NOTE_CHARS = 2_000
#: An information need's description or narrative.
MAX_NEED_CHARS = 20_000
#: Characters of a person's input quoted in an error message.
MAX_QUOTED_CHARS = 200
#: The deepest cutoff ``k``: an SQLite INTEGER (2^63 - 1); larger values are refused as input.
MAX_K: int = 2**63 - 1

#: Default bound on one document (record, line), in bytes.
MAX_DOCUMENT_BYTES = 10 * MiB
#: Default bound on what one compressed file or zip unpacks to, in bytes.
MAX_UNPACKED_BYTES = 2 * GiB
#: Largest unpacked/compressed ratio past :data:`RATIO_FREE_BYTES` (a bomb's is ~1000).
MAX_UNPACK_RATIO = 100
#: Output below this may have any ratio (a small file of blanks compresses well).
RATIO_FREE_BYTES = MiB


@dataclass(frozen=True)
class ReadLimits:
    """The bounds a reader applies to one input (see the module docstring)."""

    max_document_bytes: int = MAX_DOCUMENT_BYTES
    max_unpacked_bytes: int = MAX_UNPACKED_BYTES

    def __post_init__(self) -> None:
        if self.max_document_bytes < 1 or self.max_unpacked_bytes < 1:
            raise ValueError("read limits must be positive")

    @classmethod
    def from_options(cls, document_mib: float | None, unpacked_gib: float | None) -> ReadLimits:
        """The limits of the command line's ``--max-document-mib`` / ``--max-unpacked-gib``."""
        return cls(
            max_document_bytes=MAX_DOCUMENT_BYTES if document_mib is None
            else int(document_mib * MiB),
            max_unpacked_bytes=MAX_UNPACKED_BYTES if unpacked_gib is None
            else int(unpacked_gib * GiB))


DEFAULT_LIMITS = ReadLimits()

#: The options that raise the limits, named in the messages that apply them.
DOCUMENT_OPTION = "--max-document-mib"
UNPACKED_OPTION = "--max-unpacked-gib"


def size_text(n: int, *, exact: bool = True) -> str:
    """``10 MiB (10,485,760 bytes)``, ``1,234 bytes``: a byte count as a person reads it (with
    ``exact``, a round size is followed by its bytes, as messages quote limits)."""
    for unit, size in (("GiB", GiB), ("MiB", MiB)):
        if n >= size and n % (size // 1024) == 0:
            value = n / size
            shown = f"{value:g} {unit}" if value == int(value) else f"{value:.2f} {unit}"
            return f"{shown} ({n:,} bytes)" if exact else shown
    return f"{n:,} bytes"


def quoted(value: object, limit: int = MAX_QUOTED_CHARS) -> str:
    """``value`` in quotes for a message, cut to ``limit`` characters with its length named."""
    text = value if isinstance(value, str) else str(value)
    if len(text) <= limit:
        return repr(text)
    return f"{text[:limit]!r}... ({len(text):,} characters)"


#: A run of non-blank characters longer than a quote may be (the slack keeps a quote made by
#: :func:`quoted` or :func:`clipped`, ``'...'...``, from being cut again).
_LONG_WORD = re.compile(rf"\S{{{MAX_QUOTED_CHARS + 16},}}")


def clipped(message: str) -> str:
    """``message`` with every run of more than about :data:`MAX_QUOTED_CHARS` non-blank
    characters (a value a person gave, quoted whole by whoever wrote the message) cut to
    that many, followed by its length."""
    if len(message) <= MAX_QUOTED_CHARS:
        return message
    return _LONG_WORD.sub(
        lambda m: f"{m.group()[:MAX_QUOTED_CHARS]}... ({len(m.group()):,} characters)", message)


def too_long(value: str, limit: int, what: str) -> str | None:
    """The message for ``value`` longer than ``limit`` characters (``what``: "a run name"), or
    None when it fits."""
    if len(value) <= limit:
        return None
    return f"{what} of {len(value):,} characters, starting {quoted(value, 40)}: at most {limit:,}"


def require_fits(value: str, limit: int, what: str, hint: str = "") -> None:
    """ValueError (the :func:`too_long` message, then ``hint``) when ``value`` is too long."""
    problem = too_long(value, limit, what)
    if problem is not None:
        raise ValueError(f"{problem}{'; ' + hint if hint else ''}")


def without_nul(value: str) -> str:
    """``value``, or ValueError if it holds a NUL character: PostgreSQL cannot store one in
    text, and an id that only one engine can hold would make the engines disagree."""
    if "\x00" in value:
        raise ValueError(f"{quoted(value, 40)} contains a NUL character (\\x00), which no "
                         "store can hold: remove it")
    return value
