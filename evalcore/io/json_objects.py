"""JSON-object-per-line files (BEIR corpora and queries, labels JSONL): the shared loop.

Blank lines are skipped (JSONL has no comments). A line that is not JSON, is
nested too deeply, or is not an object is logged with its line number and
skipped, so every bad line of a file is reported in one pass.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from evalcore.io.errors import ErrorLog
from evalcore.io.text_lines import SourceText, numbered_lines


def json_objects(source: SourceText, log: ErrorLog) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, object)`` for every line holding a JSON object."""
    for number, text in numbered_lines(source.text, comments=False):
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as exc:
            log.add(
                number,
                None,
                f"not valid JSON: {exc.msg} (column {exc.colno})",
                "each line must hold one JSON object",
            )
            continue
        except RecursionError:
            log.add(number, None, "not valid JSON: nested too deeply")
            continue
        if not isinstance(obj, dict):
            log.add(number, None, "must be a JSON object")
            continue
        yield number, obj
