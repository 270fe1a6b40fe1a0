"""The judge's prompt (UMBRELA style) and the strict reading of its grade.

The prompt follows UMBRELA (Upadhyay et al., 2024, "UMBRELA: UMbrela is the (Open-Source
Reproduction of the) Bing RELevance Assessor"), itself after Thomas et al. (2023): a
system message naming the task, the grading rubric, the query, the information need
when the study has one, the document, the step-by-step instruction (intent, match M,
trustworthiness T, final score O) and the answer's shape ``##final score: N``.

Two scales (``--grades``):

* ``0-3`` (UMBRELA's own rubric, the default): 0 nothing to do with the query, 1 related
  but does not answer it, 2 has some answer but unclear or hidden among other
  information, 3 dedicated to the query with the exact answer. Stored as the same gain
  (0..3 on the study's 0..4 scale, as TREC RAG stores UMBRELA grades): gain 4 is never
  given.
* ``0-4``: the same rubric with a top grade, 4 = dedicated to the query and answers it
  completely and perfectly; stored as given.

A reply is read strictly (:func:`parse_grade`): exactly one ``final score`` marker
holding an integer of the scale, or a reply that is nothing but that integer. Anything
else (no marker, two markers, a word, a grade off the scale) is a failure with its
reason, never a guess.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

Grades = Literal["0-3", "0-4"]
GRADES: tuple[str, ...] = ("0-3", "0-4")

#: Characters of a document's title and text sent at most (the rest is cut, marked "[...]").
DOCUMENT_CHARS = 4_000
#: Characters of the query's text and of its information need sent at most.
QUERY_CHARS = 2_000

SYSTEM = "You are a search quality rater evaluating the relevance of passages."

#: What each grade means, UMBRELA's words; a scale lists those up to its top grade.
_MEANINGS = (
    "0 = represent that the passage has nothing to do with the query",
    "1 = represents that the passage seems related to the query but does not answer it",
    "2 = represents that the passage has some answer for the query, but the answer may be a bit "
    "unclear, or hidden amongst extraneous information",
    "3 = represents that the passage is dedicated to the query and contains the exact answer",
    "4 = represents that the passage is dedicated to the query and answers it completely and "
    "perfectly, with nothing missing",
)
#: When to give each category from 1 up (the instruction ends with category 0).
_CATEGORIES = (
    "category 1 if the passage is somewhat related to the topic but not completely",
    "category 2 if passage presents something very important related to the entire topic but "
    "also has some extra information",
    "category 3 if the passage only and entirely refers to the topic",
    "category 4 if it also answers the whole information need without any gap",
)


def top_grade(grades: Grades) -> int:
    return 3 if grades == "0-3" else 4


def _listed(parts: tuple[str, ...], separator: str, last_separator: str) -> str:
    return separator.join(parts[:-1]) + last_separator + parts[-1]


_RUBRIC = {g: _listed(_MEANINGS[: top_grade(g) + 1], ",\n", " and\n") + "." for g in GRADES}
_INSTRUCTION = {
    g: f"Important Instruction: Assign {_listed(_CATEGORIES[: top_grade(g)], ', ', ' and ')}. "
    "If none of the above satisfies give it category 0."
    for g in GRADES
}


@dataclass(frozen=True)
class JudgeInput:
    """What one call shows the judge."""

    query: str
    description: str
    narrative: str
    title: str
    text: str


def _cut(text: str, limit: int) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[:limit].rstrip() + " [...]"


def messages(item: JudgeInput, grades: Grades = "0-3") -> list[dict[str, str]]:
    """The chat messages of one judgment (system, then user)."""
    high = top_grade(grades)
    need = "\n".join(part for part in (_cut(item.description, QUERY_CHARS),
                                       _cut(item.narrative, QUERY_CHARS)) if part)
    document = "\n".join(part for part in (item.title.strip(), item.text.strip()) if part)
    lines = [
        f"Given a query and a passage, you must provide a score on an integer scale of 0 to "
        f"{high} with the following meanings:",
        _RUBRIC[grades],
        _INSTRUCTION[grades],
        "",
        f"Query: {_cut(item.query, QUERY_CHARS)}",
    ]
    if need:
        lines.append(f"Information need (what the searcher is looking for): {need}")
    lines += [
        f"Passage: {_cut(document, DOCUMENT_CHARS)}",
        "",
        "Split this problem into steps:",
        "Consider the underlying intent of the search.",
        "Measure how well the content matches a likely intent of the query (M).",
        "Measure how trustworthy the passage is (T).",
        "Consider the aspects above and the relative importance of each, and decide on a "
        "final score (O). Final score must be an integer value only.",
        "Do not provide any code in result. Provide each score in the format of: "
        "##final score: score without providing any reasoning.",
    ]
    return [{"role": "system", "content": SYSTEM},
            {"role": "user", "content": "\n".join(lines)}]


class UnparsableGrade(ValueError):
    """A reply without exactly one grade of the scale; ``reason`` says which way."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


_MARKER = re.compile(r"#*\s*final\s+score\s*(?:\(O\))?\s*[:=]\s*(\S+)", re.IGNORECASE)
_INTEGER = re.compile(r"[+-]?\d+")


def parse_grade(reply: str, grades: Grades = "0-3") -> int:
    """The grade a reply gives (see the module docstring), or :class:`UnparsableGrade`."""
    high = top_grade(grades)
    found = _MARKER.findall(reply)
    if not found:
        bare = reply.strip().rstrip(".")
        if not _INTEGER.fullmatch(bare):
            raise UnparsableGrade("no grade")
        found = [bare]
    values = {value.rstrip(".,;*") for value in found}
    if len(values) > 1:
        raise UnparsableGrade("several grades")
    (value,) = values
    if not _INTEGER.fullmatch(value):
        raise UnparsableGrade("no grade")
    grade = int(value)
    if not 0 <= grade <= high:
        raise UnparsableGrade("grade off the scale")
    return grade
