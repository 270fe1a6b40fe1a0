"""Statistics over evaluation results: paired significance tests, p-value
correction for multiple comparisons, and inter-annotator agreement.

Every test returns either a computed result or an explicit *not computable*
result with the reason, never a NaN.
"""
