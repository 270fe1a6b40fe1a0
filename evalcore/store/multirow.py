"""Inserting many rows: multi-row ``VALUES`` statements instead of one statement per row.

``executemany`` of a one-row ``INSERT`` pays the driver's per-row work (bind, step,
reset) once per row; a statement of :data:`ROWS_PER_STATEMENT` rows pays it once per
statement and SQLite inserts the same rows, in the same order, with the same
constraints checked, for about half the CPU (benchmarks/bench_store.py).
"""

import sqlite3
from collections.abc import Iterable
from itertools import chain

#: Rows per statement: at 5 columns, 500 parameters (SQLite's limit: 999 before 3.32).
ROWS_PER_STATEMENT = 100


def insert_rows(conn: sqlite3.Connection, head: str, width: int, rows: Iterable[tuple]) -> None:
    """Run ``head`` (``INSERT INTO t (a, b)``) on ``rows`` (each of ``width`` values), in
    order, inside the caller's transaction."""
    flat = list(chain.from_iterable(rows))
    if len(flat) % width:
        raise ValueError(f"{len(flat)} values do not make rows of {width}")
    values = "(" + ", ".join("?" * width) + ")"
    step = width * ROWS_PER_STATEMENT
    whole = len(flat) - len(flat) % step
    if whole:
        conn.executemany(f"{head} VALUES {', '.join([values] * ROWS_PER_STATEMENT)}",
                         (flat[i:i + step] for i in range(0, whole, step)))
    if whole < len(flat):
        conn.execute(f"{head} VALUES {', '.join([values] * ((len(flat) - whole) // width))}",
                     flat[whole:])
