"""The packed layout of an ObservationBatch."""

from evalcore.compute.batch import UNLABELED, ObservationBatch
from evalcore.compute.evaluate import evaluate, evaluate_batch
from evalcore.contract.evaluation_protocol import EvalProtocol
from evalcore.contract.observation import Label, Observation
from evalcore.contract.results import MetricValue, QueryResult


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


def test_report_models_built_without_validation_pass_it():
    """The metric computer builds its per-query models with ``model_construct`` (its values
    are checked already): every one of them, available, unavailable with bounds and with a
    duplicate, is the model validation would build from the same values."""
    observation = Observation(query_id="q1", k=3, returned_ids=["A", "A", "B", "C"],
                              scores=[4.0, 3.0, 2.0, 1.0],
                              labels=[Label(id="A", gain=2, conflict=None)],
                              population_complete=False)
    report = evaluate([observation], EvalProtocol())
    for query in report.queries:
        assert QueryResult.model_validate(query.model_dump()) == query
        assert query.model_fields_set == set(QueryResult.model_fields)
        for value in query.metrics.values():
            assert value.model_fields_set == set(MetricValue.model_fields)
