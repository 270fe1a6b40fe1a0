"""``evalcore.evaluate``: one call from qrels and a run (paths, dicts, DataFrames) to a result."""

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import evalcore
from evalcore.api.result import EvaluationResult, Unavailable
from evalcore.cli import main
from evalcore.compute.evaluate import evaluate as compute_evaluate
from evalcore.contract.evaluation_protocol import EvalProtocol
from evalcore.contract.measures import Measure, UnknownMeasure
from evalcore.contract.observation import Label, Observation
from evalcore.contract.results import EvaluationReport
from evalcore.io.errors import InputErrors

QRELS = {"q1": {"A": 2, "B": 0, "C": 1}, "q2": {"D": 1, "E": 0}, "q3": {"F": 0}}
RUN = {
    "q1": {"A": 3.0, "X": 2.0, "C": 2.0},  # X unjudged; X and C tied
    "q2": {"E": 5.0, "D": 1.0},
    "q3": {"F": 1.0},
}
MEASURES = ["P@2", "R@3", "nDCG@3", "MRR@3", "AP@3", "Success@1"]


def write_trec(tmp_path: Path) -> tuple[Path, Path]:
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in QRELS.items()
                             for d, g in docs.items()))
    run = tmp_path / "run.txt"
    run.write_text("".join(f"{q} Q0 {d} 0 {s} tag\n" for q, docs in RUN.items()
                           for d, s in docs.items()))
    return qrels, run


def frames() -> tuple[pd.DataFrame, pd.DataFrame]:
    qrels = pd.DataFrame(
        [(q, d, g) for q, docs in QRELS.items() for d, g in docs.items()],
        columns=["query_id", "doc_id", "relevance"],
    )
    run = pd.DataFrame(
        [(q, d, s) for q, docs in RUN.items() for d, s in docs.items()],
        columns=["query_id", "doc_id", "score"],
    )
    return qrels, run


def test_paths_dicts_and_dataframes_give_the_same_report(tmp_path):
    qrels_path, run_path = write_trec(tmp_path)
    qrels_frame, run_frame = frames()
    results = [
        evalcore.evaluate(qrels_path, run_path, measures=MEASURES, complete=True),
        evalcore.evaluate(str(qrels_path), str(run_path), measures=MEASURES, complete=True),
        evalcore.evaluate(QRELS, RUN, measures=MEASURES, complete=True),
        evalcore.evaluate(qrels_frame, run_frame, measures=MEASURES, complete=True),
        evalcore.evaluate(QRELS, run_frame, measures=MEASURES, complete=True),
    ]
    reports = [json.loads(r.to_json()) for r in results]
    # Only the notes name the input (file name or "qrels (dict)"): everything else is equal.
    for report in reports:
        report["diagnostics"]["notes"] = []
    assert all(r == reports[0] for r in reports)
    assert list(reports[0]["aggregates"]) == ["P@2", "R@3", "nDCG@3", "RR@3", "AP@3", "Success@1"]


def test_values_follow_the_contract_and_the_run_is_ranked_as_trec_eval_ranks_it():
    result = evalcore.evaluate(QRELS, RUN, measures=MEASURES, complete=True)
    q1, q2, q3 = result.report.queries
    # q1: A (2), then the tie X/C broken by doc ID descending: X before C.
    assert q1.metrics["P@2"].reasons == ["unlabeled_returned"]
    assert q1.metrics["P@2"].blocking_ids == ["X"]
    assert (q1.metrics["P@2"].lower, q1.metrics["P@2"].upper) == (0.5, 1.0)
    assert q1.metrics["RR@3"].value == 1.0 and q1.metrics["Success@1"].value == 1.0
    # q2: E (0) before D (1).
    assert q2.metrics["RR@3"].value == 0.5 and q2.metrics["P@2"].value == 0.5
    # q3: nothing relevant: recall, nDCG and AP have no value, precision is 0.
    assert q3.metrics["R@3"].reasons == ["no_relevant_units"]
    assert q3.metrics["P@2"].value == 0.0
    assert result.report.diagnostics.tied_score_pairs == 1
    assert result.aggregates["RR@3"] == pytest.approx((1 + 0.5 + 0) / 3)


def test_aggregates_are_floats_or_unavailable_with_why_and_bounds():
    result = evalcore.evaluate(QRELS, RUN, measures=["P@2", "Success@1", "R@3"])
    assert result.aggregates["Success@1"] == pytest.approx(1 / 3)
    p2 = result.aggregates["P@2"]
    assert isinstance(p2, Unavailable)
    assert (p2.n_queries, p2.n_available, p2.n_missing) == (3, 2, 1)
    assert p2.reasons == {"unlabeled_returned": 1}
    assert (p2.lower, p2.upper) == pytest.approx(((0.5 + 0.5 + 0) / 3, (1 + 0.5 + 0) / 3))
    assert repr(p2) == (
        "Unavailable(1 of 3 queries missing: unlabeled_returned; between 0.3333 and 0.5)"
    )
    recall = result.aggregates["R@3"]
    assert isinstance(recall, Unavailable) and recall.reasons["population_incomplete"] == 3
    assert "P@2=Unavailable(" in repr(result) and "Success@1=0.3333" in repr(result)


def test_per_query_dataframe_has_value_status_reasons_and_bounds():
    result = evalcore.evaluate(QRELS, RUN, measures=["P@2", "RR@3"], complete=True)
    table = result.per_query
    assert isinstance(table, pd.DataFrame)
    assert list(table.columns) == [
        "query_id", "k", "valid",
        "P@2", "P@2.status", "P@2.reasons", "P@2.lower", "P@2.upper",
        "RR@3", "RR@3.status", "RR@3.reasons", "RR@3.lower", "RR@3.upper",
    ]
    assert table["query_id"].tolist() == ["q1", "q2", "q3"]
    assert table["k"].tolist() == [3, 3, 3]
    assert math.isnan(table["P@2"][0]) and table["P@2"][1] == 0.5
    assert table["P@2.status"].tolist() == ["unavailable", "available", "available"]
    assert table["P@2.reasons"].tolist() == ["unlabeled_returned", "", ""]
    # An available value is its own lower and upper bound (contract section 11).
    assert table["P@2.lower"].tolist() == [0.5, 0.5, 0.0]
    assert table["P@2.upper"].tolist() == [1.0, 0.5, 0.0]


def test_to_json_is_what_the_cli_prints(tmp_path):
    qrels, run = write_trec(tmp_path)
    result = evalcore.evaluate(qrels, run, measures=["P@2", "nDCG@3"], complete=True)
    cli = CliRunner().invoke(main, ["evaluate", "--qrels", str(qrels), "--run", str(run),
                                    "-m", "P@2", "-m", "nDCG@3", "--complete"])
    assert cli.exit_code == 0, cli.output
    assert json.loads(cli.stdout) == json.loads(result.to_json())


def test_default_measures_are_the_section_7_keys_at_k():
    result = evalcore.evaluate(QRELS, RUN, k=2, complete=True)
    assert list(result.aggregates) == ["precision", "recall", "ndcg", "reciprocal_rank"]
    assert all(q.k == 2 for q in result.report.queries)


def test_k_is_the_cutoff_of_measures_named_without_one():
    result = evalcore.evaluate(QRELS, RUN, measures=["P", "P@1"], k=2)
    assert result.report.queries[1].metrics["P"].value == 0.5  # q2 at k=2: E, D
    assert result.report.queries[1].metrics["P@1"].value == 0.0
    single = evalcore.evaluate(QRELS, RUN, measures="RR@3")  # one name, not its letters
    assert list(single.aggregates) == ["RR@3"]
    as_object = evalcore.evaluate(QRELS, RUN, measures=[Measure("P", 1)])
    assert list(as_object.aggregates) == ["P@1"]


def test_trec_eval_switch_counts_unjudged_as_nonrelevant_and_values_zero_relevant_queries():
    result = evalcore.evaluate(QRELS, RUN, measures=["P@2", "R@3", "nDCG@3"], trec_eval=True)
    assert result.report.protocol.trec_eval is True
    assert result.aggregates["P@2"] == pytest.approx((0.5 + 0.5 + 0) / 3)
    assert result.report.queries[2].metrics["R@3"].value == 0.0  # q3 has no relevant doc
    assert '"trec_eval":true' in result.to_json()


def test_trec_eval_ignores_run_queries_without_qrels_and_counts_them():
    run = {**RUN, "q9": {"Z": 1.0}}
    qrels = {**QRELS, "q8": {"Y": 1}}
    result = evalcore.evaluate(qrels, run, measures=["P@2"], trec_eval=True)
    assert [q.query_id for q in result.report.queries] == ["q1", "q2", "q3"]
    assert result.report.diagnostics.notes[:2] == [
        "1 run query without qrels ignored, as trec_eval ignores them: q9",
        "1 qrels query without results ignored, as trec_eval ignores them without -c "
        "(--trec-eval-all-queries counts them as 0): q8",
    ]
    every = evalcore.evaluate(qrels, run, measures=["P@2"], trec_eval=True,
                              trec_eval_all_queries=True)
    assert [q.query_id for q in every.report.queries] == ["q1", "q2", "q3", "q8"]
    assert every.report.queries[-1].metrics["P@2"].value == 0.0
    # Without the switch, the contract's rules: q9 is missing its reference.
    plain = evalcore.evaluate(qrels, run, measures=["P@2"])
    assert [q.query_id for q in plain.report.queries] == ["q1", "q2", "q3", "q8", "q9"]
    assert plain.report.queries[-1].reasons == ["missing_reference"]


def test_observations_keep_going_to_the_metric_computer():
    obs = [Observation(query_id="q1", k=2, returned_ids=["A", "X"],
                       labels=[Label(id="A", gain=1)], population_complete=True)]
    protocol = EvalProtocol(unjudged_as_nonrelevant=True)
    report = evalcore.evaluate(obs, protocol)
    assert isinstance(report, EvaluationReport)
    assert report == compute_evaluate(obs, protocol)
    assert evalcore.evaluate(obs, measures=["P@1"]).aggregates["P@1"].value == 1.0
    # Protocol options apply to observations too (X unjudged: non-relevant under trec_eval).
    assert evalcore.evaluate(obs, trec_eval=True).aggregates["precision"].value == 0.5
    assert evalcore.evaluate(obs).aggregates["precision"].status == "unavailable"
    empty = evalcore.evaluate([])
    assert isinstance(empty, EvaluationReport) and empty.aggregates["precision"].n_queries == 0


@pytest.mark.parametrize(
    ("call", "error", "text"),
    [
        (lambda: evalcore.evaluate(QRELS, RUN, measures=["nDCG@ten"]), UnknownMeasure,
         "known measures: P@k, P(rel=r)@k"),
        (lambda: evalcore.evaluate(QRELS, RUN, measures=["P"]), ValueError,
         "measure P has no @k: give k=N"),
        (lambda: evalcore.evaluate(QRELS, RUN), ValueError, "no measures are named: give k=N"),
        (lambda: evalcore.evaluate(QRELS, RUN, measures=[]), ValueError, "measures is empty"),
        (lambda: evalcore.evaluate(QRELS, RUN, k=0), ValueError, "k must be an integer >= 1"),
        (lambda: evalcore.evaluate(QRELS), ValueError, "needs a run"),
        (lambda: evalcore.evaluate(QRELS, RUN, k=3, trec_eval_all_queries=True), ValueError,
         "give trec_eval=True too"),
        (lambda: evalcore.evaluate([], RUN), ValueError, "the second argument is the EvalProtocol"),
        (lambda: evalcore.evaluate([], k=3, complete=True), ValueError,
         "k, complete apply to qrels and a run; observations carry their own k"),
        (lambda: evalcore.evaluate(QRELS, RUN, k=3, protocol=EvalProtocol(), gain="exponential"),
         ValueError, "give either protocol= or gain=, not both"),
    ],
)
def test_misuse_is_a_clear_error(call, error, text):
    with pytest.raises(error) as exc:
        call()
    assert text in str(exc.value)


def test_errors_of_both_inputs_are_reported_together(tmp_path):
    bad_run = tmp_path / "run.txt"
    bad_run.write_text("q1 Q0 A 1 high tag\n")
    with pytest.raises(InputErrors) as exc:
        evalcore.evaluate({"q1": {"A": 7}}, bad_run, k=1)
    assert [str(e) for e in exc.value.errors] == [
        "qrels (dict): query 'q1' doc 'A': gain 7 is outside 0..4 "
        "(map it with gain_map={7: N}, N in 0..4)",
        f"{bad_run}:1: score: must be a finite number, got 'high' "
        "(the fifth field is the score; items are ranked by it)",
    ]
    assert evalcore.evaluate({"q1": {"A": 7}}, {"q1": {"A": 1.0}}, k=1,
                             gain_map={7: 4}).report.queries[0].metrics["precision"].value == 1.0


def test_the_public_names_and_a_cheap_import():
    assert evalcore.parse_measure("ndcg@10") == Measure("nDCG", 10)
    assert str(evalcore.parse_measure("MRR@10")) == "RR@10"
    assert evalcore.EvaluationResult is EvaluationResult
    for name in evalcore.__all__:
        assert getattr(evalcore, name) is not None
    with pytest.raises(AttributeError):
        evalcore.not_a_name  # noqa: B018
    code = ("import sys, evalcore; from evalcore import evaluate; "
            "print(sorted(m for m in ('pandas', 'numpy') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", "import sys, evalcore; "
                          "print(sorted(m for m in ('pandas', 'numpy', 'pydantic') "
                          "if m in sys.modules))"],
                         capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['numpy']"  # evaluate needs numpy, not pandas


@pytest.mark.parametrize(
    ("gain_map", "named"),
    [
        ({2: 1.5}, "not 2: 1.5"),  # was cut to gain 1 without a word
        ({2: "1"}, "not 2: '1'"),  # was a TypeError from deep inside the reader
        ({2: None}, "not 2: None"),
        ({"2": 1}, "not '2': 1"),  # was ignored: no gain is the text '2'
        ({True: 1}, "not True: 1"),
        ("2:1", "not the text '2:1'"),  # the command line's form: was an AttributeError
        ([(2, 1)], "got list"),
    ],
)
def test_a_gain_map_that_does_not_map_gains_to_0_4_is_refused_by_name(gain_map, named):
    qrels, run = {"q1": {"a": 2, "b": 0}}, {"q1": {"a": 2.0, "b": 1.0}}
    for call in (lambda: evalcore.evaluate(qrels, run, measures=["nDCG@2"], gain_map=gain_map),
                 lambda: evalcore.Qrels(qrels, gain_map=gain_map)):
        with pytest.raises(ValueError, match="gain_map") as caught:
            call()
        assert named in str(caught.value) and "e.g. gain_map={-1: 0, 5: 4}" in str(caught.value)
    # numpy numbers and decimal gains (as --gain-map takes them) are gains
    mapped = evalcore.evaluate(qrels, run, measures=["P@1"], gain_map={np.int64(2): np.int8(1),
                                                                        0.5: 1})
    assert mapped.aggregates["P@1"] == 1.0


def test_numpy_integers_are_integers_and_a_cutoff_past_the_deepest_is_named():
    qrels, run = {"q1": {"a": 2, "b": 1}}, {"q1": {"a": 2.0, "b": 1.0}}
    # k and relevance_threshold read from a DataFrame or numpy config are numpy integers:
    # both used to be refused as "not an integer"
    as_python = evalcore.evaluate(qrels, run, measures=["P"], k=2, relevance_threshold=2)
    as_numpy = evalcore.evaluate(qrels, run, measures=["P"], k=np.int64(2),
                                 relevance_threshold=np.int64(2))
    assert as_numpy.aggregates == as_python.aggregates == {"P": 0.5}
    # past 2^63 - 1 (docs/input-limits.md): named, not "Python int too large to convert"
    with pytest.raises(ValueError, match=r"k must be an integer >= 1 and at most 9223372036854775807"):
        evalcore.evaluate(qrels, run, measures=["P"], k=2**70)
    with pytest.raises(UnknownMeasure, match="deeper than the deepest cutoff 9223372036854775807"):
        evalcore.evaluate(qrels, run, measures=[f"P@{2**63}"])
    result = CliRunner().invoke(main, ["evaluate", "--qrels", "x", "--run", "y", "-m", f"P@{2**63}"])
    assert result.exit_code == 2 and "deeper than the deepest cutoff" in result.output
