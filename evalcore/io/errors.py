"""Input errors: what is wrong, where (file, line, field), and what to do.

Readers collect *every* error of an input in an :class:`ErrorLog` and raise
one :class:`InputErrors` at the end, so a user fixes a file in one pass — up to
:data:`STOP_AFTER` errors: then the log raises :class:`ReadingStopped`, the readers'
loops let it propagate, and the user learns at which line reading stopped and that
the count is a lower bound (a file wrong on every line is refused at once). Each
error renders as one line::

    observations.jsonl:7: labels[2].gain: must be an integer 0..4, got 2.5 (true, 2.5, "3", 5, -1 are rejected)

:func:`validation_errors` turns a pydantic ``ValidationError`` into such
errors with friendly messages (missing field, wrong type, out of range,
unknown field with a "did you mean" suggestion).
"""

from __future__ import annotations

import difflib
import json
import types
import typing
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ValidationError

from evalcore.contract.frozen import FrozenModel
from evalcore.contract.limits import clipped

if TYPE_CHECKING:
    from evalcore.io.text_lines import SourceText

#: At most this many errors are kept and printed; all of them are counted.
MAX_REPORTED = 200

#: Reading stops at this many errors (:class:`ReadingStopped`); the count is then a lower bound.
STOP_AFTER = 1_000


class InputError(FrozenModel):
    """One problem in an input file. ``line`` is 1-based, None for the whole file."""

    file: str
    line: int | None = None
    field: str | None = None
    message: str
    hint: str | None = None
    #: True for the notice that reading stopped here (not an error of the input itself).
    stop: bool = False

    def __str__(self) -> str:
        where = self.file if self.line is None else f"{self.file}:{self.line}"
        text = self.message if self.hint is None else f"{self.message} ({self.hint})"
        text = clipped(text)  # a value quoted whole (a 10 MB id) is cut to its start
        field = clipped(self.field) if self.field else None
        return f"{where}: {field}: {text}" if field else f"{where}: {text}"


class InputErrors(ValueError):
    """Every error found in an input (the first :data:`MAX_REPORTED`, and the total count).

    ``errors`` may end with "reading stopped" notices (``stop=True``), which
    ``total`` does not count; :attr:`stopped` tells whether any file was cut short.
    """

    def __init__(self, errors: Sequence[InputError], total: int | None = None) -> None:
        self.errors: list[InputError] = list(errors)
        self.total: int = self.shown if total is None else total
        super().__init__(str(self))

    @classmethod
    def one(
        cls,
        file: str,
        message: str,
        hint: str | None = None,
        *,
        line: int | None = None,
        field: str | None = None,
    ) -> InputErrors:
        """A single error."""
        return cls([InputError(file=file, line=line, field=field, message=message, hint=hint)])

    @classmethod
    def combined(cls, failures: Sequence[InputErrors]) -> InputErrors:
        """The errors of several inputs read in turn, in that order: the first
        :data:`MAX_REPORTED`, every input's total counted, "reading stopped" notices last."""
        errors = [e for failure in failures for e in failure.errors]
        listed = [e for e in errors if not e.stop][:MAX_REPORTED]
        return cls(listed + [e for e in errors if e.stop], sum(f.total for f in failures))

    @property
    def shown(self) -> int:
        """How many errors (not notices) are listed."""
        return sum(1 for e in self.errors if not e.stop)

    @property
    def hidden(self) -> int:
        """How many counted errors are not listed."""
        return max(self.total - self.shown, 0)

    @property
    def stopped(self) -> bool:
        """Was reading stopped early (so ``total`` is a lower bound)?"""
        return any(e.stop for e in self.errors)

    def __str__(self) -> str:
        lines = [str(e) for e in self.errors if not e.stop]
        if self.hidden:
            at_least = "at least " if self.stopped else ""
            lines.append(f"... and {self.hidden} more errors ({at_least}{self.total} in total)")
        lines.extend(str(e) for e in self.errors if e.stop)
        return "\n".join(lines)


class ReadingStopped(InputErrors):
    """Raised by :class:`ErrorLog` when an input reaches its error limit: reading stops there."""


class ErrorLog:
    """Collects the errors of one input; keeps the first ``limit`` and counts all.

    At ``stop_after`` errors, :meth:`append` (and so :meth:`add` and :meth:`extend`)
    raises :class:`ReadingStopped` with the errors kept so far and a notice naming
    the line where reading stopped. Readers do not catch it: their loops end there.
    """

    def __init__(self, file: str, limit: int = MAX_REPORTED, stop_after: int = STOP_AFTER) -> None:
        self.file = file
        self.limit = limit
        self.stop_after = stop_after
        self.errors: list[InputError] = []
        self.total = 0

    @classmethod
    def of(cls, source: SourceText) -> ErrorLog:
        """The log of a decoded input, holding its decoding errors."""
        log = cls(source.name)
        log.extend(source.errors)
        return log

    def __bool__(self) -> bool:
        return self.total > 0

    @property
    def full(self) -> bool:
        """Has the log reached ``stop_after`` errors (reading must stop)?"""
        return self.total >= self.stop_after

    def add(
        self, line: int | None, field: str | None, message: str, hint: str | None = None
    ) -> None:
        self.append(InputError(file=self.file, line=line, field=field, message=message, hint=hint))

    def append(self, error: InputError) -> None:
        """Log one error; raise :class:`ReadingStopped` when it is the ``stop_after``-th."""
        self.total += 1
        if len(self.errors) < self.limit:
            self.errors.append(error)
        if self.full:
            raise ReadingStopped([*self._ordered(), self._stop_notice(error.line)], self.total)

    def _stop_notice(self, line: int | None) -> InputError:
        where = "" if line is None else f" at line {line}"
        return InputError(
            file=self.file,
            line=line,
            stop=True,
            message=(
                f"reading stopped{where} after {self.total:,} errors; the rest of the file was "
                f"not checked, so it may hold more ({self.total:,} is a lower bound)"
            ),
            hint="fix these (is it the right kind of file?) and read it again",
        )

    def _ordered(self) -> list[InputError]:
        return sorted(self.errors, key=lambda e: e.line or 0)

    def extend(self, errors: Iterable[InputError]) -> None:
        for e in errors:
            self.append(e)

    def raise_if_any(self) -> None:
        """Raise :class:`InputErrors` (sorted by line) when anything was logged."""
        if self.total:
            raise InputErrors(self._ordered(), self.total)

    def finish(self, found: object, message: str, hint: str | None = None) -> None:
        """Log ``message`` for the whole input when nothing was ``found`` and nothing logged
        (an input without a record is an error), then raise every error."""
        if not found and not self.total:
            self.add(None, None, message, hint)
        self.raise_if_any()


# --- pydantic ValidationError -> InputError --------------------------------------------------

#: What a field must be, keyed by its path with list indices / mapping keys as ``*``.
_EXPECTED: dict[str, tuple[str, str | None]] = {
    "query_id": ("a non-empty string", None),
    "corpus_id": ("a string or null", None),
    "corpus_fingerprint": ("a string or null", None),
    "cutoff": ('an ISO 8601 date-time such as "2026-06-30T00:00:00Z", or null', None),
    "retrieval_unit": ('a string such as "document" or "passage"', None),
    "k": ("an integer >= 1", "k is the cutoff depth: positions 1..k are measured; at most 2^63-1"),
    "returned_ids": ("a list of unit IDs, best first", None),
    "returned_ids.*": ("a non-empty string", None),
    "scores": ("a list of numbers or null", None),
    "scores.*": ("a finite number", None),
    "labels": ('a list of {"id": ..., "gain": ...} objects', None),
    "labels.*": ('an object like {"id": "A", "gain": 1}', None),
    "labels.*.id": ("a non-empty string", None),
    "labels.*.gain": ("an integer 0..4", 'true, 2.5, "3", 5, -1 are rejected'),
    "labels.*.conflict": (
        "a list of at least two distinct gains 0..4",
        'a label in conflict reads {"id": "X", "conflict": [0, 2]}',
    ),
    "labels.*.conflict.*": ("an integer 0..4", 'true, 2.5, "3", 5, -1 are rejected'),
    "population_complete": (
        "true or false",
        "true declares that every relevant unit of the query is in labels",
    ),
    "scan_complete": ("true or false", None),
    "permitted_ids": ("a list of unit IDs or null", None),
    "permitted_ids.*": ("a non-empty string", None),
    "unit_of": ("an object mapping returned IDs to unit IDs, or null", None),
    "unit_of.*": ("a non-empty string", None),
    "reference_version": ("a string or null", None),
}

#: Fields whose values are mappings: the next path element is a key, not a field.
_MAPPING_FIELDS = frozenset({"unit_of"})


def _paths(loc: Sequence[int | str]) -> tuple[str, str]:
    """(``loc`` as shown: ``labels[2].gain``, ``unit_of["A"]``; its :data:`_EXPECTED` key:
    list indices and mapping keys as ``*``)."""
    shown = ""
    parts: list[str] = []
    previous: int | str | None = None
    for part in loc:
        if isinstance(part, int):
            shown += f"[{part}]"
        elif previous in _MAPPING_FIELDS:
            shown += f"[{json.dumps(part, ensure_ascii=False)}]"
        else:
            shown += f".{part}" if shown else part
        parts.append("*" if isinstance(part, int) or previous in _MAPPING_FIELDS else part)
        previous = part
    return shown, ".".join(parts)


def show_value(value: Any, limit: int = 60) -> str:
    """A JSON-ish rendering of a bad input value, shortened for messages."""
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _model_at(model: type[BaseModel], path: Sequence[int | str]) -> type[BaseModel] | None:
    """The model class that holds the fields at ``path`` (list indices are skipped)."""
    current: type[BaseModel] | None = model
    for part in path:
        if isinstance(part, int):
            continue
        field = current.model_fields.get(part) if current else None
        if field is None:
            return None
        current = _inner_model(field.annotation)
    return current


def _inner_model(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is not None:
        for arg in typing.get_args(annotation):
            found = _inner_model(arg)
            if found is not None:
                return found
    return None


def suggest(name: str, candidates: Iterable[str]) -> str | None:
    """The closest candidate to a misspelled ``name``, or None."""
    match = difflib.get_close_matches(name, list(candidates), n=1, cutoff=0.6)
    return match[0] if match else None


def validation_messages(exc: ValidationError) -> list[str]:
    """``field: message`` for every error of a ``ValidationError`` raised on values a person
    typed (a command-line option, a form), never pydantic's own multi-line text."""
    return [f"{e.field}: {e.message}" if e.field else e.message
            for e in validation_errors(exc, file="", line=None, model=None)]


def validation_errors(
    exc: ValidationError, *, file: str, line: int | None, model: type[BaseModel] | None
) -> list[InputError]:
    """Friendly :class:`InputError` s for every error in a pydantic ``ValidationError``."""
    out: list[InputError] = []
    for err in exc.errors(include_url=False):
        loc = tuple(err["loc"])
        shown, pattern = _paths(loc)
        field = shown or None
        kind = err["type"]
        message: str
        hint: str | None = None
        if kind == "missing":
            message = f"missing required field '{loc[-1]}'"
            hint = _EXPECTED.get(pattern, (None, None))[1]
        elif kind in ("string_too_long", "too_long") and "max_length" in err.get("ctx", {}):
            value = err.get("input")
            size = f"{len(value):,} " if isinstance(value, (str, list)) else ""
            unit = "items" if isinstance(value, list) else "characters"
            message = f"at most {err['ctx']['max_length']:,} {unit}, got {size}{unit}"
        elif kind == "extra_forbidden":
            holder = _model_at(model, loc[:-1]) if model is not None else None
            allowed = list(holder.model_fields) if holder else []
            message = f"unknown field '{loc[-1]}'"
            close = suggest(str(loc[-1]), allowed)
            if close:
                message += f"; did you mean '{close}'?"
            elif allowed:
                hint = "allowed fields: " + ", ".join(allowed)
        elif kind == "value_error":
            message = str(err["msg"]).removeprefix("Value error, ")
        else:
            expected = _EXPECTED.get(pattern)
            got = show_value(err.get("input"))
            if expected is not None:
                message = f"must be {expected[0]}, got {got}"
                hint = expected[1]
            else:
                message = f"{err['msg'][:1].lower()}{err['msg'][1:]}, got {got}"
        out.append(InputError(file=file, line=line, field=field, message=message, hint=hint))
    return out
