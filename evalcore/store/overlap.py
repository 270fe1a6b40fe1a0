"""Where annotators overlap: the only places agreement is measured and conflicts arise.

A unit counts towards agreement, and can be in conflict, only when two or more
annotators (or an annotator and a reviewer's decision) hold a voice on it. One
grouped read over the (study, query, annotator) index finds the queries where
that can happen, so the agreement page resolves just those (usually a few of a
10,000-query study) instead of every label of the study.
"""

from dataclasses import dataclass

from evalcore.store.resolution import annotator_key
from evalcore.store.study_handle import Study


@dataclass(frozen=True)
class Overlap:
    """The queries to resolve, and the annotators with a current label elsewhere."""

    queries: tuple[str, ...]
    annotators: frozenset[str]


def annotator_overlap(study: Study) -> Overlap:
    """Queries with two or more annotator names, or with an undo or an adjudication (a
    superset of the queries holding a unit two voices are on: names that differ only in
    case are told apart here and merged by the resolution); the other queries have only
    labels, each current, so their annotators are read without resolving them."""
    names: dict[str, set[str]] = {}
    replayed: set[str] = set()
    for query_id, annotator, special in study.db.execute(
        "SELECT query_id, annotator, max(kind != 'label') FROM label_events "
        "WHERE study_id = ? GROUP BY query_id, annotator",
        [study.study_id],
    ):
        names.setdefault(query_id, set()).add(annotator)
        if special:
            replayed.add(query_id)
    queries = tuple(q for q, who in names.items() if len(who) > 1 or q in replayed)
    overlapping = set(queries)
    plain = {a for q, who in names.items() if q not in overlapping for a in who}
    return Overlap(queries=queries, annotators=frozenset(map(annotator_key, plain)))
