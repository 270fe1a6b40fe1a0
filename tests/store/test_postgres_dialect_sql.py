"""SQLite SQL on PostgreSQL: ``IN (?, ...)`` lists, aggregates of comparisons, JSON in text.

A chunked lookup's list length changes with every call; the dialect translates the
statement's shape once (sqlglot is slow) and expands each list to its length. SQLite
counts a comparison as 0 or 1 (``max(kind = 'undo')``); PostgreSQL has no max of a
boolean, so the comparison is cast to an integer inside the aggregate. SQLite's
``json_extract`` reads a text column; PostgreSQL's JSON functions need it cast to json.
"""

import pytest

pytest.importorskip("sqlglot")

from evalcore.store import dialect  # noqa: E402


def _lookup(*lengths: int) -> str:
    lists = " AND ".join(f"c{i} IN ({', '.join('?' * n)})" for i, n in enumerate(lengths))
    return f"SELECT a FROM t WHERE s = ? AND {lists} AND z NOT IN (?, ?) AND w IN (?)"


@pytest.mark.parametrize("lengths", [(2,), (3, 7), (500, 1), (1, 2)])
def test_each_list_keeps_its_length_and_place(lengths):
    out = dialect.to_postgres(_lookup(*lengths))
    for i, n in enumerate(lengths):
        assert f"c{i} IN ({', '.join(['%s'] * n)})" in out
    assert "NOT z IN (%s, %s)" in out and "w IN (%s)" in out
    assert out.count("%s") == 1 + sum(lengths) + 2 + 1
    assert "in_list" not in out


def test_a_new_length_is_not_parsed_again():
    dialect.to_postgres(_lookup(4, 4))
    parsed = dialect._translated.cache_info().misses
    for n in (5, 17, 301):
        dialect.to_postgres(_lookup(n, n + 1))
    assert dialect._translated.cache_info().misses == parsed


def test_values_lists_are_left_alone():
    assert dialect.to_postgres("INSERT INTO t (a, b, c) VALUES (?, ?, ?)") == (
        "INSERT INTO t (a, b, c) VALUES (%s, %s, %s)")


@pytest.mark.parametrize("aggregate", ["MAX", "MIN", "SUM", "AVG"])
def test_an_aggregate_of_a_comparison_counts_it_as_0_or_1(aggregate):
    out = dialect.to_postgres(
        f"SELECT query_id, {aggregate}(kind <> 'label'), {aggregate}(gain > 0 AND note = ''), "
        f"{aggregate}(gain) FROM label_events GROUP BY query_id")
    assert f"{aggregate}(CAST(kind <> 'label' AS INT))" in out
    assert f"{aggregate}(CAST(gain > 0 AND note = '' AS INT))" in out
    assert f"{aggregate}(gain)" in out


def test_json_read_from_a_text_column_is_cast_to_json():
    out = dialect.to_postgres("SELECT json_extract(detail_json, '$.unit_id') FROM audit_log "
                              "WHERE json_extract(detail_json, '$.query_id') = ?")
    assert out.count("CAST(detail_json AS JSON)") == 2
