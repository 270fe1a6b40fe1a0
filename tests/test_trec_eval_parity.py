"""Parity with trec_eval on its own test data (read in place from ../shared/data/trec_eval).

With ``--complete --unjudged-as-nonrelevant`` the contract (section 8) promises
trec_eval's per-query P@k, recall@k, ndcg_cut@k, and recip_rank of the run cut
at k. trec_eval evaluates only queries that are in the run *and* the qrels, so
comparisons are made on those queries; the expected outputs are trec_eval's own
golden files (4 decimals) and pytrec_eval (full precision).
"""

import json
from pathlib import Path

import pytest
import pytrec_eval
from click.testing import CliRunner
from shared_data import TREC_EVAL_DATA

from evalcore.cli import main
from evalcore.compute.evaluate import evaluate
from evalcore.contract.evaluation_protocol import EvalProtocol
from evalcore.io.trec import read_qrels, read_run, trec_observations

DATA = TREC_EVAL_DATA
pytestmark = pytest.mark.needs_shared
COMPAT = EvalProtocol(unjudged_as_nonrelevant=True)


def golden(name: str) -> dict[tuple[str, str], float]:
    """``measure qid value`` lines of a trec_eval output file, without the ``all`` rows."""
    out = {}
    for line in (DATA / name).read_text().splitlines():
        measure, qid, value = line.split()
        if qid != "all":
            try:
                out[(measure, qid)] = float(value)
            except ValueError:
                continue
    return out


def cli_report(qrels: str, run: str, k: int) -> dict:
    args = ["evaluate", "--qrels", str(DATA / qrels), "--run", str(DATA / run), "--k", str(k)]
    result = CliRunner().invoke(main, [*args, "--complete", "--unjudged-as-nonrelevant"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.mark.parametrize(
    ("k", "metric", "measure"),
    [(10, "precision", "P_10"), (10, "ndcg", "ndcg_cut_10"), (100, "recall", "recall_100")],
)
def test_per_query_values_equal_trec_eval_golden_output(k, metric, measure):
    expected = golden("out.test.aq")
    report = cli_report("qrels.test", "results.test", k)
    assert report["protocol"]["unjudged_as_nonrelevant"] is True
    run_queries = set(read_run(DATA / "results.test").doc_ids)
    compared = 0
    for q in report["queries"]:
        if q["query_id"] not in run_queries:
            continue  # trec_eval evaluates only the run's queries
        value = q["metrics"][metric]
        assert value["status"] == "available"
        assert value["value"] == pytest.approx(expected[(measure, q["query_id"])], abs=5e-5)
        compared += 1
    assert compared == 3


def test_tied_pairs_are_reported_for_trec_eval_data():
    report = cli_report("qrels.test", "results.test", 10)
    # Counted independently: pairs of equal scores within each query of results.test.
    counts: dict[tuple[str, str], int] = {}
    for line in (DATA / "results.test").read_text().splitlines():
        f = line.split()
        key = (f[0], repr(float(f[4])))
        counts[key] = counts.get(key, 0) + 1
    expected = sum(c * (c - 1) // 2 for c in counts.values())
    assert expected > 0
    assert report["diagnostics"]["tied_score_pairs"] == expected


def _pytrec_run(path: Path, k: int | None) -> dict[str, dict[str, float]]:
    run = read_run(path)
    out: dict[str, dict[str, float]] = {}
    for q, docs in run.doc_ids.items():
        scores = run.scores_for(q)
        top = range(len(docs)) if k is None else range(min(k, len(docs)))
        out[q] = {docs[i]: scores[i] for i in top}
    return out


@pytest.mark.parametrize(
    ("qrels", "run"),
    [("qrels.test", "results.test"), ("qrels.comment.test", "results.comment.test")],
)
@pytest.mark.parametrize("k", [1, 5, 10, 100])
def test_full_precision_parity_with_pytrec_eval(qrels, run, k):
    q = read_qrels(DATA / qrels)
    r = read_run(DATA / run)
    report = evaluate(trec_observations(q, r, k, complete=True), COMPAT)
    qrels_dict = {qid: dict(zip(q.doc_ids[qid], q.gains[qid], strict=True)) for qid in q.doc_ids}
    measures = {f"P_{k}", f"recall_{k}", f"ndcg_cut_{k}", "recip_rank"}
    evaluator = pytrec_eval.RelevanceEvaluator(qrels_dict, measures)
    full = evaluator.evaluate(_pytrec_run(DATA / run, None))
    cut = evaluator.evaluate(_pytrec_run(DATA / run, k))  # recip_rank of the run cut at k
    common = set(full)
    no_relevant: set[str] = set()
    assert common == set(q.doc_ids) & set(r.doc_ids)
    for res in report.queries:
        if res.query_id not in common:
            assert res.reasons == ["missing_reference"] or res.query_id not in r.doc_ids
            continue
        m = res.metrics
        assert m["precision"].value == pytest.approx(full[res.query_id][f"P_{k}"], abs=1e-12)
        rr = cut[res.query_id]["recip_rank"]
        assert m["reciprocal_rank"].value == pytest.approx(rr, abs=1e-12)
        if not any(g >= 1 for g in q.gains[res.query_id]):
            # trec_eval prints 0; the contract says recall/nDCG are undefined without a
            # relevant unit (a documented divergence, not a compatibility gap).
            assert m["recall"].reasons == m["ndcg"].reasons == ["no_relevant_units"]
            no_relevant.add(res.query_id)
            continue
        assert m["recall"].value == pytest.approx(full[res.query_id][f"recall_{k}"], abs=1e-12)
        assert m["ndcg"].value == pytest.approx(full[res.query_id][f"ndcg_cut_{k}"], abs=1e-12)
    assert len(no_relevant) <= 1  # only one judged query of these files lacks a relevant doc


def test_comment_files_p10_mean_over_evaluated_queries_equals_trec_eval():
    q = read_qrels(DATA / "qrels.comment.test")
    r = read_run(DATA / "results.comment.test")
    report = evaluate(trec_observations(q, r, 10, complete=True), COMPAT)
    evaluated = [
        res for res in report.queries if res.query_id in q.doc_ids and res.query_id in r.doc_ids
    ]
    assert len(evaluated) == 31  # trec_eval's num_q
    p10 = sum(res.metrics["precision"].value for res in evaluated) / len(evaluated)
    assert p10 == pytest.approx(0.7710, abs=5e-5)
    # The other 270 run queries have no judgments: the contract makes the aggregate
    # unavailable instead of averaging the 31 judged ones.
    agg = report.aggregates["precision"]
    assert agg.status == "unavailable" and agg.reasons == {"missing_reference": 270}


@pytest.mark.parametrize("k", [3, 10])
def test_cli_columnar_path_equals_observation_path(k):
    from evalcore.cli.evaluate import report_json
    from evalcore.io.trec import trec_diagnostics

    q = read_qrels(DATA / "qrels.comment.test")
    r = read_run(DATA / "results.comment.test")
    via_observations = evaluate(
        trec_observations(q, r, k, complete=False), COMPAT, diagnostics=trec_diagnostics(q, r)
    )
    args = ["evaluate", "--qrels", str(DATA / "qrels.comment.test")]
    args += ["--run", str(DATA / "results.comment.test"), "--k", str(k)]
    result = CliRunner().invoke(main, [*args, "--unjudged-as-nonrelevant"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == json.loads(report_json(via_observations))
