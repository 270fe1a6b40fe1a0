"""A run's stored rows, whichever way it is handed to the store (issue 16).

``add_run(results=...)`` (rows ``(query_id, rank, unit_id, score)``, in any order: the
imports, the archive, the observations import) and ``add_run(rankings=...)`` (each query's
ranking best first: the lexical workflow) store, row for row and byte for byte, what the
plain rule below says: one ``results`` row per result; one ``run_rankings`` row per query
that returned something, its unit ids and scores as ``json.dumps`` writes them and its
units' codes as little-endian int32; new units coded in the order the queries and their
ranks first name them, after the codes earlier runs gave.
"""

import json
import random
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from store_fixtures import new_store

from evalcore.store.runs import add_run

#: Unit ids a JSON encoder must escape (quote, backslash, control, NUL), non-ASCII, plain.
UNITS = ["a", "b", "doc-7", 'q"uote', "back\\slash", "tab\tid", "nul\x00", "é", "日本", "\u2028",
         "😀", "z" * 30]
score = st.one_of(st.none(), st.floats(allow_nan=False, width=64), st.integers(-5, 5).map(float))
ranking = st.lists(st.tuples(st.sampled_from(UNITS), score), max_size=6)
queries = st.dictionaries(st.sampled_from(["q1", "q10", "q2", "Q", "q é"]), ranking, max_size=5)


def expected(before: dict[str, int], run: dict[str, list[tuple[str, float | None]]]):
    """The rows the rule gives (see the module docstring) and the dictionary after them."""
    codes = dict(before)
    results, rankings = set(), {}
    for q, ranked in run.items():
        if not ranked:
            continue
        for rank, (unit, s) in enumerate(ranked, start=1):
            results.add((q, rank, unit, s))
            codes.setdefault(unit, len(codes))
        rankings[q] = (json.dumps([u for u, _ in ranked], ensure_ascii=False),
                       json.dumps([s for _, s in ranked]),
                       b"".join(struct.pack("<i", codes[u]) for u, _ in ranked))
    return results, rankings, codes


def stored(db, name: str):
    (run_id,) = db.execute("SELECT run_id FROM runs WHERE name = ?", [name]).fetchone()
    results = set(db.execute("SELECT query_id, rank, unit_id, score FROM results "
                             "WHERE run_id = ?", [run_id]).fetchall())
    rankings = {q: (u, s, c) for q, u, s, c in db.execute(
        "SELECT query_id, unit_ids, scores, unit_codes FROM run_rankings WHERE run_id = ?",
        [run_id]).fetchall()}
    codes = dict(db.execute("SELECT unit_id, unit_code FROM study_units").fetchall())
    return results, rankings, codes


@settings(max_examples=60, deadline=None)
@given(earlier=queries, run=queries, seed=st.integers(0, 2**32 - 1))
def test_a_run_is_stored_by_the_rule_from_rows_or_from_rankings(tmp_path_factory, earlier, run,
                                                                seed) -> None:
    for given_as in ("results", "rankings"):
        db = new_store(tmp_path_factory.mktemp(given_as))
        add_run(db, study_id="s", name="earlier", source="imported", k=6, rankings=earlier)
        before = stored(db, "earlier")[2]
        if given_as == "results":
            rows = [(q, r, u, s) for q, ranked in run.items()
                    for r, (u, s) in enumerate(ranked, start=1)]
            random.Random(seed).shuffle(rows)  # any row order: ranked by rank, coded by query
            # ... in the order each query first appears in the rows
            firsts = list(dict.fromkeys(q for q, *_ in rows))
            order = {q: run[q] for q in firsts}
            add_run(db, study_id="s", name="r", source="imported", k=6, results=rows)
        else:
            order = run
            add_run(db, study_id="s", name="r", source="lexical", k=6, rankings=run)
        assert stored(db, "r") == expected(before, order), given_as
        db.conn.close()


@pytest.mark.parametrize("given", [{"results": [], "rankings": {}}, {}])
def test_a_run_takes_rows_or_rankings_not_both(tmp_path, given, store_target) -> None:
    db = new_store(store_target)
    with pytest.raises(TypeError, match="results or rankings"):
        add_run(db, study_id="s", name="r", source="lexical", k=1, **given)
    assert db.execute("SELECT count(*) FROM runs").fetchone() == (0,)


def test_a_run_is_stored_by_the_rule_on_either_engine(store_target) -> None:
    """The bulk insert (``COPY`` on PostgreSQL) keeps every character and float exactly: ids a
    COPY row must escape (tab, newline, backslash, ``\\N``), non-ASCII, a missing score."""
    units = ["a", "tab\tid", "new\nline", "cr\rid", "back\\slash", "\\N", 'q"uote', "é", "😀",
             "\u2028", "z" * 30]
    scores = [None, 0.1, -1e-300, 1e300, 2.5, -0.0, 3.0, None, 1 / 3, 7.0, -2.0]
    run = {"q1": list(zip(units, scores, strict=True)), "q é": [("\\N", None), ("a", 0.5)]}
    db = new_store(store_target)
    add_run(db, study_id="s", name="r", source="imported", k=20,
            results=[(q, r, u, s) for q, ranked in run.items()
                     for r, (u, s) in enumerate(ranked, start=1)])
    results, rankings, codes = stored(db, "r")
    want = expected({}, run)
    assert (results, {q: (u, s, bytes(c)) for q, (u, s, c) in rankings.items()}, codes) == want
    db.conn.close()
