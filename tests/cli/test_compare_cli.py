"""``evalcore compare``: the evidence's verdict first, then the queue, then the paired tests."""

import json

import pytest
from click.testing import CliRunner

from evalcore.cli import main

RUNS = "bm25-title-boost,bm25-plain"


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
    first, out = result.output.split("\n", 1)
    assert first == "queries: all (25 queries; every query of the study)"
    assert out.startswith("P@5: ")
    for name in ("P@5", "nDCG@10"):
        block = out[out.index(f"{name}: "):]
        verdict_at = block.index(f"{name}: ")
        assert verdict_at < block.index("paired tests:")
    assert "undecidable" in out or "decided" in out or "undecided" in out
    assert "left out" in out and "can be biased" in out


def test_json_has_decision_queue_and_tests_with_exclusions(demo_db) -> None:
    result = _compare("--db", demo_db, "--study", "demo", "--runs", RUNS, "-m", "RR@10",
                      "--format", "json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert [d["decision"]["measure"] for d in data] == ["RR@10"]
    decision = data[0]["decision"]
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
])
def test_bad_input_is_exit_2_with_a_message(demo_db, args, message) -> None:
    result = _compare("--db", demo_db, "--study", "demo", *args)
    assert result.exit_code == 2
    assert message in result.output
    assert "Traceback" not in result.output


def test_missing_store_is_exit_2(tmp_path) -> None:
    result = _compare("--db", tmp_path / "none.db", "--study", "demo", "--runs", RUNS, "-m", "P@5")
    assert result.exit_code == 2 and "no store at" in result.output
