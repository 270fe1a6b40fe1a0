"""Hypothesis strategies for random observations and protocols, and an observation JSONL writer.

Small ID pools so that duplicates, overlaps between returned and labeled
units, ``unit_of`` collisions and permission misses all happen often; corpus
sizes small enough that open populations (contract section 12) have few
outside units.
"""

from collections.abc import Iterable
from pathlib import Path

from hypothesis import strategies as st

from evalcore.contract.evaluation_protocol import EvalProtocol
from evalcore.contract.observation import Label, Observation

UNITS = ["A", "B", "C", "D", "E", "F"]
RAW = [*UNITS, "a#1", "a#2", "b#1", "z#9"]

protocols = st.builds(
    EvalProtocol,
    relevance_threshold=st.integers(1, 4),
    gain=st.sampled_from(["linear", "exponential"]),
    unjudged_as_nonrelevant=st.booleans(),
)


protocols_with_trec_eval = st.builds(
    EvalProtocol,
    relevance_threshold=st.integers(1, 4),
    gain=st.sampled_from(["linear", "exponential"]),
    unjudged_as_nonrelevant=st.booleans(),
    trec_eval=st.integers(0, 4).map(lambda i: i == 0),
)

#: A label in conflict (section 9): two or three distinct annotator gains.
conflict_gains = st.lists(st.integers(0, 4), min_size=2, max_size=3, unique=True)


@st.composite
def observations(
    draw, query_id: str = "q", raw_ids=RAW, unit_ids=UNITS, conflicts: bool = False
) -> Observation:
    returned = draw(st.lists(st.sampled_from(raw_ids), max_size=9))
    label = st.builds(Label, id=st.sampled_from(unit_ids), gain=st.integers(0, 4))
    if conflicts:
        label = label | st.builds(Label, id=st.sampled_from(unit_ids), conflict=conflict_gains)
    labels = draw(
        st.lists(
            label,
            max_size=7,
            unique_by=(lambda lab: lab.id) if draw(st.integers(0, 5)) else None,
        )
    )
    unit_of = None
    if draw(st.booleans()):
        unit_of = draw(
            st.dictionaries(st.sampled_from(raw_ids), st.sampled_from(unit_ids), max_size=5)
        )
    permitted = None
    if draw(st.integers(0, 4)) == 0:
        permitted = draw(st.lists(st.sampled_from(raw_ids), max_size=len(raw_ids), unique=True))
    # Section 12: a corpus size bounds the unlabeled units outside 1..k (small ones leave
    # U_out at 0..3, where every completion is enumerated); none leaves it unbounded.
    corpus_size = draw(st.none() | st.integers(0, 16))
    return Observation(
        query_id=query_id,
        corpus_size=corpus_size,
        k=draw(st.integers(1, 7)),
        returned_ids=returned,
        labels=labels,
        population_complete=draw(st.booleans()),
        scan_complete=draw(st.integers(0, 9)) > 0,
        permitted_ids=permitted,
        unit_of=unit_of,
    )


@st.composite
def query_sets(draw, max_size: int = 6, conflicts: bool = False) -> list[Observation]:
    n = draw(st.integers(0, max_size))
    return [draw(observations(query_id=f"q{i}", conflicts=conflicts)) for i in range(n)]


def draw_labels(draw, units, kinds=("gain", "none", "none", "conflict")):
    """Labels of ``units`` (unit -> gain, or a tuple of the gains of a conflict), each
    unit's kind drawn from ``kinds``; at least one unit is labeled."""
    labels = {}
    for unit in units:
        kind = draw(st.sampled_from(list(kinds)))
        if kind == "gain":
            labels[unit] = draw(st.integers(0, 4))
        elif kind == "conflict":
            labels[unit] = tuple(sorted(draw(st.lists(st.integers(0, 4), min_size=2,
                                                      max_size=3, unique=True))))
    if not labels:
        labels[units[0]] = draw(st.integers(1, 4))
    return labels


def draw_rankings(draw, units, max_size: int) -> tuple[list[str], list[str]]:
    """Two runs' rankings over ``units``: unrelated, or the second a shuffle of the first
    with a few more units (overlap)."""
    ranking_a = draw(st.lists(st.sampled_from(units), max_size=max_size))
    if draw(st.booleans()):
        return ranking_a, draw(st.permutations(ranking_a)) + draw(
            st.lists(st.sampled_from(units), max_size=2))
    return ranking_a, draw(st.lists(st.sampled_from(units), max_size=max_size))


def write_observations(path: Path, observations: Iterable[Observation]) -> int:
    """Write observations as the JSONL evalcore reads (one compact object per line, ``null``
    fields omitted); returns how many."""
    lines = [o.model_dump_json(exclude_none=True) + "\n" for o in observations]
    path.write_text("".join(lines), encoding="utf-8")
    return len(lines)
