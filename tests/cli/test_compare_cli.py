"""``evalcore compare``: the bottom line first (candidate − baseline, the baseline named),
then per measure the verdict, the queue and the paired tests; the caution once."""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from evalcore.cli import main

#: The first is the baseline: bm25-title-boost is the candidate.
RUNS = "bm25-plain,bm25-title-boost"
SENTENCE = "bm25-title-boost vs bm25-plain (baseline): "


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory):
    path = tmp_path_factory.mktemp("demo") / "demo.db"
    result = CliRunner().invoke(main, ["demo", "--db", str(path)])
    assert result.exit_code == 0, result.output
    return path


def _compare(*args):
    return CliRunner().invoke(main, ["compare", *map(str, args)])


def test_table_shows_the_verdict_before_the_paired_tests(demo_db) -> None:
    result = _compare("--db", demo_db, "--study", "demo", "--runs", RUNS, "-m", "P@5",
                      "-m", "nDCG@10")
    assert result.exit_code == 0, result.output
    out = result.output
    assert out.startswith(SENTENCE)
    head, details = out.split("\nDetails: ")
    assert "candidate − baseline (mean)" in head.splitlines()[1]
    assert "\nqueries: all (25 queries; every query of the study)\nDetails: " in out
    for name in ("P@5", "nDCG@10"):
        assert f"\n  {name} " in head
        block = details[details.index(f"\n{name}: "):]
        assert block.index(f"{name}: ") < block.index("paired tests on")
    assert "left out" in out and "can be biased" in out
    assert out.count("can be biased") == 1  # the caution once
    assert "unlabeled_returned" not in out  # plain words, not codes


def test_baseline_option_flips_the_candidate_and_every_sign(demo_db) -> None:
    args = ["--db", demo_db, "--study", "demo", "-m", "RR@10", "--format", "json"]
    first = json.loads(_compare(*args, "--runs", RUNS).output)
    flipped = json.loads(_compare(*args, "--runs", RUNS, "--baseline", "bm25-title-boost").output)
    assert (first["candidate"], first["baseline"]) == ("bm25-title-boost", "bm25-plain")
    assert (flipped["candidate"], flipped["baseline"]) == ("bm25-plain", "bm25-title-boost")
    a, b = first["bottom_line"]["measures"][0], flipped["bottom_line"]["measures"][0]
    assert (a["lower"], a["upper"]) == (-b["upper"], -b["lower"])
    assert flipped["bottom_line"]["sentence"].startswith("bm25-plain vs bm25-title-boost (baseline)")
    bad = _compare(*args, "--runs", RUNS, "--baseline", "nope")
    assert bad.exit_code == 2 and "--baseline 'nope' is not one of --runs" in bad.output


def test_json_has_decision_queue_and_tests_with_exclusions(demo_db) -> None:
    result = _compare("--db", demo_db, "--study", "demo", "--runs", RUNS, "-m", "RR@10",
                      "--format", "json")
    assert result.exit_code == 0, result.output
    body = json.loads(result.output)
    assert list(body)[:4] == ["candidate", "baseline", "difference", "bottom_line"]
    assert body["bottom_line"]["sentence"].startswith(SENTENCE)
    data = body["measures"]
    assert [d["decision"]["measure"] for d in data] == ["RR@10"]
    decision = data[0]["decision"]
    assert (decision["run_a"], decision["run_b"]) == ("bm25-title-boost", "bm25-plain")
    assert decision["verdict"] in {"a_better", "b_better", "tied", "undecided", "undecidable"}
    paired = data[0]["paired_tests"]
    assert paired["n_paired"] + paired["n_excluded"] == paired["n_queries"] == 25
    if paired["n_excluded"]:
        assert "biased" in paired["selection_note"]
    assert "items" in data[0]["to_decide"]


@pytest.mark.parametrize(("args", "message"), [
    (["--runs", "bm25-plain", "-m", "P@5"], "two different run names"),
    (["--runs", "bm25-plain,nope", "-m", "P@5"], "no run 'nope'"),
    (["--runs", RUNS, "-m", "P@zero"], "unknown measure"),
    # the demo's runs are stored to depth 10: ranks 11..20 were never retrieved, not empty
    (["--runs", RUNS, "-m", "P@5", "-m", "P@20"],
     "run 'bm25-plain' was stored to depth 10; P@20 would need ranks that were never retrieved"),
])
def test_bad_input_is_exit_2_with_a_message(demo_db, args, message) -> None:
    result = _compare("--db", demo_db, "--study", "demo", *args)
    assert result.exit_code == 2
    assert message in result.output
    assert "Traceback" not in result.output


def test_missing_store_is_exit_2(missing_store_target) -> None:
    result = _compare("--db", missing_store_target, "--study", "demo", "--runs", RUNS, "-m", "P@5")
    assert result.exit_code == 2 and "Traceback" not in result.output
    # SQLite: no file; PostgreSQL: the server says the database does not exist
    assert "no store at" in result.output or "does not exist" in result.output
    if isinstance(missing_store_target, Path):  # no file was created (no server makes a database)
        assert not missing_store_target.exists()
