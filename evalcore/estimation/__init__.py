"""Estimated comparisons (evidence contract section 13): a random sample of the unknown
units of a comparison, and a design-based confidence interval of the mean difference.

An estimate is never evidence and never "decided": it is shown apart from the decided
verdict (:mod:`evalcore.analysis.decision`). See ``docs/estimation.md``.
"""
