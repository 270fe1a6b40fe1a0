"""One BLAS thread for the command line, decided before numpy is imported.

numpy's OpenBLAS starts one worker thread per core when it is loaded (at
``import numpy``), whether or not anything will ever multiply a matrix. No
command of the ``evalcore`` line does work that those threads speed up (the
measures are element-wise array operations and sorts, which numpy runs on one
thread anyway), yet starting them costs every command's start-up
(benchmarks/bench_trec_files.py shows the start-up). OpenBLAS reads ``OPENBLAS_NUM_THREADS`` once, when the library
is loaded, so the variable must be in the environment before the first
``import numpy``.

Importing this module calls :func:`one_blas_thread`, which sets it to ``1`` unless the user set it (their value is
kept) or numpy is already imported (too late to matter; left alone). Only
``OPENBLAS_NUM_THREADS``: ``OMP_NUM_THREADS`` would also size other libraries'
pools (pyarrow's CPU pool reads it), and MKL starts no thread at import.

The environment belongs to the whole process (and to its children), so only a
process owner imports this module: the command line's entry module
(:mod:`evalcore.cli`, which ``python -m evalcore`` and the ``evalcore`` script both
run) imports it before anything else; so do the app's processes, which import
``evalcore.cli.driver_import`` before numpy (process owners as well; their matrix
products, agreement and significance, are small). ``import evalcore`` as a library never does (docs/architecture.md, "Process-wide
state"; ``tests/cli/test_cli_startup.py``).
"""

import os
import sys

#: The variable OpenBLAS reads when it is loaded, and the value the command line gives it.
VARIABLE = "OPENBLAS_NUM_THREADS"
VALUE = "1"


def one_blas_thread() -> bool:
    """Set ``OPENBLAS_NUM_THREADS=1`` unless the user set it or numpy is loaded; True if set."""
    if VARIABLE in os.environ or "numpy" in sys.modules:
        return False
    os.environ[VARIABLE] = VALUE
    return True


#: Whether this process's command line set the variable (False: the user's value, or too late).
SET_HERE = one_blas_thread()
