"""The lexical retrieval protocol: what a run may see and how it ranks.

A protocol is a JSON object (``protocol.json``)::

    {
      "method": "lexical",
      "top_k": 100,
      "cutoff": "2026-06-30T00:00:00Z",
      "organisations": ["acme"],
      "reference_version": "v3",
      "weights": {"title": 2.0, "text": 1.0}
    }

* ``method``: ``"lexical"`` is the only method.
* ``top_k``: 1..1000 results per query; the run's ``k``.
* ``cutoff``: historical cutoff, with an explicit time zone. Only documents
  created at or before it are searchable.
* ``organisations``: the owner organisations whose documents are visible. The
  pinned (organisation-owned) document id set is derived from it when the
  protocol is pinned. Documents without an owner are never visible.
* ``reference_version``: the frozen reference the runs are meant to be judged
  against (recorded with every run; optional).
* ``weights``: BM25 column weights for title and text (FTS5 ``bm25()``; its
  k1 = 1.2 and b = 0.75 are fixed by SQLite).
* ``tie_rule``: ``"doc_id_descending"`` (the default, and the product's one
  tie rule, the rule of trec_eval and of TREC run files): results are ordered
  by BM25 score, best first, and equal scores by document id descending (code
  point order, SQLite's BINARY collation). A run file exported from such a run
  keeps its order with its original scores. ``"doc_id_ascending"`` is accepted
  only so that protocols pinned under the old rule re-execute exactly as
  pinned; their tied runs export with rank-derived scores.
* ``corpus_id`` and ``corpus_fingerprint`` are filled in when the protocol is
  pinned. A fingerprint given in the file must match the corpus at pin time.
"""

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictFloat,
    StrictInt,
    StrictStr,
    ValidationError,
    field_validator,
    model_validator,
)

from evalcore.contract.limits import MAX_KEY_CHARS
from evalcore.io.errors import ErrorLog, validation_errors
from evalcore.io.text_lines import is_device

#: The largest ``top_k`` a protocol may ask for.
MAX_TOP_K = 1000
#: How equal scores are ordered. The first is the product's rule (as trec_eval's);
#: the second is kept for protocols pinned under the old rule.
TieRule = Literal["doc_id_descending", "doc_id_ascending"]
#: The tokenizer of the store's full-text index (and of every execution snapshot).
TOKENIZER = "porter unicode61"

Fingerprint = Annotated[StrictStr, Field(pattern=r"^sha256:[0-9a-f]{64}$")]
OrgId = Annotated[StrictStr, Field(min_length=1, max_length=MAX_KEY_CHARS)]
Weight = Annotated[StrictFloat | StrictInt, Field(ge=0, le=1000)]


class BM25Weights(BaseModel):
    """BM25 column weights: how much a title match counts against a text match."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    title: Weight = 1.0
    text: Weight = 1.0

    @model_validator(mode="after")
    def _not_all_zero(self) -> "BM25Weights":
        if self.title == 0 and self.text == 0:
            raise ValueError("title and text weights are both 0, so nothing could match")
        return self


class LexicalProtocol(BaseModel):
    """A lexical retrieval protocol (see the module docstring for every field)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    method: StrictStr
    top_k: Annotated[StrictInt, Field(ge=1, le=MAX_TOP_K)]
    cutoff: datetime
    organisations: Annotated[list[OrgId], Field(min_length=1)]
    reference_version: StrictStr | None = None
    weights: BM25Weights = BM25Weights()
    tie_rule: TieRule = "doc_id_descending"
    tokenizer: Literal["porter unicode61"] = TOKENIZER
    corpus_id: StrictStr | None = None
    corpus_fingerprint: Fingerprint | None = None

    @field_validator("method")
    @classmethod
    def _only_lexical(cls, method: str) -> Literal["lexical"]:
        if method != "lexical":
            raise ValueError(
                f"method {method!r} is not supported: \"lexical\" (SQLite FTS5 BM25) is the "
                "only retrieval method; import other systems' results as a run file instead"
            )
        return "lexical"

    @field_validator("cutoff")
    @classmethod
    def _cutoff_has_zone(cls, cutoff: datetime) -> datetime:
        if cutoff.tzinfo is None or cutoff.utcoffset() is None:
            raise ValueError(
                "cutoff has no time zone; write it in UTC with a Z, e.g. \"2026-06-30T00:00:00Z\""
            )
        return cutoff.astimezone(UTC)

    @field_validator("organisations")
    @classmethod
    def _organisations_sorted_unique(cls, organisations: list[str]) -> list[str]:
        seen: set[str] = set()
        for org in organisations:
            if org in seen:
                raise ValueError(f"organisation {org!r} is listed twice")
            seen.add(org)
        return sorted(organisations)

    def to_json_dict(self) -> dict[str, Any]:
        """The protocol as stored with pins and runs (cutoff as ISO UTC with ``Z``)."""
        return self.model_dump(mode="json")


def parse_protocol(data: Any, *, source: str = "protocol") -> LexicalProtocol:
    """Validate a decoded protocol object; errors name ``source``, the field and the fix.

    Raises :class:`evalcore.io.errors.InputErrors` listing every problem.
    """
    return _validated(data, ErrorLog(source), None)


def load_protocol(path: str | Path) -> LexicalProtocol:
    """Read and validate ``protocol.json``.

    Every error names the file, the line of the offending field (its top-level
    key) and the field; raises :class:`evalcore.io.errors.InputErrors`.
    """
    path = Path(path)
    log = ErrorLog(str(path))
    try:
        if is_device(path):
            raise OSError(f"{path} is a device, not a file (it may never end)")
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        log.add(None, None, f"cannot read the protocol file: {exc}")
        log.raise_if_any()
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        log.add(exc.lineno, None, f"not valid JSON: {exc.msg} (column {exc.colno})")
        log.raise_if_any()
    return _validated(data, log, text)


def _validated(data: Any, log: ErrorLog, text: str | None) -> LexicalProtocol:
    """``data`` as a protocol, or every problem raised from ``log``; with the file's ``text``,
    each problem is placed on the line of its field's top-level key."""
    if not isinstance(data, dict):
        where = None if text is None else 1
        log.add(where, None, "a protocol must be a JSON object like {\"method\": \"lexical\", ...}")
        log.raise_if_any()
    try:
        return LexicalProtocol.model_validate(data)
    except ValidationError as exc:
        for error in validation_errors(exc, file=log.file, line=None, model=LexicalProtocol):
            if text is not None:
                key = error.field.split(".")[0].split("[")[0] if error.field else None
                error = error.model_copy(update={"line": _line_of_key(text, key)})
            log.append(error)
    log.raise_if_any()
    raise AssertionError("unreachable")  # pragma: no cover


def _line_of_key(text: str, key: str | None) -> int | None:
    """The 1-based line where the top-level ``key`` is written, if it can be found."""
    if not key:
        return None
    needle = json.dumps(key) + ":"
    compact = json.dumps(key)
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.replace(" ", "")
        if needle.replace(" ", "") in stripped or stripped.startswith(compact):
            return number
    return None
