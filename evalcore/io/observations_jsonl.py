"""Observation JSONL (evidence contract section 2): one JSON object per line.

:func:`read_observations` validates the whole file and either returns every
observation or raises :class:`~evalcore.io.errors.InputErrors` listing every
schema error with its line and field: a line that is not JSON or not an
object, a missing required field, ``k < 1``, a gain that is not an integer
0..4, ``scores`` of the wrong length, an unknown field, a ``query_id`` seen on
an earlier line (both line numbers are named), and a file with no observation
at all. Blank lines are skipped; JSONL has no comment syntax, so a ``#`` line
is an error.
"""

from __future__ import annotations

import json
from os import PathLike

from pydantic import ValidationError

from evalcore.contract.observation import Observation
from evalcore.io.errors import ErrorLog, validation_errors
from evalcore.io.json_objects import json_objects
from evalcore.io.text_lines import SourceText, read_source


def read_observations(path: str | PathLike[str]) -> list[Observation]:
    """Read and validate an observation JSONL file (see the module docstring)."""
    return parse_observations(read_source(path))


def parse_observations(source: SourceText) -> list[Observation]:
    """Validate decoded JSONL text (e.g. an upload); same rules as :func:`read_observations`."""
    log = ErrorLog.of(source)
    observations: list[Observation] = []
    first_line: dict[str, int] = {}
    for number, obj in json_objects(source, log):
        try:
            obs = Observation.model_validate(obj)
        except ValidationError as exc:
            log.extend(validation_errors(exc, file=source.name, line=number, model=Observation))
            _remember_query(obj.get("query_id"), number, first_line, log)
            continue
        if _remember_query(obs.query_id, number, first_line, log):
            observations.append(obs)
    log.finish(observations, "no observations", "the file is empty or holds only blank lines")
    return observations


def _remember_query(
    query_id: object, number: int, first_line: dict[str, int], log: ErrorLog
) -> bool:
    """Record where ``query_id`` first appears; log a duplicate and return False."""
    if not isinstance(query_id, str):
        return True
    first = first_line.setdefault(query_id, number)
    if first == number:
        return True
    log.add(
        number,
        "query_id",
        f"duplicate query_id {json.dumps(query_id, ensure_ascii=False)}, first on line {first}",
        "each query appears once per file; merge the two lines",
    )
    return False

