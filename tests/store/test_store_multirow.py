"""Multi-row inserts (:mod:`evalcore.store.multirow`) insert every row, in order, as one
statement per row would, whatever the count (none, under, at and over a statement's rows),
and refuse values that do not make whole rows."""

import sqlite3

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalcore.store import multirow

value = st.one_of(st.none(), st.integers(-(2**63), 2**63 - 1), st.floats(allow_nan=False), st.text(max_size=3))


@settings(max_examples=200, deadline=None)
@given(rows=st.lists(st.tuples(value, value, value), max_size=40), per=st.integers(1, 7))
def test_every_row_is_inserted_in_order(rows, per) -> None:
    conn = sqlite3.connect(":memory:")
    for table in ("one", "many"):
        conn.execute(f"CREATE TABLE {table} (a, b, c)")
    conn.executemany("INSERT INTO one (a, b, c) VALUES (?, ?, ?)", rows)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(multirow, "ROWS_PER_STATEMENT", per)
        multirow.insert_rows(conn, "INSERT INTO many (a, b, c)", 3, iter(rows))
    read = "SELECT rowid, a, typeof(a), b, typeof(b), c, typeof(c) FROM {} ORDER BY rowid"
    assert conn.execute(read.format("many")).fetchall() == conn.execute(
        read.format("one")).fetchall()


def test_values_that_do_not_make_whole_rows_are_refused() -> None:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE t (a, b)")
    with pytest.raises(ValueError, match="rows of 2"):
        multirow.insert_rows(conn, "INSERT INTO t (a, b)", 2, [(1, 2), (3,)])
    assert conn.execute("SELECT count(*) FROM t").fetchone() == (0,)


def test_a_constraint_fails_as_it_would_row_by_row() -> None:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE t (a PRIMARY KEY, b)")
    with pytest.raises(sqlite3.IntegrityError, match="UNIQUE"):
        multirow.insert_rows(conn, "INSERT INTO t (a, b)", 2, [(i % 150, i) for i in range(160)])
