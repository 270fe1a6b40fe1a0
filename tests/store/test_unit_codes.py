"""The per-study unit dictionary (schema v15) and packing from unit codes (issue 16).

* ``ObservationBatch.from_unit_codes`` gives the batch ``from_gain_maps`` gives on the
  same evidence, array by array (conflicts, returned duplicates, unlabeled units, labels
  on units no run returned, permitted ids, queries with no ranking), and ``pos_unit`` /
  ``top_units`` name the same units;
* the store hands out rankings and labels as codes that name back to the stored ids, after
  a write, after the v15 migration of a v14 store and after an archive round trip;
* a study stored before packed rankings (schema v6: runs as ``results`` rows only) is
  backfilled by the migration and gives the same dashboard, pair and evaluation as the same
  study stored now, a run that returned nothing included.
"""

import json
import sqlite3
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from store_fixtures import new_store, store_at_version
from test_study_columns_parity import MEASURES, random_study

from evalcore.analysis.decision import evaluate_column_pair, stored_pair
from evalcore.analysis.pair_comparison import compare_evaluated_pair
from evalcore.analysis.run_evaluation import evaluate_run
from evalcore.compute.batch import ObservationBatch, conflict_code
from evalcore.contract.evaluation_protocol import EvalProtocol
from evalcore.live.charts import per_query_figure, summary_figure
from evalcore.live.dashboard import LiveDashboard
from evalcore.store.connection import open_store
from evalcore.store.labels import record_label
from evalcore.store.observations import observations_for_run, runs_as_columns
from evalcore.store.runs import add_run
from evalcore.store.schema import SCHEMA_VERSION, schema_version
from evalcore.store.study_archive import export_study, import_study, read_archive
from evalcore.store.study_handle import open_study
from evalcore.store.unit_codes import UnitNamer, pack_codes, run_ranking_codes, unit_names

ARRAYS = ("k", "pos_offsets", "pos_gain", "pos_dup", "dup_first", "label_offsets", "label_gain",
          "population_complete", "scan_complete", "permission_violation", "duplicate_reference")
UNITS = [f"u{i}" for i in range(12)]


def assert_same_batch(coded: ObservationBatch, strings: ObservationBatch) -> None:
    assert coded.query_ids == strings.query_ids
    for name in ARRAYS:
        a, b = getattr(coded, name), getattr(strings, name)
        assert a.dtype == b.dtype, name
        assert np.array_equal(a, b), name
    assert coded.conflict_labels == strings.conflict_labels
    assert coded.depth == strings.depth
    assert [list(t) for t in coded.top_units] == [list(t) for t in strings.top_units]


gain = st.one_of(st.integers(0, 4), st.lists(st.integers(0, 4), min_size=2, max_size=3,
                                             unique=True).map(tuple))
query = st.tuples(
    st.lists(st.sampled_from(UNITS), max_size=8),  # a ranking, duplicates allowed
    st.dictionaries(st.sampled_from(UNITS + ["never-returned"]), gain, max_size=6),
    st.booleans(),
)


@settings(max_examples=300, deadline=None)
@given(queries=st.lists(query, max_size=6), k=st.integers(1, 5), min_depth=st.integers(0, 7),
       permitted=st.one_of(st.none(), st.lists(st.sampled_from(UNITS), max_size=12)),
       scan=st.booleans())
def test_packing_from_codes_equals_packing_from_strings(queries, k, min_depth, permitted,
                                                        scan) -> None:
    assert_codes_pack_as_strings(queries, k, min_depth, permitted, scan)


def _own_units(queries: list, private: list[bool]) -> list:
    """The queries with the units of query i renamed to its own (``private[i]``): no other
    query returns or labels them (each code then has one query, the packer's quick path)."""
    out = []
    for i, (ranking, gains, complete) in enumerate(queries):
        if private[i % len(private)]:
            name = {u: u if u == "never-returned" else f"{u}.{i}" for u in UNITS + ["never-returned"]}
            ranking, gains = [name[u] for u in ranking], {name[u]: g for u, g in gains.items()}
        out.append((ranking, gains, complete))
    return out


@settings(max_examples=300, deadline=None)
@given(queries=st.lists(query, max_size=6), private=st.lists(st.booleans(), min_size=1),
       k=st.integers(1, 5), min_depth=st.integers(0, 7), scan=st.booleans(),
       scale=st.sampled_from([1, 1, 2**20]))
def test_packing_from_codes_with_units_of_one_query_equals_packing_from_strings(
        queries, private, k, min_depth, scan, scale) -> None:
    """Units no other query has (every query's own, or some queries' only): the packer finds
    gains and duplicates by code claims, and looks up by sorted keys only the shared ones
    (every one when the codes are too sparse for a table: ``scale``)."""
    assert_codes_pack_as_strings(_own_units(queries, private), k, min_depth, None, scan, scale)


def assert_codes_pack_as_strings(queries, k, min_depth, permitted, scan, scale=1) -> None:
    query_ids = [f"q{i}" for i in range(len(queries))]
    rankings = [r for r, _, _ in queries]
    gains = [{u: g[u] for u in sorted(g)} for _, g, _ in queries]
    complete = [c for _, _, c in queries]
    strings = ObservationBatch.from_gain_maps(
        query_ids, k, rankings, gains, complete, scan_complete=scan, permitted_ids=permitted,
        protocol=EvalProtocol(), min_depth=min_depth)
    # A dictionary in an order of its own; "never-returned" has no code.
    units = sorted({u for r, g, _ in queries for u in [*r, *g]}.union(UNITS, permitted or ())
                   - {"never-returned"})
    code = {u: i * scale for i, u in enumerate(reversed(units))}
    name = {i: u for u, i in code.items()}
    offsets = np.cumsum([0, *map(len, rankings)])
    label_offsets = np.cumsum([0, *map(len, gains)])
    ids = [u for g in gains for u in g]
    coded = ObservationBatch.from_unit_codes(
        query_ids, k, offsets, np.array([code[u] for r in rankings for u in r], dtype="<i4"),
        label_offsets, np.array([code.get(u, -1) for u in ids], dtype=np.int64),
        np.array([v if isinstance(v, int) else conflict_code(v) for g in gains
                  for v in g.values()], dtype=np.int8),
        ids, np.array(complete, dtype=bool), lambda codes: [name[int(c)] for c in codes],
        scan_complete=scan,
        permitted_units=None if permitted is None else np.array([code[u] for u in permitted]),
        protocol=EvalProtocol(), min_depth=min_depth)
    assert_same_batch(coded, strings)
    assert coded.pos_unit is not None and strings.pos_unit is None
    assert [name[c] for c in coded.pos_unit.tolist()] == [u for t in strings.top_units for u in t]


def test_a_store_write_gives_codes_that_name_the_stored_units(tmp_path: Path, store_target) -> None:
    db = new_store(store_target)
    add_run(db, study_id="s", name="A", source="imported", k=3,
            results=[("q1", 2, "b", None), ("q1", 1, "a", None), ("q2", 1, "b", None),
                     ("q2", 2, "b", None)])
    add_run(db, study_id="s", name="B", source="imported", k=3,
            results=[("q2", 1, "c", None), ("q1", 1, "a", None)])
    record_label(db, study_id="s", query_id="q1", unit_id="z", gain=2, annotator="ann")
    units = dict(db.execute("SELECT unit_id, unit_code FROM study_units").fetchall())
    assert sorted(units.values()) == list(range(len(units)))  # dense
    assert units.keys() == {"a", "b", "c", "z"}
    assert units["a"] < units["c"] < units["z"]  # in first-written order
    for (run_id,) in db.execute("SELECT run_id FROM runs").fetchall():
        codes = run_ranking_codes(open_study(db, "s", None), run_id)
        rows = dict(db.execute("SELECT query_id, unit_ids FROM run_rankings WHERE run_id = ?",
                               [run_id]).fetchall())
        names = UnitNamer(open_study(db, "s", None))
        for i, q in enumerate(codes.query_ids):
            assert names(codes.codes[codes.offsets[i]:codes.offsets[i + 1]]) == json.loads(rows[q])
    assert db.execute("SELECT unit_code FROM label_events").fetchall() == [(units["z"],)]
    # A failed write gives no code; codes are never changed.
    with pytest.raises(ValueError):
        add_run(db, study_id="s", name="A", source="imported", k=1, results=[("q9", 1, "new", None)])
    assert "new" not in dict(db.execute("SELECT unit_id, unit_code FROM study_units").fetchall())
    with pytest.raises(Exception, match="never changed"):
        db.execute("UPDATE study_units SET unit_id = 'x' WHERE unit_code = 0")
    with pytest.raises(Exception, match="append-only"):
        db.execute("UPDATE label_events SET gain = 0")
    with pytest.raises(Exception, match="append-only"):
        db.execute("UPDATE label_events SET unit_code = 7")  # set once, by the trigger


@pytest.mark.sqlite_only
def test_a_v14_store_migrates_and_reads_back_identical_rankings(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    rankings = {("1", "q1"): ["d3", "d1", "d3"], ("1", "q2"): ["d2"], ("2", "q1"): ["d9", "d1"]}
    rows = ["INSERT INTO runs (run_id, study_id, name, source, k, created_at) VALUES "
            f"({r}, 's', 'run{r}', 'imported', 2, '2026-01-01T00:00:00Z')" for r in ("1", "2")]
    rows += [f"INSERT INTO run_rankings (run_id, query_id, unit_ids, scores) VALUES ({r}, '{q}', "
             f"'{json.dumps(units)}', '{json.dumps([None] * len(units))}')"
             for (r, q), units in rankings.items()]
    rows += ["INSERT INTO label_events (study_id, query_id, unit_id, gain, annotator, created_at)"
             f" VALUES ('s', 'q1', '{u}', 1, 'ann', '2026-01-01T00:00:00Z')" for u in ("d1", "x")]
    store_at_version(path, 14, *rows)
    db = open_store(path)
    assert schema_version(db) == SCHEMA_VERSION >= 15
    names = UnitNamer(open_study(db, "s", None))
    for (run_id, query_id), units in rankings.items():
        codes = run_ranking_codes(open_study(db, "s", None), int(run_id), [query_id])
        assert codes.query_ids == [query_id]
        assert names(codes.codes) == units
    dictionary = dict(db.execute("SELECT unit_id, unit_code FROM study_units").fetchall())
    assert dictionary == {"d3": 0, "d1": 1, "d2": 2, "d9": 3, "x": 4}
    assert db.execute("SELECT unit_id, unit_code FROM label_events ORDER BY event_id").fetchall() \
        == [("d1", 1), ("x", 4)]


def test_an_archive_round_trip_keeps_codes_right(tmp_path: Path, new_store_target) -> None:
    db = random_study(new_store_target, 4)
    out = tmp_path / "s.zip"
    export_study(db, "s", out, actor="lead")
    target = open_store(new_store_target("other.db"))
    work = tmp_path / "work"
    work.mkdir()
    import_study(target, read_archive(out, work), actor="lead")
    for store in (db, target):
        names = unit_names(open_study(store, "s", "lead"), range(10_000))
        for units, blob in store.execute("SELECT unit_ids, unit_codes FROM run_rankings"):
            assert [names[c] for c in np.frombuffer(blob, "<i4").tolist()] == json.loads(units)
        for unit, code in store.execute("SELECT unit_id, unit_code FROM label_events"):
            assert names[code] == unit
    evaluate = [
        evaluate_column_pair(
            runs_as_columns(open_study(s, "s", "lead"), ["A", "B"]), MEASURES, EvalProtocol()
        )
        for s in (db, target)
    ]
    for a, b in ((evaluate[0].result_a, evaluate[1].result_a),
                 (evaluate[0].result_b, evaluate[1].result_b)):
        assert_same_batch(a.batch, b.batch)


def _copy_into_v6_store(source, path: Path) -> None:
    """A store file at schema v6 (before packed rankings) holding ``source``'s study ``s``:
    its runs (results only, as a v6 writer stored them), label and completeness events."""
    store_at_version(path, 6)
    old = sqlite3.connect(path)
    for table in ("runs", "results", "label_events", "completeness_events"):
        columns = [row[1] for row in old.execute(f"PRAGMA table_info({table})")]
        names = ", ".join(columns)
        rows = source.execute(f"SELECT {names} FROM {table}").fetchall()
        old.executemany(f"INSERT INTO {table} ({names}) VALUES "
                        f"({', '.join('?' * len(columns))})", rows)
    old.commit()
    old.close()


@pytest.mark.sqlite_only
@pytest.mark.parametrize("seed", [1, 3])
def test_a_run_stored_before_packed_rankings_is_backfilled_and_evaluates_identically(
        tmp_path: Path, seed: int, new_store_target) -> None:
    """A study stored at schema v6 (runs as ``results`` rows only) opens migrated: every run
    holds packed rankings and codes that name its results back, and the dashboard, the
    stored pair and ``evaluate_run`` give what they give on the same study stored now."""
    (tmp_path / "now").mkdir()
    now = random_study(lambda name: tmp_path / "now" / name, seed)
    add_run(now, study_id="s", name="C-empty", source="imported", k=6, results=[])
    path = new_store_target("v6.db")
    _copy_into_v6_store(now, path)
    old = open_store(path)
    assert schema_version(old) == SCHEMA_VERSION
    for run_id, name in old.execute("SELECT run_id, name FROM runs").fetchall():
        codes = run_ranking_codes(open_study(old, "s", None), run_id)
        results = {}
        for q, unit in old.execute("SELECT query_id, unit_id FROM results WHERE run_id = ? "
                                   "ORDER BY query_id, rank", [run_id]):
            results.setdefault(q, []).append(unit)
        names = UnitNamer(open_study(old, "s", None))
        assert {q: names(codes.codes[codes.offsets[i]:codes.offsets[i + 1]])
                for i, q in enumerate(codes.query_ids)} == results, name
        assert (name == "C-empty") == (not results)
    assert [dumped(observations_for_run(open_study(db, "s", None), "A")) for db in (old, now)] == [
        dumped(observations_for_run(open_study(now, "s", None), "A"))] * 2
    states = [LiveDashboard.build(open_study(db, "s", None)) for db in (old, now)]
    _same_dashboard(*states)
    _same_cards_and_figures(*states)
    pairs = [stored_pair(open_study(db, "s", None), "A", "B", MEASURES) for db in (old, now)]
    for a, b in zip(*(p.columns for p in pairs), strict=True):
        assert (a.query_ids, list(a.returned_ids), a.gains, a.population_complete) == (
            b.query_ids, list(b.returned_ids), b.gains, b.population_complete)
    compared = [compare_evaluated_pair(p, queue_limit=None) for p in pairs]
    assert compared[0].compat == compared[1].compat
    # The same verdicts and queues. (Units are grouped by their codes, which the migration
    # numbers in its own order: tied queue items and the last bits of a sum over a query's
    # units may come in another order.)
    for a, b in zip(compared[0].measures, compared[1].measures, strict=True):
        assert a.decision == b.decision and a.paired == b.paired and a.causes == b.causes
        assert a.queue.n_candidates == b.queue.n_candidates
        assert a.queue.labels_to_decide == b.queue.labels_to_decide
        items = [sorted((i.query_id, i.unit_id, i.rank_a, i.rank_b, i.kind, round(i.removes, 9),
                         round(i.progress, 9)) for i in m.queue.items) for m in (a, b)]
        assert items[0] == items[1]
    assert any(m.queue.items for m in compared[0].measures)
    assert [evaluate_run(open_study(db, "s", None), "B") for db in (old, now)] == [
        evaluate_run(open_study(now, "s", None), "B")] * 2
    for db, state in zip((old, now), states, strict=True):
        record_label(db, study_id="s", query_id="q5", unit_id="q5-d1", gain=2, annotator="zed")
        state.refresh(open_study(db, state.study_id, None))
        assert state.last_refresh.queries == ["q5"] and not state.last_refresh.full
    _same_dashboard(*states)


def _same_dashboard(a: LiveDashboard, b: LiveDashboard) -> None:
    assert a.query_ids == b.query_ids
    assert a.coverage() == b.coverage()
    assert {q: a.query_coverage(q) for q in a.query_ids} == {
        q: b.query_coverage(q) for q in b.query_ids}
    assert a._complete == b._complete
    for name in a.run_names:
        assert a.aggregates(name) == b.aggregates(name)
        assert a.runs[name].results == b.runs[name].results
        assert [list(t) for t in a.runs[name].top_units] == [list(t) for t in b.runs[name].top_units]
    assert a.blocking_list(None) == b.blocking_list(None)


def _same_cards_and_figures(a: LiveDashboard, b: LiveDashboard) -> None:
    """The cards (each shown measure's aggregate and unknown counts), the figures and the
    blocking list's count of two states."""
    assert a.run_names == b.run_names and a.measures == b.measures
    for measure in a.measures:
        for name in a.run_names:
            assert a.measure_aggregate(name, measure) == b.measure_aggregate(name, measure)
            assert a.measure_unknowns(name, measure) == b.measure_unknowns(name, measure)
            assert a.measure_values(name, measure) == b.measure_values(name, measure)
        assert summary_figure(a, measure, "m") == summary_figure(b, measure, "m")
        assert per_query_figure(a, measure, "m") == per_query_figure(b, measure, "m")
    assert a.n_blocking_items() == b.n_blocking_items()



def dumped(observations) -> list[dict]:
    return [o.model_dump() for o in observations]


def test_codes_only_name_what_is_read(tmp_path: Path, new_store_target) -> None:
    """A build names no unit; reading one query's units names that query's only."""
    db = random_study(new_store_target, 2)
    asked: list[int] = []
    real = UnitNamer.__call__

    def counting(self, codes):
        asked.append(len(codes))
        return real(self, codes)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(UnitNamer, "__call__", counting)
        state = LiveDashboard.build(open_study(db, "s", None))
        assert asked == []
        top = state.runs["A"].top_units[0]
        assert asked == [len(top)]


def test_pack_codes_is_little_endian_int32() -> None:
    assert pack_codes([1, 256]) == b"\x01\x00\x00\x00\x00\x01\x00\x00"


@settings(max_examples=25, deadline=None)
@given(
    st.lists(st.sampled_from(["a", "b", "c", "d", 'e"', "f\\", "gé", "h i"]), min_size=1,
             max_size=12),
    st.lists(st.sampled_from(["a", "b", "c", "d", 'e"', "f\\", "gé", "h i", "x", "A"]),
             max_size=12),
    st.sampled_from([0, 1, 4, 1000]),
)
def test_unit_codes_are_the_same_read_whole_or_in_lists(
    tmp_path_factory, stored, asked, whole
) -> None:
    """:func:`unit_codes_of` reads the study's dictionary whole when asked for a
    large part of it, else looks each id up (one statement): the same codes either way (a
    write uses it), for ids holding a quote, a backslash, a space or a non-ASCII letter."""
    from evalcore.store import unit_codes

    db = new_store(tmp_path_factory.mktemp("codes"))
    add_run(db, study_id="s", name="A", source="imported", k=len(stored),
            results=[("q1", r, u, None) for r, u in enumerate(stored, start=1)])
    table = dict(db.execute("SELECT unit_id, unit_code FROM study_units").fetchall())
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(unit_codes, "_WHOLE", whole)
        got = unit_codes.unit_codes_of(open_study(db, "s", None), asked)
        written = unit_codes.assign_unit_codes(db, "s", asked)
    assert got == {u: table[u] for u in asked if u in table}
    new = [u for u in dict.fromkeys(asked) if u not in table]
    codes = {**got, **dict(zip(new, range(len(table), len(table) + len(new)), strict=True))}
    assert written == [codes[u] for u in asked]


def test_unit_codes_looked_up_by_id_are_the_stored_ones(store_target) -> None:
    """Asked for a few ids of a larger dictionary (looked up one by one in one statement, not
    read whole): the stored codes of those that have one, whatever the ids hold, and a write
    gives the others the next codes in first-seen order; on both engines."""
    from evalcore.store import unit_codes

    odd = ['q"uote', "back\\slash", "é-accent", "tab\tin", "[1, 2]", "null", "a", "A", " a"]
    db = new_store(store_target)
    add_run(db, study_id="s", name="A", source="imported", k=100,
            results=[("q1", r, u, None) for r, u in enumerate(
                [*odd, *(f"d{i}" for i in range(60))], start=1)])
    table = dict(db.execute("SELECT unit_id, unit_code FROM study_units").fetchall())
    asked = [*odd[::-1], "new", 'new"', "d7", "new", "d7", "missing"]
    assert len(table) > unit_codes._WHOLE * len(asked)  # looked up, not read whole
    got = unit_codes.unit_codes_of(open_study(db, "s", None), asked)
    assert got == {u: table[u] for u in asked if u in table}
    written = unit_codes.assign_unit_codes(db, "s", asked)
    fresh = {"new": len(table), 'new"': len(table) + 1, "missing": len(table) + 2}
    assert written == [table.get(u, fresh.get(u)) for u in asked]
    assert unit_codes.unit_codes_of(open_study(db, "s", None), asked) == {
        u: table.get(u, fresh.get(u)) for u in asked}


def test_coded_labels_without_some_units_keep_the_others_in_order() -> None:
    from evalcore.store.observations import CodedLabels

    labels = CodedLabels(offsets=np.array([0, 3, 3, 5]), units=np.array([4, 7, -1, 7, 2]),
                         gain=np.array([1, 0, 2, 3, 12], dtype=np.int8),
                         ids=["a", "b", "c", "b", "d"])
    left = labels.without(["q1", "q2", "q3"], {"q1": {"b", "x"}, "q3": {"d"}, "q9": {"a"}})
    assert left.offsets.tolist() == [0, 2, 2, 3]
    assert left.units.tolist() == [4, -1, 7] and left.gain.tolist() == [1, 2, 3]
    assert list(left.ids) == ["a", "c", "b"]
    same = labels.without(["q1", "q2", "q3"], {})
    assert same.offsets.tolist() == labels.offsets.tolist() and list(same.ids) == labels.ids


def test_a_namer_of_a_small_dictionary_opens_the_store_once(store_target, monkeypatch) -> None:
    # On PostgreSQL each opening is a new server connection (about 14 ms): a dashboard
    # naming the units of 8 rankings, a few at a time, opened 32 of them in one page run.
    import evalcore.store.unit_codes as unit_codes

    db = new_store(store_target)
    add_run(db, study_id="s", name="A", source="imported", k=3,
            results=[(f"q{q}", r, f"d{q}-{r}", None) for q in range(20) for r in (1, 2, 3)])
    opened: list[object] = []
    real = unit_codes.open_read_only
    monkeypatch.setattr(unit_codes, "open_read_only",
                        lambda location: opened.append(location) or real(location))
    codes = run_ranking_codes(open_study(db, "s", None),
                              db.execute("SELECT run_id FROM runs").fetchone()[0])
    names = UnitNamer(open_study(db, "s", None))
    for i, q in enumerate(codes.query_ids):
        assert names(codes.codes[codes.offsets[i]:codes.offsets[i + 1]]) == [
            f"{q}-{r}".replace("q", "d", 1) for r in (1, 2, 3)]
    assert len(opened) == (1 if unit_codes.store_location(db) else 0)
    # a unit coded after the first read is still named (read then)
    add_run(db, study_id="s", name="B", source="imported", k=1, results=[("q0", 1, "late", None)])
    late = unit_codes.UnitNamer(open_study(db, "s", None)).code_of("late")
    assert names(np.array([late])) == ["late"]
