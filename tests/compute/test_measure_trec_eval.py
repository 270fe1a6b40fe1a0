"""EvalProtocol(trec_eval=True): trec_eval's semantics in the metric computer.

Unjudged units are non-relevant, every population is complete, and a query
with no relevant unit is valued as trec_eval values it (0). The switch is
printed in the protocol only when on. Randomized parity with pytrec_eval for
the catalogue measures trec_eval has (P.k, recall.k, ndcg_cut.k, map_cut.k,
success.k, recip_rank of the run cut at k), with relevance levels 1 and 2.
"""

import json

import pytest
import pytrec_eval

from evalcore.compute.evaluate import evaluate
from evalcore.contract.evaluation_protocol import EvalProtocol
from evalcore.contract.measures import parse_measure
from evalcore.contract.observation import Label, Observation
from tests.compute.test_pytrec_parity import generate, trec_order

TREC = EvalProtocol(trec_eval=True)


def obs(returned, labels, *, k=3, complete=False, qid="q") -> Observation:
    return Observation(query_id=qid, k=k, returned_ids=returned,
                       labels=[Label(id=i, gain=g) for i, g in labels],
                       population_complete=complete)


def test_protocol_prints_trec_eval_only_when_on():
    assert "trec_eval" not in EvalProtocol().model_dump()
    assert "trec_eval" not in json.loads(evaluate([], EvalProtocol()).model_dump_json())["protocol"]
    assert EvalProtocol(trec_eval=True).model_dump()["trec_eval"] is True
    assert json.loads(evaluate([], TREC).model_dump_json())["protocol"]["trec_eval"] is True
    assert EvalProtocol(**EvalProtocol(trec_eval=True).model_dump()) == TREC


def test_zero_relevant_query_is_zero_where_the_default_says_no_relevant_units():
    o = obs(["A", "B", "Z"], [("A", 0), ("B", 0)])
    default = evaluate([o], EvalProtocol(unjudged_as_nonrelevant=True)).queries[0].metrics
    assert "no_relevant_units" in default["recall"].reasons
    measures = [parse_measure(m) for m in ("P@3", "R@3", "nDCG@3", "RR@3", "AP@3", "Success@3")]
    got = evaluate([o], TREC, measures=measures).queries[0].metrics
    for name, mv in got.items():
        assert mv.available and mv.value == 0.0, name
    legacy = evaluate([o], TREC).queries[0].metrics
    assert all(mv.available and mv.value == 0.0 for mv in legacy.values())


def test_unjudged_is_nonrelevant_and_the_population_complete():
    o = obs(["A", "Y", "B"], [("A", 2), ("B", 1), ("C", 3)], complete=False)
    m = evaluate([o], TREC).queries[0].metrics
    assert m["precision"].value == pytest.approx(2 / 3)
    assert m["recall"].value == pytest.approx(2 / 3)
    assert m["ndcg"].available


@pytest.mark.parametrize(("seed", "k", "level"), [(1, 5, 1), (2, 10, 1), (3, 10, 2), (4, 20, 3)])
def test_catalogue_parity_with_pytrec_eval(seed, k, level):
    qrels, runs = generate(seed, 80, judged_fraction=0.6)
    for q in list(qrels)[::7]:  # some queries with no relevant unit at all
        qrels[q] = {d: 0 for d in qrels[q]}
    observations = [
        Observation(query_id=q, k=k, returned_ids=trec_order(runs[q]),
                    labels=[Label(id=d, gain=g) for d, g in qrels[q].items()],
                    population_complete=False)
        for q in qrels
    ]
    names = {f"P(rel={level})@{k}": f"P_{k}", f"R(rel={level})@{k}": f"recall_{k}",
             f"nDCG@{k}": f"ndcg_cut_{k}", f"AP(rel={level})@{k}": f"map_cut_{k}",
             f"Success(rel={level})@{k}": f"success_{k}", f"RR(rel={level})@{k}": "recip_rank"}
    report = evaluate(observations, TREC, measures=[parse_measure(n) for n in names])
    full = pytrec_eval.RelevanceEvaluator(
        qrels, {f"P.{k}", f"recall.{k}", f"ndcg_cut.{k}", f"map_cut.{k}", f"success.{k}"},
        relevance_level=level,
    ).evaluate(runs)
    cut = {q: {d: runs[q][d] for d in trec_order(runs[q])[:k]} for q in runs}
    rr = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}, relevance_level=level).evaluate(cut)
    for q in report.queries:
        want = full[q.query_id] | rr[q.query_id]
        for name, trec in names.items():
            mv = q.metrics[name]
            assert mv.available, (q.query_id, name, mv)
            assert mv.value == pytest.approx(want[trec], abs=1e-9), (q.query_id, name)
    for name, trec in names.items():
        mean = sum((full[q] | rr[q])[trec] for q in qrels) / len(qrels)
        assert report.aggregates[name].value == pytest.approx(mean, abs=1e-9), name
