"""JSON-object-per-line files (observations, labels JSONL, BEIR corpora and queries).

The one loop every JSONL reader shares. Blank lines are skipped (JSONL has no
comments). JSON is read strictly: a key repeated in one object (plain JSON
would silently keep the last value), ``NaN``/``Infinity``, a number too large
for a float (``1e999`` would become infinity), an integer of more than
:data:`MAX_INT_DIGITS` digits (Python refuses to convert those), a lone UTF-16
surrogate (``"\\ud800"``: not text, it cannot be stored) and, for the readers of
values the store keeps (labels, judgments), a NUL character (``"\\u0000"``: no text
holds one, and PostgreSQL cannot store it) are errors naming the line and field
(:func:`not_text`; the document readers check the fields they keep). A line that is not
JSON, is nested too deeply, or is not an object is logged with its line number and
skipped, so every bad line of a file is reported in one pass.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Iterator
from typing import Any

from evalcore.io.errors import ErrorLog
from evalcore.io.text_lines import SourceText, numbered_lines


class _Refused(ValueError):
    """Valid JSON this reader refuses: ``field`` (or None), message and hint for the log."""

    def __init__(self, field: str | None, message: str, hint: str) -> None:
        super().__init__(message)
        self.field, self.message, self.hint = field, message, hint


#: The longest integer a JSON file may hold (Python's int/str conversion limit).
MAX_INT_DIGITS = 4300


def _out_of_range(token: str, why: str) -> _Refused:
    shown = token if len(token) <= 24 else token[:20] + "..."
    hint = "use a finite number within range"
    return _Refused(None, f"number out of range: {shown} is {why}", hint)


def _parse_int(token: str) -> int:
    if len(token.lstrip("-")) > MAX_INT_DIGITS:
        raise _out_of_range(token, f"an integer of {len(token.lstrip('-')):,} digits (more "
                                   f"than {MAX_INT_DIGITS:,})")
    return int(token)


def _parse_float(token: str) -> float:
    value = float(token)
    if not math.isfinite(value):
        raise _out_of_range(token, "a number too large for a float (it would be infinity)")
    return value


def _unique_keys(pairs: list[tuple[str, object]]) -> dict[str, object]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                hint = "JSON objects keep only one value per key; remove one"
                raise _Refused(key, f"field '{key}' appears twice in one object", hint)
            seen.add(key)
    return obj


def _reject_constant(token: str) -> float:
    hint = "use a finite number or null"
    raise _Refused(None, f"not valid JSON: {token} is not a JSON value", hint)


#: Strict JSON: a repeated key or NaN/Infinity is an error, not silently accepted.
_DECODER = json.JSONDecoder(object_pairs_hook=_unique_keys, parse_constant=_reject_constant,
                            parse_int=_parse_int, parse_float=_parse_float)


_KINDS = {dict: "an object", list: "an array", str: "a string", bool: "a boolean"}


def json_kind(value: object) -> str:
    """How a decoded JSON value is named in messages ("an array", "a string", ...)."""
    return "null" if value is None else _KINDS.get(type(value), "a number")


_FAILED = object()
#: Escapes that may decode to a lone surrogate (a pair decodes to one character).
_SUSPECT_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def not_text(value: Any, path: str = "", *, nul: bool = False) -> tuple[str, str, str] | None:
    """(field path, what is wrong, hint) for the first string holding a lone surrogate (or,
    with ``nul``, a NUL character), in ``value`` or the values nested in it."""
    if isinstance(value, str):
        if nul and "\x00" in value:
            return path, "holds a NUL character (\\u0000)", "remove it: no text holds one"
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            problem = (f"holds a lone UTF-16 surrogate (\\u{ord(value[exc.start]):04x} at "
                       f"character {exc.start + 1}), which is not text")
            hint = ("write text as UTF-8 (a character beyond U+FFFF is written as itself or as a "
                    "surrogate pair)")
            return path, problem, hint
        return None
    if isinstance(value, dict):
        for key, item in value.items():
            found = not_text(key, f"{path}.{key}" if path else "key", nul=nul) or not_text(
                item, f"{path}.{key}" if path else str(key), nul=nul)
            if found:
                return found
    elif isinstance(value, list):
        for i, item in enumerate(value):
            if found := not_text(item, f"{path}[{i}]", nul=nul):
                return found
    return None


def _decode(text: str, number: int | None, log: ErrorLog, hint: str, nul: bool = False) -> Any:
    """The strict decoding of ``text``, or ``_FAILED`` (the error logged at ``number``;
    with ``nul``, a NUL character is an error too)."""
    try:
        value = _DECODER.decode(text)
        at = text.find("\\u0000") if nul else -1
        if (at >= 0 or _SUSPECT_ESCAPE.search(text)) and (bad := not_text(value, nul=at >= 0)):
            field, message, hint = bad
            if number is None and at >= 0 and "NUL" in message:  # a whole file: the NUL's line
                number = text.count("\n", 0, at) + 1
            log.add(number, field or None, message, hint)
            return _FAILED
        return value
    except json.JSONDecodeError as exc:
        line = number if number is not None else exc.lineno
        log.add(line, None, f"not valid JSON: {exc.msg} (column {exc.colno})", hint)
    except _Refused as exc:
        log.add(number, exc.field, exc.message, exc.hint)
    except RecursionError:
        log.add(number, None, "not valid JSON: nested too deeply")
    return _FAILED


def json_objects(source: SourceText, log: ErrorLog, *, nul: bool = False
                 ) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, object)`` for every line holding a JSON object (``nul``: a
    line with a NUL character in any string is an error, for readers whose every value
    may be stored)."""
    return json_object_lines(numbered_lines(source.text, comments=False), log, nul=nul)


def json_object_lines(
    lines: Iterable[tuple[int, str]], log: ErrorLog, *, nul: bool = False
) -> Iterator[tuple[int, dict[str, Any]]]:
    """:func:`json_objects` over ``(line_number, line)`` pairs (e.g. streamed from a file)."""
    for number, text in lines:
        obj = _decode(text, number, log, "each line must hold one complete JSON object", nul)
        if obj is _FAILED:
            continue
        if not isinstance(obj, dict):
            log.add(number, None, f"must be a JSON object, got {json_kind(obj)}")
            continue
        yield number, obj


def json_document(source: SourceText, log: ErrorLog, *, nul: bool = False
                  ) -> dict[str, Any] | None:
    """The one JSON object a whole file holds (read as strictly; ``nul``: as
    :func:`json_objects`), or None (logged in ``log``, made by :meth:`ErrorLog.of`)."""
    if not source.text.strip():
        log.add(None, None, "empty file", "the file holds one JSON object")
        return None
    obj = _decode(source.text, None, log, "the file must hold one complete JSON object", nul)
    if obj is _FAILED:
        return None
    if not isinstance(obj, dict):
        log.add(None, None, f"must be a JSON object, got {json_kind(obj)}")
        return None
    return obj
