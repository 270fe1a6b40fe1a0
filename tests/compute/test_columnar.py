"""The packed layout of an ObservationBatch and its two constructors."""

import gc

import numpy as np
import pytest

from evalcore.compute.batch import UNLABELED, ObservationBatch
from evalcore.compute.evaluate import compute, evaluate, evaluate_batch
from evalcore.compute.gc_pause import gc_paused
from evalcore.contract.observation import Label, Observation
from evalcore.contract.results import MetricValue, QueryResult, ReturnedDuplicate
from evalcore.contract.trusted_models import construct


def test_layout_of_a_small_batch():
    observations = [
        Observation(
            query_id="q1",
            k=3,
            returned_ids=["A", "Y", "A", "B"],
            labels=[Label(id="A", gain=2), Label(id="B", gain=1)],
            population_complete=True,
        ),
        Observation(query_id="q2", k=2, returned_ids=[], labels=[], population_complete=False),
        Observation(
            query_id="q3",
            k=1,
            returned_ids=["p1", "p2"],
            labels=[Label(id="P", gain=4), Label(id="P", gain=4)],
            population_complete=True,
            unit_of={"p1": "P"},
        ),
    ]
    b = ObservationBatch.from_observations(observations)
    assert len(b) == 3 and b.query_ids == ["q1", "q2", "q3"]
    assert b.k.tolist() == [3, 2, 1]
    assert b.pos_offsets.tolist() == [0, 3, 3, 4]
    assert b.pos_gain.tolist() == [2, UNLABELED, 2, 4]
    assert b.pos_dup.tolist() == [False, False, True, False]
    assert b.dup_first.tolist() == [0, 0, 1, 0]
    assert b.label_offsets.tolist() == [0, 2, 2, 3]  # the repeated label collapses in the gains
    assert b.duplicate_reference.tolist() == [False, False, True]
    assert b.missing_reference.tolist() == [False, True, False]
    assert b.pos_rank.tolist() == [1, 2, 3, 1]
    assert b.pos_query.tolist() == [0, 0, 0, 2]
    assert b.top_units[2] == ["P"]


def test_from_columns_accepts_scalars_and_numpy_integers():
    batch = ObservationBatch.from_columns(
        ["q1", "q2"],
        np.int64(2),
        [["A", "B", "C"], ["C"]],
        [["A", "B"], ["C"]],
        [[1, 0], [3]],
        np.bool_(True),
    )
    result = compute(batch)
    assert result.values("precision").tolist() == [0.5, 0.5]
    assert result.values("recall").tolist() == [1.0, 1.0]
    assert result.available("ndcg").all()


def test_from_columns_names_the_mismatch():
    with pytest.raises(ValueError, match="query_ids has 2 entries"):
        ObservationBatch.from_columns(["q1", "q2"], 3, [["A"]], [["A"]], [[1]], True)


def test_batch_carries_its_protocol_as_default():
    from evalcore.contract.evaluation_protocol import EvalProtocol

    o = Observation(
        query_id="q",
        k=2,
        returned_ids=["A", "Z"],
        labels=[Label(id="A", gain=1)],
        population_complete=True,
    )
    compat = EvalProtocol(unjudged_as_nonrelevant=True)
    batch = ObservationBatch.from_observations([o], compat)
    report = evaluate_batch(batch)
    assert report.protocol == compat
    assert report.queries[0].metrics["precision"].value == 0.5
    assert report == evaluate([o], compat)


def test_trusted_construct_equals_model_construct():
    values = {
        "status": "unavailable",
        "value": None,
        "reasons": ["unlabeled_returned"],
        "blocking_ids": ["X"],
        "lower": 0.0,
        "upper": 1.0,
        "conflict_ids": [],
        "residual": None,
    }
    a, b = construct(MetricValue, dict(values)), MetricValue.model_construct(**values)
    assert a == b and a.model_dump() == b.model_dump() and a.model_fields_set == b.model_fields_set
    dup = {"id": "A", "position": 2, "first_position": 1}
    assert construct(ReturnedDuplicate, dict(dup)) == ReturnedDuplicate(**dup)
    q = {
        "query_id": "q",
        "k": 3,
        "valid": True,
        "reasons": [],
        "duplicates": [],
        "metrics": {"precision": a},
    }
    assert construct(QueryResult, dict(q)) == QueryResult(**q)
    # every field of the report models is passed by the metric computer
    assert set(values) == set(MetricValue.model_fields)
    assert set(q) == set(QueryResult.model_fields)


def test_construct_refuses_a_model_with_a_validator():
    from evalcore.contract.observation import Label, Observation

    values = {"query_id": "q", "k": 1, "returned_ids": ["A"], "scores": [1.0, 2.0],
              "labels": [], "population_complete": True}
    with pytest.raises(TypeError, match="Observation has validators"):
        construct(Observation, values)
    with pytest.raises(TypeError, match="Label has validators"):
        construct(Label, {"id": "A", "gain": 2, "conflict": None})


def test_gc_paused_restores_the_previous_state():
    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(RuntimeError), gc_paused():
        raise RuntimeError("boom")
    assert gc.isenabled()
