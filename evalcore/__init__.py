"""Relevance Ledger's evaluation core.

The public API, by name::

    from evalcore import EvalProtocol, Observation, evaluate

    report = evaluate(observations, EvalProtocol(relevance_threshold=2))

* :func:`evaluate` -- every metric of every query, or why it is unavailable, and
  the aggregates, as an :class:`EvaluationReport`;
* :class:`Observation` -- one query's returned IDs, labels and completeness claim;
* :class:`EvalProtocol` -- relevance threshold, gain mode, compatibility policy;
* :class:`EvaluationReport` -- the result (contract section 7);
* ``__version__``.

Data flows one way: files or the UI -> validated pydantic models (:mod:`evalcore.contract`)
-> store -> metric computer (:mod:`evalcore.compute`) -> report models -> rendering;
docs/architecture.md maps the packages. A number is published only when the evidence
behind it is complete; otherwise the metric is *unavailable*, with the reasons and the
blocking unit IDs.

The names are loaded on first use, so ``import evalcore.store...`` (or the command line)
does not pay for the metric computer.
"""

from importlib import import_module
from typing import TYPE_CHECKING

from evalcore.contract.version import __version__

if TYPE_CHECKING:
    from evalcore.compute.evaluate import evaluate
    from evalcore.contract.evaluation_protocol import EvalProtocol
    from evalcore.contract.observation import Observation
    from evalcore.contract.results import EvaluationReport

#: Public name -> the module that defines it.
_HOMES = {
    "evaluate": "evalcore.compute.evaluate",
    "EvalProtocol": "evalcore.contract.evaluation_protocol",
    "Observation": "evalcore.contract.observation",
    "EvaluationReport": "evalcore.contract.results",
}

__all__ = ["EvalProtocol", "EvaluationReport", "Observation", "__version__", "evaluate"]


def __getattr__(name: str) -> object:
    if name not in _HOMES:
        raise AttributeError(f"module 'evalcore' has no attribute {name!r}")
    value = getattr(import_module(_HOMES[name]), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
