"""Relevance Ledger's evaluation core.

Data flows one way: files or the UI -> validated pydantic models
(:mod:`evalcore.contract.observation`, :mod:`evalcore.contract.evaluation_protocol`) -> store -> metric
computer -> report models (:mod:`evalcore.contract.results`) -> rendering.

A number is published only when the evidence behind it is complete; otherwise
the metric is *unavailable*, with the reasons and the blocking unit IDs.
"""

__version__ = "0.1.0"
