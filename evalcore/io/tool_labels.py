"""Judgments in other tools' formats: Quepid CSV, RRE ratings JSON, Elasticsearch ``_rank_eval``.

Reading (every error collected with file, line or JSON path, and field):

* **quepid**: Quepid's ratings CSV, header ``query,docid,rating`` (names
  case-insensitive; ``query text``, ``doc id``/``doc_id`` accepted; other
  columns, as in Quepid's own exports, are ignored with a warning). ``query``
  is the query *text*, as Quepid keys its cases.
* **rre**: RRE (Rated Ranking Evaluator) ratings JSON: ``topics[].query_groups[]``
  or top-level ``query_groups[]``, each with a ``name`` (the query id; default
  the first query's ``placeholders`` value), ``queries[].placeholders`` (the
  query text) and ``relevant_documents``: ``{"doc": {"gain": 3}}`` (or
  ``"rating"``), or the older ``{"3": ["doc", ...]}``. The top-level ``index``
  is kept.
* **rank-eval**: an Elasticsearch/OpenSearch ``_rank_eval`` request body:
  ``requests[]`` with ``id`` (the query id) and ``ratings[]`` of
  ``{"_index", "_id", "rating"}``; the ``_index`` is kept.

Gains must be integers in 0..4 after the optional gain map (``--gain-map``, as
for TREC qrels); a fraction, a boolean, a string in JSON, NaN or a huge number
is an error. JSON is strict (:mod:`evalcore.io.json_objects`: a repeated key is
an error). The same (query, document) rated twice alike is one rating and a
warning; rated differently it is an error naming both places.

Writing (:func:`write_tool_labels`): one rating per (query, document), sorted
by query then document, in the same shapes, so reading the output back gives
the same ratings.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TextIO

from evalcore.io.csv_records import parse_record
from evalcore.io.errors import ErrorLog, show_value
from evalcore.io.json_objects import json_document, json_kind
from evalcore.io.label_rows import GainNotes, parse_gain
from evalcore.io.records import records
from evalcore.io.spreadsheet_cells import csv_writer, restore
from evalcore.io.text_lines import SourceText

ToolFormat = Literal["quepid", "rre", "rank-eval"]
TOOL_FORMATS: tuple[ToolFormat, ...] = ("quepid", "rre", "rank-eval")

_QUEPID_COLUMNS = {"query": ("query", "querytext"), "docid": ("docid",), "rating": ("rating",)}


@dataclass(frozen=True)
class ToolRating:
    """One rating: ``query`` is an id (rre, rank-eval) or the query text (quepid)."""

    where: str
    line: int | None
    query: str
    doc_id: str
    gain: int
    query_text: str = ""


@dataclass
class ToolRatings:
    name: str
    fmt: str
    ratings: list[ToolRating]
    index: str | None = None
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def parse_tool_labels(
    source: SourceText, fmt: ToolFormat, gain_map: Mapping[int, int] | None = None
) -> ToolRatings:
    """Validate a judgments file of another tool; raise InputErrors listing every error."""
    reader = _Reader(source, fmt, gain_map)
    log, out = reader.log, reader.out
    if fmt == "quepid":
        reader.quepid(source)
    else:
        doc = json_document(source, log, nul=True)
        if doc is not None:
            (reader.rre if fmt == "rre" else reader.rank_eval)(doc)
    log.finish(out.ratings, "no rating in the file")
    kept: list[ToolRating] = []
    first: dict[tuple[str, str], ToolRating] = {}
    for r in out.ratings:
        earlier = first.setdefault((r.query, r.doc_id), r)
        if earlier is r:
            kept.append(r)
        elif earlier.gain == r.gain:
            where, first = _at(source.name, r), _at(source.name, earlier)
            out.warnings.append(f"{where}: query {r.query} doc {r.doc_id} repeats {first}; "
                                "recorded once")
        else:
            problem = (f"query {r.query} doc {r.doc_id}: rating {r.gain} contradicts "
                       f"{_at(source.name, earlier)} (rating {earlier.gain})")
            log.add(r.line, r.where, problem, "keep one of the two")
    log.raise_if_any()
    out.ratings = kept
    out.notes = [*source.notes(), *reader.gains.lines()]
    return out


def _at(name: str, r: ToolRating) -> str:
    return f"{name}:{r.line}" if r.line is not None else f"{name} {r.where}"


class _Reader:
    """Reads one judgments file into ``out``, every error logged with where it is."""

    def __init__(self, source: SourceText, fmt: ToolFormat,
                 gain_map: Mapping[float, int] | None) -> None:
        self.log = ErrorLog.of(source)
        self.out = ToolRatings(source.name, fmt, [])
        self.gain_map = gain_map
        self.gains = GainNotes(source.name)

    def quepid(self, source: SourceText) -> None:
        log = self.log
        first_line = source.text.lstrip("\n").split("\n", 1)[0]
        try:
            raw = [c.strip() for c in parse_record(first_line)]
        except ValueError:  # not a CSV line: the records' reader names the error
            raw = [c.strip() for c in first_line.split(",")]
        normal = {c: c.lower().replace(" ", "").replace("_", "") for c in raw}
        chosen: dict[str, str] = {}
        for want, names in _QUEPID_COLUMNS.items():
            for c in raw:
                if normal[c] in names and want not in chosen:
                    chosen[want] = c
        ignored = [c for c in raw if c not in chosen.values()]
        needed = tuple(chosen.get(k, k) for k in _QUEPID_COLUMNS)
        if ignored and len(chosen) == 3:
            self.out.warnings.append(f"{source.name}: ignored column(s) {', '.join(ignored)}")
        for number, record in records(source, "csv", log, needed=needed):
            query = restore(record[chosen["query"]]).strip()
            doc = restore(record[chosen["docid"]]).strip()
            for name, value in (("query", query), ("docid", doc)):
                if not value:
                    log.add(number, name, "must not be empty")
            rating = record[chosen["rating"]]
            gain, problem, hint = parse_gain(rating, self.gain_map, notes=self.gains)
            if problem is not None:
                log.add(number, "rating", problem, hint)
            if query and doc and gain is not None:
                self.out.ratings.append(ToolRating("", number, query, doc, gain, query))

    def rre(self, doc: dict[str, Any]) -> None:
        index = doc.get("index")
        self.out.index = index if isinstance(index, str) else None
        groups: list[tuple[str, Any]] = []
        for t, topic in enumerate(self._list(doc.get("topics"), "topics")):
            topic = self._object(topic, f"topics[{t}]")
            if topic is not None:
                where = f"topics[{t}].query_groups"
                groups += [(f"{where}[{g}]", group)
                           for g, group in enumerate(self._list(topic.get("query_groups"), where))]
        groups += [(f"query_groups[{g}]", group) for g, group in
                   enumerate(self._list(doc.get("query_groups"), "query_groups"))]
        if not groups and "topics" not in doc and "query_groups" not in doc:
            hint = "RRE ratings hold topics[].query_groups[] with relevant_documents"
            self.log.add(None, None, "no 'topics' or 'query_groups'", hint)
            return
        for where, group in groups:
            group = self._object(group, where)
            if group is not None:
                self._rre_group(group, where)

    def _rre_group(self, group: dict[str, Any], where: str) -> None:
        text = self._rre_text(group, where)
        name = group.get("name")
        qid = self._string(name, f"{where}.name") if name is not None else text
        if qid is None:
            if name is None:
                self.log.add(None, f"{where}.name", "missing, and no query text to use instead")
            return
        docs = self._object(group.get("relevant_documents"), f"{where}.relevant_documents")
        for key, value in (docs or {}).items():
            at = f"{where}.relevant_documents[{json.dumps(key, ensure_ascii=False)}]"
            if isinstance(value, list):  # the older shape: gain -> [doc ids]
                gain = self._gain(key, at, text=True)
                for i, item in enumerate(value):
                    doc_id = self._string(item, f"{at}[{i}]")
                    if gain is not None and doc_id is not None:
                        rating = ToolRating(f"{at}[{i}]", None, qid, doc_id, gain, text or "")
                        self.out.ratings.append(rating)
                continue
            rating = self._object(value, at)
            if rating is None:
                continue
            doc_id = key.strip()
            if not doc_id:
                self.log.add(None, at, "empty document id")
                continue
            if "gain" not in rating and "rating" not in rating:
                self.log.add(None, at, "missing 'gain'", 'write {"gain": 2}')
                continue
            name_of = "gain" if "gain" in rating else "rating"
            gain = self._gain(rating[name_of], f"{at}.{name_of}")
            if gain is not None:
                self.out.ratings.append(ToolRating(at, None, qid, doc_id, gain, text or ""))

    def _rre_text(self, group: dict[str, Any], where: str) -> str | None:
        for q, query in enumerate(self._list(group.get("queries"), f"{where}.queries")):
            if isinstance(query, dict) and isinstance(query.get("placeholders"), dict):
                for value in query["placeholders"].values():
                    if isinstance(value, str) and value.strip():
                        return value.strip()
            elif not isinstance(query, dict):
                problem = f"must be an object, got {json_kind(query)}"
                self.log.add(None, f"{where}.queries[{q}]", problem)
        return None

    def rank_eval(self, doc: dict[str, Any]) -> None:
        if "requests" not in doc:
            hint = "a _rank_eval body holds requests[] with ratings"
            self.log.add(None, "requests", "missing", hint)
            return
        indices: set[str] = set()
        for r, request in enumerate(self._list(doc.get("requests"), "requests")):
            where = f"requests[{r}]"
            request = self._object(request, where)
            if request is None:
                continue
            qid = self._string(request.get("id"), f"{where}.id")
            for i, rating in enumerate(self._list(request.get("ratings"), f"{where}.ratings")):
                at = f"{where}.ratings[{i}]"
                rating = self._object(rating, at)
                if rating is None:
                    continue
                doc_id = self._string(rating.get("_id"), f"{at}._id")
                index = self._string(rating.get("_index"), f"{at}._index", required=False)
                if "rating" not in rating:
                    self.log.add(None, f"{at}.rating", "missing")
                    continue
                gain = self._gain(rating["rating"], f"{at}.rating")
                if index is not None:
                    indices.add(index)
                if qid is not None and doc_id is not None and gain is not None:
                    self.out.ratings.append(ToolRating(at, None, qid, doc_id, gain))
        if len(indices) == 1:
            self.out.index = indices.pop()
        elif len(indices) > 1:
            named = f"{len(indices)} indices ({', '.join(sorted(indices))})"
            self.out.warnings.append(f"{self.out.name}: ratings name {named}; documents are "
                                     "identified by _id")

    def _string(self, value: Any, where: str, *, required: bool = True) -> str | None:
        if isinstance(value, str) and value.strip():
            return value.strip()
        if value is not None or required:
            problem = f"must be a non-empty string, got {show_value(value)}"
            self.log.add(None, where, "missing" if value is None else problem)
        return None

    def _list(self, value: Any, where: str) -> list[Any]:
        if value is not None and not isinstance(value, list):
            self.log.add(None, where, f"must be an array, got {json_kind(value)}")
            return []
        return value or []

    def _object(self, value: Any, where: str) -> dict[str, Any] | None:
        if not isinstance(value, dict):
            self.log.add(None, where, f"must be an object, got {json_kind(value)}")
            return None
        return value

    def _gain(self, value: Any, where: str, *, text: bool = False) -> int | None:
        gain, problem, hint = parse_gain(value, self.gain_map, text=text, notes=self.gains)
        if problem is not None:
            self.log.add(None, where, problem, hint)
        return gain


def write_tool_labels(
    stream: TextIO,
    fmt: ToolFormat,
    ratings: Mapping[str, Mapping[str, int]],
    query_texts: Mapping[str, str],
    *,
    index: str,
    title: str = "",
) -> int:
    """Write ``query -> {doc: gain}`` in ``fmt``; return the number of ratings written."""
    queries = sorted(ratings)
    count = sum(len(ratings[q]) for q in queries)
    if fmt == "quepid":
        writer = csv_writer(stream, lineterminator="\n")
        writer.writerow(["query", "docid", "rating"])
        for q in queries:
            for d in sorted(ratings[q]):
                writer.writerow([query_texts.get(q) or q, d, ratings[q][d]])
        return count
    if fmt == "rre":
        groups: list[dict[str, Any]] = []
        for q in queries:
            group: dict[str, Any] = {"name": q}
            if query_texts.get(q):
                placeholders = {"$query": query_texts[q]}
                group["queries"] = [{"template": "query.json", "placeholders": placeholders}]
            group["relevant_documents"] = {d: {"gain": g} for d, g in sorted(ratings[q].items())}
            groups.append(group)
        topics = [{"description": title, "query_groups": groups}]
        body: dict[str, Any] = {"index": index, "id_field": "id", "topics": topics}
    else:
        requests = []
        for q in queries:
            query = {"query_string": {"query": query_texts.get(q) or q}}
            docs = [{"_index": index, "_id": d, "rating": g} for d, g in sorted(ratings[q].items())]
            requests.append({"id": q, "request": {"query": query}, "ratings": docs})
        body = {"requests": requests, "metric": {"dcg": {"k": 10, "normalize": True}}}
    stream.write(json.dumps(body, ensure_ascii=False, indent=2) + "\n")
    return count
