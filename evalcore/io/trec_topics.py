"""TREC topics: ``<top> <num> Number: 301 <title> ... <desc> Description: ... <narr> Narrative: ... </top>``.

The classic format leaves ``<num>``, ``<title>``, ``<desc>`` and ``<narr>``
unclosed: a field runs until the next field tag or ``</top>``. Closing tags
(``</title>``) are accepted too, and tags are matched case-insensitively.

* ``num``: the topic id, after an optional ``Number:`` label;
* ``title``: the query text (an optional ``Topic:`` label is removed);
* ``desc``: the description (after an optional ``Description:`` label);
* ``narr``: the narrative, the assessor's guideline (after ``Narrative:``).

Field text is plain text: tags are removed, entities decoded, whitespace
collapsed; it is never interpreted as HTML when shown. A topic without a
``<num>`` or a title, a repeated id (naming both lines), a ``<top>`` without
``</top>`` and text outside any ``<top>`` are errors, each with file and line.
Plain or gzip (``.gz``), see :mod:`evalcore.io.trec_docs`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from evalcore.io.errors import ErrorLog, show_value
from evalcore.io.text_lines import SourceText
from evalcore.io.trec_docs import plain_text

_TOP = re.compile(r"<top\s*>(.*?)</top\s*>", re.IGNORECASE | re.DOTALL)
_TOP_OPEN = re.compile(r"<top\s*>", re.IGNORECASE)
_FIELD = re.compile(r"<(/?)(num|title|desc|narr|con|fac|def|dom|smry)\s*>", re.IGNORECASE)
_LABELS = {
    "num": re.compile(r"^\s*Number\s*:\s*", re.IGNORECASE),
    "title": re.compile(r"^\s*Topic\s*:\s*", re.IGNORECASE),
    "desc": re.compile(r"^\s*Description\s*:\s*", re.IGNORECASE),
    "narr": re.compile(r"^\s*Narrative\s*:\s*", re.IGNORECASE),
}


@dataclass(frozen=True)
class Topic:
    """One topic: its id, query text and information need."""

    line: int
    query_id: str
    text: str
    description: str
    narrative: str


def parse_trec_topics(source: SourceText, log: ErrorLog) -> list[Topic]:
    """The topics of one decoded file; every problem is logged (file, line, field)."""
    log.extend(source.errors)
    text = source.text
    topics: list[Topic] = []
    first_line: dict[str, int] = {}
    end = 0
    for match in _TOP.finditer(text):
        _outside(text, end, match.start(), log)
        end = match.end()
        line = _line(text, match.start())
        fields = _fields(match.group(1))
        if _TOP_OPEN.search(match.group(1)):
            log.add(line, "top", "a <top> inside this <top>",
                    "the topic before it lacks its </top>")
            continue
        qid = fields.get("num", "").split()
        title = fields.get("title", "")
        if not qid:
            log.add(line, "num", "the topic has no <num>", "each <top> has <num> Number: 301")
            continue
        if len(qid) > 1:
            log.add(line, "num", f"the topic id must be one word, got {show_value(' '.join(qid))}")
            continue
        if not title:
            log.add(line, "title", f"topic {qid[0]} has no <title> text",
                    "the title is the query text")
            continue
        first = first_line.setdefault(qid[0], line)
        if first != line:
            log.add(line, "num", f"topic {qid[0]} repeats line {first}",
                    "each topic appears once")
            continue
        topics.append(Topic(line, qid[0], title, fields.get("desc", ""), fields.get("narr", "")))
    _outside(text, end, len(text), log)
    if not topics and not log:
        log.add(None, None, "no <top> found",
                "TREC topics look like <top> <num> Number: 301 <title> ... </top>")
    return topics


def _fields(body: str) -> dict[str, str]:
    """Tag name -> plain text; a field runs to the next tag (closing tags are optional)."""
    out: dict[str, str] = {}
    tags = list(_FIELD.finditer(body))
    for i, tag in enumerate(tags):
        if tag.group(1):  # a closing tag ends the field before it
            continue
        name = tag.group(2).lower()
        stop = tags[i + 1].start() if i + 1 < len(tags) else len(body)
        value = plain_text(body[tag.end():stop])
        label = _LABELS.get(name)
        if label is not None:
            value = label.sub("", value, count=1).strip()
        if name not in out:
            out[name] = re.sub(r"\s+", " ", value) if name in ("num", "title") else value
    return out


def _outside(text: str, start: int, end: int, log: ErrorLog) -> None:
    """Only whitespace may stand between topics; an unclosed ``<top>`` is named too."""
    gap = text[start:end]
    if not gap.strip():
        return
    opened = _TOP_OPEN.search(gap)
    before = gap[: opened.start()] if opened else gap
    if before.strip():
        log.add(_line(text, start + len(before) - len(before.lstrip())), None,
                f"text outside any <top>: {show_value(before.strip()[:40])}",
                "the file holds only <top>...</top> elements")
    if opened:
        log.add(_line(text, start + opened.start()), "top", "a <top> without its </top>",
                "close every <top> with </top>")


def _line(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1
