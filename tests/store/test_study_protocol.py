"""A study's settings become an EvalProtocol in one place, and every surface uses it."""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from store_fixtures import new_store

from evalcore.analysis.inspector import inspect_query
from evalcore.analysis.run_evaluation import evaluate_run
from evalcore.cli import main
from evalcore.compute.evaluate import evaluate
from evalcore.contract.evaluation_protocol import EvalProtocol
from evalcore.live.dashboard import LiveDashboard, query_results_by_run
from evalcore.report.from_store import report_from_store
from evalcore.store.completeness import mark_complete
from evalcore.store.labels import record_label
from evalcore.store.observations import observations_for_run
from evalcore.store.runs import add_run
from evalcore.store.studies import StudyIn
from evalcore.store.study_handle import open_study

DECLARED = EvalProtocol(relevance_threshold=2, gain="exponential")


def test_study_settings_give_the_declared_protocol() -> None:
    study = StudyIn(study_id="s", corpus_id="c", relevance_threshold=2, gain="exponential")
    assert study.protocol() == DECLARED
    assert StudyIn(study_id="s", corpus_id="c").protocol() == EvalProtocol()


@pytest.fixture
def db(tmp_path: Path, store_target):
    db = new_store(store_target, relevance_threshold=2, gain="exponential")
    for unit, gain in (("A", 1), ("B", 3)):
        record_label(db, study_id="s", query_id="q1", unit_id=unit, gain=gain, annotator="a")
    mark_complete(db, study_id="s", query_id="q1", actor="lead")
    add_run(db, study_id="s", name="r", source="imported", k=2,
            results=[("q1", 1, "A", 2.0), ("q1", 2, "B", 1.0)])
    return db


def test_every_surface_evaluates_under_the_study_protocol(db, tmp_path: Path, store_target) -> None:
    expected = evaluate(observations_for_run(open_study(db, "s", None), "r"), DECLARED).queries[0]
    # The settings matter here: under the default protocol the numbers differ.
    default = evaluate(observations_for_run(open_study(db, "s", None), "r"), EvalProtocol()).queries[0]
    assert expected.metrics != default.metrics

    assert evaluate_run(open_study(db, "s", None), "r").protocol == DECLARED
    assert evaluate_run(open_study(db, "s", None), "r").queries[0] == expected
    assert LiveDashboard.build(open_study(db, "s", None)).evaluation("r").protocol == DECLARED
    assert query_results_by_run(open_study(db, "s", None), "q1")["r"] == expected
    assert inspect_query(open_study(db, "s", None), "r", "q1").result == expected
    report = report_from_store(open_study(db, "s", "lead"), runs=["r"], created_by="lead")
    assert report.protocol == DECLARED

    result = CliRunner().invoke(main, ["evaluate", "--db", str(store_target),
                                       "--study", "s", "--run", "r"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["protocol"] == {"relevance_threshold": 2,
                                                     "gain": "exponential"}
    # An option given on the command line wins over the study's setting.
    result = CliRunner().invoke(main, ["evaluate", "--db", str(store_target),
                                       "--study", "s", "--run", "r", "--gain", "linear"])
    assert json.loads(result.output)["protocol"] == {"relevance_threshold": 2, "gain": "linear"}
