"""The Python API: one call from qrels and a run (files, dicts or DataFrames) to a result.

Layer: above :mod:`evalcore.io` (it reads files) and :mod:`evalcore.compute`,
below everything that needs a store; ``evalcore evaluate`` (the CLI) builds its
TREC input with the same functions (:mod:`evalcore.api.inputs`), so the command
line and the library are the same thing seen twice.

* :func:`evalcore.api.evaluate.evaluate` (exported as ``evalcore.evaluate``);
* :class:`evalcore.api.result.EvaluationResult`, its answer, and
  :class:`evalcore.api.result.Unavailable`, an aggregate without a number.
"""
