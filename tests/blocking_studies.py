"""Random studies of a few runs sharing one reference, evaluated (blocking list and
coverage tests): units returned twice, units in conflict (returned or only in the
reference), queries with no label at all, complete and incomplete populations,
queries a run does not answer, unit ids repeated across queries."""

import numpy as np
from hypothesis import strategies as st

from evalcore.compute.batch import ObservationBatch
from evalcore.compute.evaluate import compute
from evalcore.contract.evaluation_protocol import EvalProtocol

UNITS = [f"u{i}" for i in range(7)]
RUNS = ["A", "B", "C"]
gain = st.one_of(st.integers(0, 4),
                 st.lists(st.integers(0, 4), min_size=2, max_size=3, unique=True).map(tuple))


@st.composite
def studies(draw):
    n = draw(st.integers(1, 6))
    queries = [f"q{i}" for i in range(n)]
    reference = [draw(st.dictionaries(st.sampled_from(UNITS), gain, max_size=6)) for _ in queries]
    complete = [draw(st.booleans()) for _ in queries]
    runs = {}
    for name in RUNS[: draw(st.integers(1, 3))]:
        answered = [i for i in range(n) if draw(st.booleans()) or i == 0]
        rankings = [draw(st.lists(st.sampled_from(UNITS), max_size=6)) for _ in answered]
        runs[name] = (draw(st.integers(1, 5)), answered, rankings)
    protocol = draw(st.sampled_from([
        EvalProtocol(), EvalProtocol(relevance_threshold=2),
        EvalProtocol(unjudged_as_nonrelevant=True)]))
    return queries, reference, complete, runs, protocol


def evaluate_study(study):
    queries, reference, complete, runs, protocol = study
    out = {}
    for name, (k, answered, rankings) in runs.items():
        batch = ObservationBatch.from_gain_maps(
            [queries[i] for i in answered], k, rankings, [reference[i] for i in answered],
            [complete[i] for i in answered], protocol=protocol)
        out[name] = (compute(batch, protocol), np.asarray(answered, dtype=np.int64))
    return out


def store_codes(evaluated, units, scale, offset):
    """Codes as a store hands them out: one per unit id, equal across queries and runs."""
    number = {u: i * scale + offset for i, u in enumerate(units)}
    return {name: np.fromiter((number[u] for top in result.batch.top_units for u in top),
                              dtype=np.int64, count=int(result.batch.pos_offsets[-1]))
            for name, (result, _) in evaluated.items()}
