"""The dialect's rule for truth values used as values: SQLite's comparisons are the integers
0 / 1 (``MAX(kind = 'undo')``, ``SUM(a = b)``, a ``CASE`` result mixed with integers, a
comparison in a ``SELECT`` list or in arithmetic); on PostgreSQL the same statements give the
same integers, and conditions keep their booleans.

The translations are checked as text, and each statement is run on the store's engine (both
with ``--store-engines sqlite,postgres``) against SQLite's own answer computed in memory.
"""

import sqlite3

import pytest

from evalcore.store import dialect
from evalcore.store.connection import open_store

TRANSLATIONS = [
    ("SELECT query_id, unit_id, MAX(kind = 'undo') FROM label_events GROUP BY query_id, unit_id",
     "SELECT query_id, unit_id, MAX(CAST(kind = 'undo' AS INT)) FROM label_events "
     "GROUP BY query_id, unit_id"),
    ("SELECT CASE WHEN a THEN b = c ELSE 0 END FROM t",
     "SELECT CASE WHEN a THEN CAST(b = c AS INT) ELSE 0 END FROM t"),
    ("SELECT SUM(a = b) + (c IS NULL), x IS NOT NULL AS y FROM t",
     "SELECT SUM(CAST(a = b AS INT)) + CAST(c IS NULL AS INT), "
     "CAST(NOT x IS NULL AS INT) AS y FROM t"),
    ("UPDATE t SET a = (b = c), d = 1 WHERE e = 1",
     "UPDATE t SET a = CAST(b = c AS INT), d = 1 WHERE e = 1"),
    ("SELECT EXISTS (SELECT 1 FROM t WHERE a = 1)",
     "SELECT CAST(EXISTS(SELECT 1 FROM t WHERE a = 1) AS INT)"),
]

#: Conditions: PostgreSQL wants a boolean there, so nothing is cast.
CONDITIONS = [
    "SELECT a FROM t WHERE (a = 1 AND b = 2) OR NOT c = 2",
    "SELECT a FROM t WHERE a = ANY (SELECT b FROM u) AND EXISTS(SELECT 1)",
    "SELECT a FROM t JOIN u ON t.a = u.a WHERE CASE WHEN a = 1 THEN 1 ELSE 0 END = 1",
    "SELECT a, COUNT(*) FROM t GROUP BY a HAVING COUNT(*) > 1",
]


@pytest.mark.parametrize(("sqlite_sql", "postgres_sql"), TRANSLATIONS)
def test_a_truth_value_used_as_a_value_becomes_an_integer(sqlite_sql, postgres_sql):
    assert dialect.to_postgres(sqlite_sql) == postgres_sql


@pytest.mark.parametrize("sql", CONDITIONS)
def test_conditions_keep_their_booleans(sql):
    assert "CAST" not in dialect.to_postgres(sql)


def test_a_trigger_condition_stays_a_condition():
    (function, _) = dialect.schema_to_postgres(
        "CREATE TRIGGER t_guard BEFORE UPDATE ON t WHEN NEW.a = 1 AND OLD.a <> NEW.a "
        "BEGIN SELECT RAISE(ABORT, 'no'); END")
    assert "IF NEW.a = 1 AND OLD.a <> NEW.a THEN" in function


_ROWS = [(1, "q1", "u1", "label", 1, 1, None), (2, "q1", "u1", "undo", 2, 2, 3),
         (3, "q1", "u2", "label", 0, 1, 5), (4, "q2", "u1", "label", 3, 3, None),
         (5, "q2", "u1", "label", 1, 2, 1)]

#: Each runs on both engines and must give SQLite's rows (the ORDER BY makes them comparable).
VALUE_QUERIES = [
    "SELECT query_id, unit_id, MAX(kind = 'undo') FROM rl_events GROUP BY query_id, unit_id "
    "ORDER BY query_id, unit_id",
    "SELECT query_id, MIN(kind = 'label'), SUM(gain = grade), TOTAL(gain > 1), AVG(gain = 1) "
    "FROM rl_events GROUP BY query_id ORDER BY query_id",
    "SELECT event_id, gain = grade, (gain > 0) + (grade > 1), note IS NULL, note IS NOT NULL "
    "FROM rl_events ORDER BY event_id",
    "SELECT event_id, CASE WHEN kind = 'undo' THEN 0 WHEN gain > 1 THEN 2 ELSE gain = grade END "
    "FROM rl_events ORDER BY event_id",
    "SELECT event_id, COALESCE(note > 2, -1), gain = grade AND kind = 'label' FROM rl_events "
    "ORDER BY event_id",
    "SELECT event_id FROM rl_events WHERE (gain = grade) = 1 ORDER BY event_id",
    "SELECT query_id, unit_id, kind, MAX(event_id) FROM rl_events GROUP BY query_id, unit_id "
    "HAVING MAX(kind = 'undo') = 0 ORDER BY query_id, unit_id",
    "SELECT EXISTS (SELECT 1 FROM rl_events WHERE kind = 'undo'), "
    "EXISTS (SELECT 1 FROM rl_events WHERE kind = 'nothing')",
    "SELECT event_id FROM rl_events ORDER BY kind = 'undo', event_id",
    "SELECT TOTAL(gain), TOTAL(gain = 9) FROM rl_events WHERE kind = 'nothing'",
]

_CREATE = ("CREATE TABLE rl_events (event_id INTEGER PRIMARY KEY, query_id TEXT NOT NULL, "
           "unit_id TEXT NOT NULL, kind TEXT NOT NULL, gain INTEGER NOT NULL, "
           "grade INTEGER NOT NULL, note INTEGER)")
_INSERT = "INSERT INTO rl_events VALUES (?, ?, ?, ?, ?, ?, ?)"


@pytest.fixture
def expected() -> dict[str, list[tuple]]:
    conn = sqlite3.connect(":memory:")
    conn.execute(_CREATE)
    conn.executemany(_INSERT, _ROWS)
    return {sql: conn.execute(sql).fetchall() for sql in VALUE_QUERIES}


def test_truth_values_as_values_give_sqlites_integers_on_the_store_engine(store_target, expected):
    db = open_store(store_target)
    try:
        db.execute(_CREATE)
        for row in _ROWS:
            db.execute(_INSERT, list(row))
        for sql in VALUE_QUERIES:
            got = [tuple(row) for row in db.execute(sql).fetchall()]
            assert got == expected[sql], sql
            assert [type(v) for row in got for v in row] == [
                type(v) for row in expected[sql] for v in row], sql
    finally:
        db.close()
