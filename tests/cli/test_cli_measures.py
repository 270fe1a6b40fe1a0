"""``evalcore evaluate -m``: named measures from files and from a store.

Without ``-m`` the output keeps section 7's keys (the other CLI tests); with
it, per-query metrics and aggregates are keyed by canonical names.
"""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from shared_data import TREC_EVAL_DATA

import evalcore.cli.store_cmds  # noqa: F401  (registers the store commands)
from evalcore.cli import main

QRELS = "q1 0 A 2\nq1 0 B 0\nq1 0 C 1\nq2 0 D 1\nq2 0 E 0\n"
RUN = "q1 Q0 A 1 3.0 t\nq1 Q0 X 2 2.0 t\nq1 Q0 C 3 1.0 t\nq2 Q0 E 1 5.0 t\nq2 Q0 D 2 1.0 t\n"


def cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture
def files(tmp_path) -> tuple[Path, Path]:
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "run.txt").write_text(RUN)
    return tmp_path / "qrels.txt", tmp_path / "run.txt"


def test_named_measures_are_keyed_by_canonical_names_in_order(files):
    qrels, run = files
    result = cli("evaluate", "--qrels", qrels, "--run", run, "--complete",
                 "-m", "ndcg@3", "-m", "P@2", "-m", "MRR@3", "-m", "P(rel=2)@1")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert list(report["aggregates"]) == ["nDCG@3", "P@2", "RR@3", "P(rel=2)@1"]
    assert list(report["queries"][0]["metrics"]) == ["nDCG@3", "P@2", "RR@3", "P(rel=2)@1"]
    assert [q["k"] for q in report["queries"]] == [3, 3]  # the deepest cutoff, without --k
    q2 = report["queries"][1]["metrics"]
    assert q2["RR@3"] == {"status": "available", "value": 0.5}
    assert q2["P(rel=2)@1"] == {"status": "available", "value": 0.0}


def test_a_named_measure_equals_the_section_7_metric_at_the_same_cutoff(files):
    qrels, run = files
    default = json.loads(cli("evaluate", "--qrels", qrels, "--run", run, "--k", "2",
                             "--complete", "--unjudged-as-nonrelevant").stdout)
    named = json.loads(cli("evaluate", "--qrels", qrels, "--run", run, "--complete",
                           "--unjudged-as-nonrelevant", "-m", "P@2", "-m", "R@2", "-m", "nDCG@2",
                           "-m", "RR@2").stdout)
    pairs = {"precision": "P@2", "recall": "R@2", "ndcg": "nDCG@2", "reciprocal_rank": "RR@2"}
    for old, new in pairs.items():
        assert default["aggregates"][old] == named["aggregates"][new]
        for a, b in zip(default["queries"], named["queries"], strict=True):
            assert a["metrics"][old] == b["metrics"][new]


def test_several_cutoffs_in_one_pass_and_k_for_the_uncut(files):
    qrels, run = files
    result = cli("evaluate", "--qrels", qrels, "--run", run, "--k", "1", "-m", "P", "-m", "P@3",
                 "--unjudged-as-nonrelevant")
    report = json.loads(result.stdout)
    assert [q["k"] for q in report["queries"]] == [1, 1]
    assert report["queries"][0]["metrics"]["P"]["value"] == 1.0
    assert report["queries"][0]["metrics"]["P@3"]["value"] == pytest.approx(2 / 3)


def test_unknown_or_uncut_measures_exit_2_with_what_to_do(files):
    qrels, run = files
    bad = cli("evaluate", "--qrels", qrels, "--run", run, "-m", "P@5", "-m", "nDGC@10")
    assert bad.exit_code == 2 and bad.stdout == ""
    assert "unknown measure 'nDGC@10'" in bad.stderr
    assert "known measures: P@k, P(rel=r)@k, R@k, nDCG@k" in bad.stderr
    uncut = cli("evaluate", "--qrels", qrels, "--run", run, "-m", "P", "-m", "R@5")
    assert uncut.exit_code == 2
    assert "-m P has no cutoff: give --k N, or name it with @k (e.g. P@10)" in uncut.stderr
    nok = cli("evaluate", "--qrels", qrels, "--run", run)
    assert nok.exit_code == 2 and "TREC input needs --k N" in nok.stderr


def test_table_shows_canonical_names_and_mrr_for_the_mean(files):
    qrels, run = files
    result = cli("evaluate", "--qrels", qrels, "--run", run, "--complete", "--format", "table",
                 "-m", "nDCG@3", "-m", "RR@3", "-m", "Success@1")
    assert result.exit_code == 0, result.output
    header = next(line for line in result.stdout.splitlines() if line.startswith("query"))
    assert header.split() == ["query", "k", "nDCG@3", "RR@3", "Success@1", "notes"]
    assert "  RR@3 " in result.stdout and "  Success@1 " in result.stdout
    assert "MRR@" not in result.stdout  # one name per measure, as the verdicts say it


def test_observations_accept_named_measures(tmp_path):
    path = tmp_path / "obs.jsonl"
    path.write_text(json.dumps({"query_id": "q", "k": 3, "returned_ids": ["A", "X", "B"],
                                "labels": [{"id": "A", "gain": 1}, {"id": "X", "gain": 0}],
                                "population_complete": False}) + "\n")
    report = json.loads(cli("evaluate", "--observations", path, "-m", "P@1", "-m", "P").stdout)
    metrics = report["queries"][0]["metrics"]
    assert metrics["P@1"] == {"status": "available", "value": 1.0}
    assert metrics["P"]["reasons"] == ["unlabeled_returned"]


@pytest.mark.needs_shared
def test_a_stored_run_is_evaluated_at_any_cutoff_up_to_its_depth(tmp_path, store_target):
    db = store_target
    qrels, run = TREC_EVAL_DATA / "qrels.test", TREC_EVAL_DATA / "results.test"
    assert cli("init", "--db", db).exit_code == 0
    assert cli("study", "create", "--db", db, "--study", "s", "--corpus", "c").exit_code == 0
    assert cli("import", "qrels", "--db", db, "--study", "s", qrels, "--complete").exit_code == 0
    assert cli("import", "run", "--db", db, "--study", "s", run, "--k", "100").exit_code == 0
    measures = ["-m", "P@5", "-m", "nDCG@10", "-m", "R@100", "-m", "AP@100"]
    stored = cli("evaluate", "--db", db, "--study", "s", "--run", "STANDARD", *measures)
    assert stored.exit_code == 0, stored.output
    from_files = cli("evaluate", "--qrels", qrels, "--run", run, "--k", "100", "--complete",
                     *measures)
    # from files, --complete is an assumption the output prints; the store's claims are its own
    files_report = json.loads(from_files.stdout)
    assert files_report["protocol"].pop("populations_declared_complete") is True
    assert json.loads(stored.stdout) == files_report
    assert list(json.loads(stored.stdout)["aggregates"]) == ["P@5", "nDCG@10", "R@100", "AP@100"]
    deeper = cli("evaluate", "--db", db, "--study", "s", "--run", "STANDARD", "-m", "P@5",
                 "-m", "P@200")
    assert deeper.exit_code == 2 and deeper.stdout == ""
    assert "run 'STANDARD' was stored to depth 100; P@200 would need ranks that were never " \
           "retrieved" in deeper.stderr
