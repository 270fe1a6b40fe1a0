"""Relevance Ledger's evaluation core.

Data flows one way (docs/architecture.md maps the packages): files or the UI -> validated pydantic models
(:mod:`evalcore.contract.observation`, :mod:`evalcore.contract.evaluation_protocol`) -> store -> metric
computer -> report models (:mod:`evalcore.contract.results`) -> rendering.

A number is published only when the evidence behind it is complete; otherwise
the metric is *unavailable*, with the reasons and the blocking unit IDs.

The public API, in one import::

    import evalcore
    result = evalcore.evaluate("qrels.txt", "run.txt", measures=["nDCG@10", "P@5"])

``evaluate`` (:mod:`evalcore.api.evaluate`), ``Qrels`` (qrels prepared once for many
runs, :mod:`evalcore.api.qrels`), ``parse_measure`` and ``Measure``
(:mod:`evalcore.contract.measures`), ``EvaluationResult`` and ``Unavailable``
(:mod:`evalcore.api.result`), ``Observation``, ``EvalProtocol`` and
``EvaluationReport`` (the contract models). They are imported on first use,
so ``import evalcore`` (and the CLI's start) stays cheap.
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

from evalcore.contract.version import __version__

#: Public name -> the module that defines it.
_EXPORTS: dict[str, str] = {
    "evaluate": "evalcore.api.evaluate",
    "Qrels": "evalcore.api.qrels",
    "EvaluationResult": "evalcore.api.result",
    "Unavailable": "evalcore.api.result",
    "parse_measure": "evalcore.contract.measures",
    "Measure": "evalcore.contract.measures",
    "UnknownMeasure": "evalcore.contract.measures",
    "Observation": "evalcore.contract.observation",
    "EvalProtocol": "evalcore.contract.evaluation_protocol",
    "EvaluationReport": "evalcore.contract.results",
}

__all__ = [
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

if TYPE_CHECKING:
    from evalcore.api.evaluate import evaluate
    from evalcore.api.qrels import Qrels
    from evalcore.api.result import EvaluationResult, Unavailable
    from evalcore.contract.evaluation_protocol import EvalProtocol
    from evalcore.contract.measures import Measure, UnknownMeasure, parse_measure
    from evalcore.contract.observation import Observation
    from evalcore.contract.results import EvaluationReport


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'evalcore' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
