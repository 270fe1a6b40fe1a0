"""``evalcore``'s public API: the names a user imports from the package itself."""

import subprocess
import sys
from pathlib import Path

import pytest

import evalcore
from evalcore.api.evaluate import evaluate as api_evaluate
from evalcore.contract.evaluation_protocol import EvalProtocol
from evalcore.contract.observation import Label, Observation
from evalcore.contract.results import EvaluationReport
from evalcore.contract.version import __version__

REPO = Path(__file__).resolve().parents[2]


def test_evaluate_is_the_function_and_the_models_are_the_contract_models() -> None:
    from evalcore import EvalProtocol as Protocol
    from evalcore import EvaluationReport as Report
    from evalcore import Observation as Obs
    from evalcore import evaluate

    assert evaluate is api_evaluate and callable(evaluate)
    assert (Obs, Protocol, Report) == (Observation, EvalProtocol, EvaluationReport)
    assert evalcore.__version__ == __version__


def test_all_names_exactly_what_the_package_exports() -> None:
    assert sorted(evalcore.__all__) == [
        "EvalProtocol",
        "EvaluationReport",
        "EvaluationResult",
        "Measure",
        "Observation",
        "Qrels",
        "Unavailable",
        "UnknownMeasure",
        "__version__",
        "evaluate",
        "parse_measure",
    ]
    for name in evalcore.__all__:
        assert getattr(evalcore, name) is not None
    assert set(evalcore.__all__) <= set(dir(evalcore))


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'evaluate_batch'"):
        evalcore.evaluate_batch  # noqa: B018
    with pytest.raises(ImportError):
        from evalcore import nothing_here  # noqa: F401


def test_the_public_api_evaluates_an_observation() -> None:
    from evalcore import EvalProtocol, Observation, evaluate

    observation = Observation(
        query_id="q1",
        k=2,
        returned_ids=["d1", "d2"],
        labels=[Label(id="d1", gain=3), Label(id="d2", gain=0)],
        population_complete=True,
    )
    report = evaluate([observation], EvalProtocol(relevance_threshold=2))
    assert isinstance(report, EvaluationReport)
    assert report.queries[0].metrics["precision"].value == 0.5


def test_importing_the_package_does_not_load_the_metric_computer() -> None:
    # ``import evalcore.store...`` runs evalcore/__init__ first: it must stay cheap.
    code = (
        "import sys, evalcore\n"
        "heavy = [m for m in ('numpy', 'pydantic', 'evalcore.compute.evaluate') if m in sys.modules]\n"
        "print(heavy)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
    )
    assert out.stdout.strip() == "[]"
