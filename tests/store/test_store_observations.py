"""observations_for_run / evaluate_run: the store seen as the contract's observations."""

import pytest
from store_fixtures import new_store

from evalcore.analysis.run_evaluation import evaluate_run
from evalcore.compute.evaluate import evaluate
from evalcore.contract.evaluation_protocol import EvalProtocol
from evalcore.contract.observation import Label, Observation
from evalcore.store.completeness import mark_complete
from evalcore.store.labels import record_label
from evalcore.store.observations import observations_for_run
from evalcore.store.references import freeze_reference
from evalcore.store.runs import add_run
from evalcore.store.study_handle import open_study


@pytest.fixture
def db(tmp_path, store_target):
    db = new_store(store_target, corpus_id="acme", relevance_threshold=1)
    add_run(
        db,
        study_id="s",
        name="bm25",
        source="imported",
        k=3,
        results=[
            ("q1", 1, "A", 12.1),
            ("q1", 2, "X", 9.8),
            ("q1", 3, "B", 9.8),
            ("q1", 4, "Z", 1.0),
            ("q3", 1, "A", 2.0),
        ],
        corpus_fingerprint="sha256:abc",
    )
    for unit, gain in [("A", 2), ("X", 0), ("B", 1), ("C", 3)]:
        record_label(db, study_id="s", query_id="q1", unit_id=unit, gain=gain, annotator="a")
    record_label(db, study_id="s", query_id="q2", unit_id="D", gain=1, annotator="a")
    record_label(db, study_id="s", query_id="q2", unit_id="E", gain=0, annotator="a")
    record_label(db, study_id="s", query_id="q2", unit_id="E", gain=2, annotator="b")
    mark_complete(db, study_id="s", query_id="q1", actor="lead")
    return db


def expected(reference=None):
    common = dict(
        corpus_id="acme",
        corpus_fingerprint="sha256:abc",
        retrieval_unit="document",
        k=3,
        scan_complete=True,
        reference_version=reference,
    )
    return [
        Observation(
            query_id="q1",
            returned_ids=["A", "X", "B", "Z"],
            scores=[12.1, 9.8, 9.8, 1.0],
            labels=[Label(id="A", gain=2), Label(id="B", gain=1), Label(id="C", gain=3),
                    Label(id="X", gain=0)],
            population_complete=True,
            **common,
        ),
        # q2: not in the run (empty ranking); E is in conflict (0 vs 2): a conflict label
        # (contract section 9), never dropped. A frozen version holds resolved labels only.
        Observation(
            query_id="q2", returned_ids=[], scores=[],
            labels=[Label(id="D", gain=1)]
            + ([Label(id="E", conflict=[0, 2])] if reference is None else []),
            population_complete=False, **common,
        ),
        # q3: in the run but unlabeled.
        Observation(
            query_id="q3", returned_ids=["A"], scores=[2.0], labels=[],
            population_complete=False, **common,
        ),
    ]


def dumped(observations):
    return [o.model_dump() for o in observations]


def test_working_reference_observations_match_hand_built(db):
    assert dumped(observations_for_run(open_study(db, "s", None), "bm25")) == dumped(expected())


def test_frozen_reference_is_used_and_recorded(db):
    freeze_reference(db, study_id="s", name="v1", actor="lead")
    record_label(db, study_id="s", query_id="q1", unit_id="Z", gain=4, annotator="a")
    assert dumped(
        observations_for_run(open_study(db, "s", None), "bm25", reference="v1")
    ) == dumped(expected("v1"))
    working = observations_for_run(open_study(db, "s", None), "bm25")
    assert working[0].population_complete is False  # auto-reopened by the Z label
    assert Label(id="Z", gain=4) in working[0].labels


def test_query_subset_and_order(db):
    got = observations_for_run(open_study(db, "s", None), "bm25", query_ids=["q3", "q1"])
    assert [o.query_id for o in got] == ["q3", "q1"]


def test_evaluate_run_equals_evaluate_of_hand_built(db):
    report = evaluate_run(open_study(db, "s", None), "bm25")
    direct = evaluate(expected(), EvalProtocol())
    assert report.model_dump()["queries"] == direct.model_dump()["queries"]
    assert report.aggregates == direct.aggregates
    q1 = report.queries[0].metrics
    assert q1["precision"].value == pytest.approx(2 / 3)
    assert q1["recall"].value == pytest.approx(2 / 3)
    assert report.diagnostics.tied_score_pairs == 1


def test_packed_rankings_equal_the_results_table(db):
    add_run(db, study_id="s", name="shuffled", source="lexical", k=2,
            results=[("q2", 3, "C", None), ("q1", 2, "B", 0.5), ("q2", 1, "A", None),
                     ("q1", 1, "A", 1.0 / 3), ("q2", 2, "B", None)])
    for run in ("bm25", "shuffled"):
        stored: dict[str, tuple[list, list]] = {}
        for q, unit, score in db.execute(
                "SELECT query_id, unit_id, score FROM results WHERE run_id = "
                "(SELECT run_id FROM runs WHERE name = ?) ORDER BY query_id, rank", [run]):
            stored.setdefault(q, ([], []))[0].append(unit)
            stored[q][1].append(score)
        for observation in observations_for_run(open_study(db, "s", None), run):
            units, scores = stored.get(observation.query_id, ([], []))
            assert observation.returned_ids == units
            assert observation.scores == (None if None in scores else scores)
        subset = observations_for_run(open_study(db, "s", None), run, query_ids=["q2", "q1"])
        assert [o.returned_ids for o in subset] == [stored.get(q, ([], []))[0] for q in ("q2", "q1")]
    shuffled = {o.query_id: o for o in observations_for_run(open_study(db, "s", None), "shuffled")}
    assert shuffled["q1"].returned_ids == ["A", "B"] and shuffled["q1"].scores == [1.0 / 3, 0.5]
    assert shuffled["q2"].returned_ids == ["A", "B", "C"] and shuffled["q2"].scores is None


def test_permitted_ids_come_from_the_runs_pinned_protocol(db):
    db.execute("INSERT INTO protocols (study_id, name, protocol_json, corpus_fingerprint, "
               "pinned_at, pinned_by) VALUES ('s', 'p1', '{}', 'sha256:f', '2026', 'lead')")
    db.conn.executemany(
        "INSERT INTO protocol_documents (study_id, protocol, doc_id, content_hash) "
        "VALUES ('s', 'p1', ?, 'h')", [("B",), ("A",)])
    add_run(db, study_id="s", name="lex", source="lexical", k=2,
            results=[("q1", 1, "A", 2.0), ("q1", 2, "Z", 1.0)],
            protocol={"pinned_protocol": "p1"})
    observations = {o.query_id: o for o in observations_for_run(open_study(db, "s", None), "lex")}
    assert observations["q1"].permitted_ids == ["A", "B"]
    report = evaluate_run(open_study(db, "s", None), "lex")
    assert report.queries[0].reasons == ["permission_violation"]
    assert observations_for_run(open_study(db, "s", None), "bm25")[0].permitted_ids is None


def test_a_runs_pinned_set_is_one_statement(db):
    """A run's pinned set (and its units' codes) is read in one statement each: the protocol
    joined to its documents. A protocol pinning no document is an empty set, a name no
    protocol of the study holds is no pinned set."""
    from evalcore.store.runs import get_run, permitted_ids_for_run
    from evalcore.store.unit_codes import permitted_unit_codes

    db.execute("INSERT INTO protocols (study_id, name, protocol_json, corpus_fingerprint, "
               "pinned_at, pinned_by) VALUES ('s', 'p1', '{}', 'sha256:f', '2026', 'lead')")
    db.execute("INSERT INTO protocols (study_id, name, protocol_json, corpus_fingerprint, "
               "pinned_at, pinned_by) VALUES ('s', 'empty', '{}', 'sha256:f', '2026', 'lead')")
    db.conn.executemany(
        "INSERT INTO protocol_documents (study_id, protocol, doc_id, content_hash) "
        "VALUES ('s', 'p1', ?, 'h')", [("B",), ("A",), ("never-returned",)])
    for name, pinned in (("lex", "p1"), ("none", "empty"), ("gone", "no-such")):
        add_run(db, study_id="s", name=name, source="lexical", k=2,
                results=[("q1", 1, "A", 2.0), ("q1", 2, "B", 1.0)],
                protocol={"pinned_protocol": pinned})
    study = open_study(db, "s", None)
    seen: list[str] = []
    db.conn.set_trace_callback(seen.append)
    try:
        for name, expected in (("lex", ["A", "B", "never-returned"]), ("none", []),
                               ("gone", None)):
            run = get_run(study, name)
            seen.clear()
            assert permitted_ids_for_run(db, run) == expected, name
            assert len(seen) == 1, seen
        codes = {u: c for u, c in db.execute(
            "SELECT unit_id, unit_code FROM study_units WHERE study_id = 's'").fetchall()}
        seen.clear()
        assert list(permitted_unit_codes(study, "p1")) == sorted([codes["A"], codes["B"]])
        assert list(permitted_unit_codes(study, "empty")) == []
        assert permitted_unit_codes(study, "no-such") is None
        assert len(seen) == 3, seen
    finally:
        db.conn.set_trace_callback(None)
