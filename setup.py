"""The optional compiled part of the columnar TREC reader (everything else is in pyproject.toml).

``evalcore.io._trec_scan`` is built when a C compiler is there; without one the install
still succeeds (``optional=True``) and :mod:`evalcore.io.trec_bytes` runs its numpy
versions of the same loops (same results, slower).
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension("evalcore.io._trec_scan", ["evalcore/io/_trec_scan.c"], optional=True),
    ],
)
