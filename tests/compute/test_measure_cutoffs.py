"""Measures at their own cutoffs, many in one pass (contract section 10)."""

import pytest

from evalcore.compute.batch import ObservationBatch
from evalcore.compute.evaluate import compute, evaluate
from evalcore.contract.measures import parse_measure
from evalcore.contract.observation import Label, Observation


def obs(qid="q", k=2):
    returned = ["A", "X", "B", "Y", "C"]
    labels = [Label(id="A", gain=2), Label(id="X", gain=0), Label(id="B", gain=1),
              Label(id="Y", gain=0), Label(id="C", gain=3), Label(id="D", gain=1)]
    return Observation(query_id=qid, k=k, returned_ids=returned, labels=labels,
                       population_complete=True)


def test_a_cutoff_deeper_than_the_observations_k_measures_the_deeper_positions():
    measures = [parse_measure(m) for m in ("P@5", "R@5", "P@2", "P", "R")]
    m = evaluate([obs(k=2)], measures=measures).queries[0].metrics
    assert m["P@5"].value == pytest.approx(3 / 5)
    assert m["R@5"].value == pytest.approx(3 / 4)
    assert m["P@2"].value == pytest.approx(1 / 2)
    assert m["P"].value == m["P@2"].value  # without @k: the observation's k
    assert m["R"].value == pytest.approx(1 / 4)


def test_many_measures_in_one_pass_equal_each_alone():
    names = ["P@1", "P@5", "nDCG@3", "nDCG@5", "RR@5", "AP@4", "Success@1", "Judged@5",
             "RBP(p=0.5)@5", "P(rel=2)@5"]
    measures = [parse_measure(n) for n in names]
    together = evaluate([obs("q1"), obs("q2", k=4)], measures=measures)
    for m in measures:
        alone = evaluate([obs("q1"), obs("q2", k=4)], measures=[m])
        assert alone.aggregates[str(m)] == together.aggregates[str(m)]
        for a, t in zip(alone.queries, together.queries, strict=True):
            assert a.metrics[str(m)] == t.metrics[str(m)]


def test_default_output_keeps_the_section_7_keys():
    report = evaluate([obs()])
    assert list(report.queries[0].metrics) == ["precision", "recall", "ndcg", "reciprocal_rank"]
    assert list(report.aggregates) == ["precision", "recall", "ndcg", "reciprocal_rank"]


def test_a_batch_packed_too_shallow_is_refused_with_what_to_do():
    batch = ObservationBatch.from_observations([obs(k=2)])
    with pytest.raises(ValueError, match="pack it with min_depth=5"):
        compute(batch, measures=[parse_measure("P@5")])


def test_measures_must_be_measure_objects():
    with pytest.raises(TypeError, match="parse_measure"):
        evaluate([obs()], measures=["P@5"])  # type: ignore[list-item]
