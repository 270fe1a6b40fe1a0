"""``evalcore evaluate``: sources, options, JSON shape, exit codes, table rendering."""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from shared_data import TREC_EVAL_DATA

from evalcore.cli import main

DATA = TREC_EVAL_DATA

WORKED = {
    "query_id": "q1",
    "k": 3,
    "returned_ids": ["A", "X", "B"],
    "labels": [
        {"id": "A", "gain": 2},
        {"id": "X", "gain": 0},
        {"id": "B", "gain": 1},
        {"id": "C", "gain": 3},
    ],
    "population_complete": True,
}
UNLABELED = {
    "query_id": "q2",
    "k": 3,
    "returned_ids": ["A", "U", "B"],
    "labels": [{"id": "A", "gain": 0}, {"id": "B", "gain": 1}],
    "population_complete": False,
}


def jsonl(tmp_path: Path, *objs: dict, name: str = "obs.jsonl") -> Path:
    p = tmp_path / name
    p.write_text("".join(json.dumps(o) + "\n" for o in objs))
    return p


def invoke(*args: str):
    return CliRunner().invoke(main, ["evaluate", *map(str, args)])


def test_observations_json_has_contract_shape(tmp_path):
    result = invoke("--observations", jsonl(tmp_path, WORKED))
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert list(report) == ["protocol", "queries", "aggregates", "diagnostics"]
    assert report["protocol"] == {"relevance_threshold": 1, "gain": "linear"}
    q = report["queries"][0]
    assert q["query_id"] == "q1" and q["valid"] is True and q["reasons"] == []
    assert q["metrics"]["precision"] == {"status": "available", "value": 2 / 3}
    assert q["metrics"]["recall"] == {"status": "available", "value": 2 / 3}
    assert q["metrics"]["reciprocal_rank"] == {"status": "available", "value": 1.0}
    assert report["aggregates"]["precision"] == {
        "status": "available",
        "value": 2 / 3,
        "n_queries": 1,
        "n_available": 1,
        "n_missing": 0,
        "reasons": {},
    }
    assert report["diagnostics"] == {"tied_score_pairs": 0, "returned_duplicates": 0, "notes": []}


def test_unavailable_metric_and_aggregate_in_json(tmp_path):
    result = invoke("--observations", jsonl(tmp_path, WORKED, UNLABELED))
    report = json.loads(result.stdout)
    p = report["queries"][1]["metrics"]["precision"]
    assert p == {
        "status": "unavailable",
        "value": None,
        "reasons": ["unlabeled_returned"],
        "blocking_ids": ["U"],
        "lower": 1 / 3,
        "upper": 2 / 3,
    }
    agg = report["aggregates"]["recall"]
    assert agg["status"] == "unavailable" and agg["value"] is None
    assert (agg["n_queries"], agg["n_available"], agg["n_missing"]) == (2, 1, 1)


def test_protocol_options_are_recorded(tmp_path):
    path = jsonl(tmp_path, WORKED)
    result = invoke(
        "--observations",
        path,
        "--relevance-threshold",
        "2",
        "--gain",
        "exponential",
        "--unjudged-as-nonrelevant",
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["protocol"] == {
        "relevance_threshold": 2,
        "gain": "exponential",
        "unjudged_as_nonrelevant": True,
    }
    q = json.loads(result.stdout)["queries"][0]["metrics"]
    assert q["precision"]["value"] == 1 / 3  # only A (gain 2) is relevant at threshold 2


def test_complete_is_recorded_in_the_json_protocol_and_the_table_header(tmp_path):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("1 0 A 1\n1 0 B 0\n2 0 C 2\n")
    run = tmp_path / "run.txt"
    run.write_text("1 Q0 A 1 2.0 t\n1 Q0 B 2 1.0 t\n2 Q0 C 1 1.0 t\n")
    files = ("--qrels", qrels, "--run", run, "--k", "2")
    plain = invoke(*files)
    assert plain.exit_code == 0, plain.output
    assert json.loads(plain.stdout)["protocol"] == {"relevance_threshold": 1, "gain": "linear"}
    assert "populations_declared_complete" not in invoke(*files, "--format", "table").stdout
    complete = invoke(*files, "--complete")
    assert complete.exit_code == 0, complete.output
    report = json.loads(complete.stdout)
    assert report["protocol"] == {
        "relevance_threshold": 1, "gain": "linear", "populations_declared_complete": True,
    }
    assert report["queries"][0]["metrics"]["recall"]["status"] == "available"
    both = json.loads(invoke(*files, "--complete", "--unjudged-as-nonrelevant").stdout)
    assert both["protocol"]["populations_declared_complete"] is True
    assert both["protocol"]["unjudged_as_nonrelevant"] is True
    table = invoke(*files, "--complete", "--format", "table").stdout
    header = table.split("\n\n")[0].splitlines()
    assert header[1] == "protocol: relevance_threshold=1, gain=linear"
    assert header[2].startswith("populations_declared_complete: ON (--complete: ")


def test_bad_observations_exit_2_with_every_error_and_empty_stdout(tmp_path):
    bad = dict(WORKED, k=0, labels=[{"id": "A", "gain": 2.5}])
    path = jsonl(tmp_path, bad, dict(WORKED), {"query_id": "q9"})
    result = invoke("--observations", path)
    assert result.exit_code == 2
    assert result.stdout == ""
    err = result.stderr
    assert f"{path}:1: k: must be an integer >= 1, got 0" in err
    assert f"{path}:1: labels[0].gain: must be an integer 0..4, got 2.5" in err
    assert f'{path}:2: query_id: duplicate query_id "q1", first on line 1' in err
    assert f"{path}:3: population_complete: missing required field" in err
    assert "input error(s); nothing was computed" in err


def test_trec_input_errors_from_both_files_are_reported(tmp_path):
    qrels = tmp_path / "q.txt"
    run = tmp_path / "r.txt"
    qrels.write_text("1 0 a 9\n")
    run.write_text("1 Q0 a 1 x t\n")
    result = invoke("--qrels", qrels, "--run", run, "--k", "5")
    assert result.exit_code == 2 and result.stdout == ""
    assert f"{qrels}:1: gain: gain 9 is outside 0..4" in result.stderr
    assert f"{run}:1: score: must be a finite number, got 'x'" in result.stderr


def test_missing_file_is_exit_2(tmp_path):
    result = invoke("--observations", tmp_path / "none.jsonl")
    assert result.exit_code == 2
    assert "none.jsonl: file not found" in result.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "no input"),
        (["--observations", "o.jsonl", "--qrels", "q"], "cannot be combined with --qrels"),
        (["--observations", "o.jsonl", "--k", "3"], "cannot be combined with --k"),
        (["--qrels", "q", "--k", "3"], "needs --run as well"),
        (["--run", "r"], "needs --qrels as well"),
        (["--complete"], "needs --qrels and --run"),
        (["--qrels", "q", "--run", "r"], "needs --k N"),
        (["--qrels", "q", "--run", "r", "--k", "0"], "Invalid value for '--k'"),
        (["--qrels", "q", "--run", "r", "--k", "3", "--gain-map", "7:9"], "into 0..4"),
        (["--observations", "o.jsonl", "--relevance-threshold", "5"], "--relevance-threshold"),
        (["--observations", "o.jsonl", "--format", "html"], "--format"),
    ],
)
def test_usage_errors(args, message):
    result = invoke(*args)
    assert result.exit_code == 2
    assert message in result.stderr
    assert result.stdout == ""


def test_trec_input_and_gain_map(tmp_path):
    qrels = tmp_path / "q.txt"
    run = tmp_path / "r.txt"
    qrels.write_text("1 0 a -1\n1 0 b 5\n2 0 c 1\n")
    run.write_text("1 Q0 a 1 2 t\n1 Q0 b 2 2 t\n3 Q0 z 1 1 t\n")
    result = invoke(
        "--qrels", qrels, "--run", run, "--k", "2", "--complete", "--gain-map", "-1:0,5:4"
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    by_q = {q["query_id"]: q for q in report["queries"]}
    assert list(by_q) == ["1", "2", "3"]
    # tie at score 2: b before a (doc id descending), so RR = 1
    assert by_q["1"]["metrics"]["reciprocal_rank"]["value"] == 1.0
    assert by_q["2"]["metrics"]["precision"]["value"] == 0.0  # not in the run: a real zero
    assert by_q["3"]["reasons"] == ["missing_reference"]
    assert report["diagnostics"]["tied_score_pairs"] == 1


def test_table_shows_protocol_compatibility_and_never_a_number_for_unavailable(tmp_path):
    path = jsonl(tmp_path, WORKED, UNLABELED)
    result = invoke("--observations", path, "--format", "table")
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "protocol: relevance_threshold=1, gain=linear" in out
    assert "unjudged_as_nonrelevant" not in out
    assert "P@3" in out and "nDCG@3" in out and "RR@3" in out and "MRR@" not in out
    assert "unavailable: unlabeled_returned [U] (0.3333..0.6667)" in out
    agg_block = out.split("aggregate over 2 queries")[1].split("diagnostics")[0]
    cells = {}
    for line in agg_block.strip().splitlines():
        label, _, cell = line.strip().partition(" ")
        cells[label] = cell.strip()
    report = json.loads(invoke("--observations", path).stdout)
    labels = {"precision": "P@3", "recall": "R@3", "ndcg": "nDCG@3", "reciprocal_rank": "RR@3"}
    for metric, agg in report["aggregates"].items():
        cell = cells[labels[metric]]
        if agg["status"] == "available":
            assert cell == f"{agg['value']:.4f}"
            continue
        # No number in a value's place: only counts, reasons, and marked bounds.
        assert cell.startswith("unavailable (1 of 2 missing: ")
        assert re.search(r"\d\.\d", cell.split(" bounds ")[0]) is None
    # q2's population is open (section 12): R@3 in [1 / (1 + any number), 2 / 2] there.
    assert cells["R@3"] == (
        "unavailable (1 of 2 missing: unlabeled_returned, population_incomplete) "
        "bounds 0.3333..0.8333"
    )
    assert cells["P@3"] == "unavailable (1 of 2 missing: unlabeled_returned) bounds 0.5000..0.6667"

    compat = invoke("--observations", path, "--format", "table", "--unjudged-as-nonrelevant")
    assert "unjudged_as_nonrelevant: ON (compatibility policy" in compat.stdout


def test_table_escapes_control_characters_in_ids(tmp_path):
    evil = dict(WORKED, query_id="q\x1b[31mred")
    result = invoke("--observations", jsonl(tmp_path, evil), "--format", "table")
    assert "\x1b" not in result.stdout and "q\\x1b[31mred" in result.stdout


@pytest.mark.needs_shared
def test_real_process_python_m_evalcore(tmp_path):
    args = [
        sys.executable,
        "-m",
        "evalcore",
        "evaluate",
        "--qrels",
        str(DATA / "qrels.test"),
        "--run",
        str(DATA / "results.test"),
        "--k",
        "10",
        "--complete",
        "--unjudged-as-nonrelevant",
    ]
    done = subprocess.run(args, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    p10 = {q["query_id"]: q["metrics"]["precision"]["value"] for q in report["queries"]}
    assert p10 == pytest.approx({"301": 0.2, "302": 0.7, "303": 0.0})
    assert report["aggregates"]["precision"]["value"] == pytest.approx(0.3)

    bad = jsonl(tmp_path, {"query_id": "q"})
    done = subprocess.run(
        [sys.executable, "-m", "evalcore", "evaluate", "--observations", str(bad)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2 and done.stdout == ""
    assert f"{bad}:1: k: missing required field 'k'" in done.stderr


def test_table_for_trec_input_shows_invalid_queries_duplicates_and_diagnostics(tmp_path):
    qrels = tmp_path / "q.txt"
    run = tmp_path / "r.txt"
    qrels.write_text("1 0 a 1\n1 0 b 0\n")
    run.write_text("1 Q0 a 1 2 t\n1 Q0 a 2 1 t\n1 Q0 b 3 1 t\n2 Q0 z 1 1 t\n")
    result = invoke("--qrels", qrels, "--run", run, "--k", "3", "--complete", "--format", "table")
    assert result.exit_code == 0, result.output
    rows = {
        line.split()[0]: line for line in result.stdout.splitlines() if line[:2] in ("1 ", "2 ")
    }
    assert "1 returned duplicate(s)" in rows["1"]
    assert (
        "unavailable: missing_reference" in rows["2"] and "invalid: missing_reference" in rows["2"]
    )
    assert "tied score pairs: 1 (ordered by doc ID descending, as trec_eval)" in result.stdout
    assert "returned duplicates: 1 (keep their rank, add no gain)" in result.stdout
    assert re.search(r"\n  P@3 +unavailable \(1 of 2 missing: missing_reference\)\n", result.stdout)
