"""Randomized parity with trec_eval (through ``pytrec_eval``).

On fully judged data with a complete population and the contract's default
protocol, P@k, recall@k, nDCG@k and reciprocal rank (of the run cut at k)
must equal trec_eval's ``P_k``, ``recall_k``, ``ndcg_cut_k`` and
``recip_rank``. On partially judged data the same holds once the
``unjudged_as_nonrelevant`` compatibility policy is on.

Runs are generated with tied scores and ordered as trec_eval orders them:
score descending, ties by document ID descending.
"""

import random

import pytest
import pytrec_eval

from evalcore.compute.evaluate import evaluate
from evalcore.contract.evaluation_protocol import EvalProtocol
from evalcore.contract.observation import Label, Observation

TREC_NAMES = {"precision": "P_{k}", "recall": "recall_{k}", "ndcg": "ndcg_cut_{k}"}


def trec_order(run: dict[str, float]) -> list[str]:
    """trec_eval's ranking: score descending, then docid descending."""
    return [d for d, _ in sorted(run.items(), key=lambda item: (item[1], item[0]), reverse=True)]


def generate(seed: int, n_queries: int, judged_fraction: float):
    """Random qrels and run dicts: small score vocabulary so ties are common."""
    rng = random.Random(seed)
    qrels: dict[str, dict[str, int]] = {}
    runs: dict[str, dict[str, float]] = {}
    for qi in range(n_queries):
        q = f"q{qi}"
        docs = [f"d{j:03d}" for j in rng.sample(range(200), rng.randint(1, 30))]
        run = {d: float(rng.randint(0, 6)) for d in docs}
        labels = {d: rng.choice([0, 0, 1, 2, 3, 4]) for d in docs if rng.random() < judged_fraction}
        for j in rng.sample(range(200, 260), rng.randint(0, 6)):  # judged, never returned
            labels[f"d{j:03d}"] = rng.randint(0, 4)
        labels[f"r{qi}"] = 4 if qi % 2 else rng.randint(1, 4)  # a relevant unit at any threshold
        qrels[q] = labels
        runs[q] = run
    return qrels, runs


def observations_for(qrels, runs, k: int) -> list[Observation]:
    return [
        Observation(
            query_id=q,
            k=k,
            returned_ids=trec_order(runs[q]),
            labels=[Label(id=d, gain=g) for d, g in qrels[q].items()],
            population_complete=True,
        )
        for q in qrels
    ]


def trec_eval_results(qrels, runs, k: int, relevance_level: int = 1):
    cut_runs = {q: {d: runs[q][d] for d in trec_order(runs[q])[:k]} for q in runs}
    full = pytrec_eval.RelevanceEvaluator(
        qrels, {f"P.{k}", f"recall.{k}", f"ndcg_cut.{k}"}, relevance_level=relevance_level
    )
    rr = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}, relevance_level=relevance_level)
    out = full.evaluate(runs)
    for q, m in rr.evaluate(cut_runs).items():
        out[q]["recip_rank"] = m["recip_rank"]
    return out


def assert_parity(report, expected, k: int) -> None:
    assert len(report.queries) == len(expected)
    for q in report.queries:
        assert q.valid
        want = expected[q.query_id]
        for name, trec in TREC_NAMES.items():
            mv = q.metrics[name]
            assert mv.available, (q.query_id, name, mv)
            assert mv.value == pytest.approx(want[trec.format(k=k)], abs=1e-9), (q.query_id, name)
        rr = q.metrics["reciprocal_rank"]
        assert rr.available and rr.value == pytest.approx(want["recip_rank"], abs=1e-9)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("k", [1, 5, 10, 20])
def test_fully_judged_parity_with_default_protocol(seed, k):
    qrels, runs = generate(seed, n_queries=120, judged_fraction=1.0)
    report = evaluate(observations_for(qrels, runs, k), EvalProtocol())
    assert_parity(report, trec_eval_results(qrels, runs, k), k)
    for agg in report.aggregates.values():
        assert agg.available


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("k", [3, 10])
def test_partially_judged_parity_with_unjudged_as_nonrelevant(seed, k):
    qrels, runs = generate(100 + seed, n_queries=120, judged_fraction=0.6)
    observations = observations_for(qrels, runs, k)
    strict = evaluate(observations, EvalProtocol())
    blocked = [q for q in strict.queries if not q.metrics["precision"].available]
    assert blocked, "the generator should leave unjudged documents in some top k"
    assert all(q.metrics["precision"].reasons == ["unlabeled_returned"] for q in blocked)
    compat = evaluate(observations, EvalProtocol(unjudged_as_nonrelevant=True))
    assert_parity(compat, trec_eval_results(qrels, runs, k), k)


@pytest.mark.parametrize("threshold", [2, 3, 4])
def test_threshold_parity_with_trec_eval_relevance_level(threshold):
    """P, recall and RR use the threshold like trec_eval's relevance level; nDCG gains do not
    (trec_eval's ndcg_cut ignores the relevance level too)."""
    qrels, runs = generate(200 + threshold, n_queries=150, judged_fraction=1.0)
    qrels = {q: labels for i, (q, labels) in enumerate(qrels.items()) if i % 2}  # gain-4 anchor
    runs = {q: runs[q] for q in qrels}
    report = evaluate(observations_for(qrels, runs, 5), EvalProtocol(relevance_threshold=threshold))
    assert_parity(report, trec_eval_results(qrels, runs, 5, relevance_level=threshold), 5)


def test_no_relevant_units_is_unavailable_where_trec_eval_reports_zero():
    qrels = {"q": {"a": 0, "b": 0}}
    runs = {"q": {"a": 2.0, "b": 1.0}}
    trec = trec_eval_results(qrels, runs, 2)["q"]
    assert trec["recall_2"] == 0.0 and trec["ndcg_cut_2"] == 0.0
    q = evaluate(observations_for(qrels, runs, 2)).queries[0]
    assert q.metrics["recall"].reasons == ["no_relevant_units"]
    assert q.metrics["ndcg"].reasons == ["no_relevant_units"]
    assert q.metrics["precision"].value == trec["P_2"] == 0.0
