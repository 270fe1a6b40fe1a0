"""The metric computer: observations packed into arrays, validity, one module per measure,
aggregates over queries, and the :func:`~evalcore.compute.evaluate.evaluate` entry point.

Depends only on :mod:`evalcore.contract`; never reads files or the store.
"""
