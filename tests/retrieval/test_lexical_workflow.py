"""Executing pinned protocols: reproducible runs, refusals, cutoff, ties, time budgets."""

import json
import random
from datetime import UTC, datetime

import pytest
from lexical_builders import AFTER, BEFORE, docs, lexical_store, pinned, protocol
from store_fixtures import table_snapshot

from evalcore.retrieval import workflow
from evalcore.retrieval.errors import RetrievalRefused
from evalcore.retrieval.pin import get_pinned_protocol, pin_protocol
from evalcore.retrieval.snapshot import SnapshotIndex
from evalcore.retrieval.workflow import execute_protocol
from evalcore.store.audit import audit_entries
from evalcore.store.connection import open_store
from evalcore.store.corpus import DocumentIn, add_documents
from evalcore.store.observations import observations_for_run
from evalcore.store.refusals import list_refusals
from evalcore.store.runs import get_run, run_results
from evalcore.store.studies import QueryIn, StudyIn
from evalcore.store.study_handle import open_study
from evalcore.store.study_setup import add_queries, create_study
from evalcore.store.transaction import write_transaction


def run(db, name, protocol="p1", **kwargs):
    return execute_protocol(
        db, study_id="s", protocol_name=protocol, run_name=name, actor="tester", **kwargs
    )


def ranked(db, name):
    return run_results(open_study(db, "s", None), get_run(open_study(db, "s", None), name).run_id)


def test_same_protocol_same_corpus_gives_an_identical_run(tmp_path, store_target, new_store_target):
    db = lexical_store(store_target)
    pin = pinned(db)
    first = run(db, "r1")
    second = run(db, "r2")
    assert ranked(db, "r1") == ranked(db, "r2")
    assert ranked(db, "r1")["q1"][0][0] in {"a1", "a3"}
    assert first.protocol == second.protocol
    assert first.corpus_fingerprint == pin.corpus_fingerprint
    assert first.source == "lexical" and first.k == 10 and first.scan_complete
    assert first.protocol["pinned_protocol"] == "p1"
    assert first.protocol["method"] == "lexical"
    # A second store built the same way ranks the same way, to the last bit of every score.
    other = lexical_store(new_store_target("other.db"))
    pinned(other)
    run(other, "r1")
    assert ranked(other, "r1") == ranked(db, "r1")


def test_scores_are_positive_best_first_and_only_pinned_documents_return(tmp_path, store_target):
    db = lexical_store(store_target)
    pinned(db)
    run(db, "r1")
    results = ranked(db, "r1")
    allowed = {"a1", "a2", "a3", "a4"}
    for query_id, items in results.items():
        scores = [s for _, s in items]
        assert scores == sorted(scores, reverse=True), query_id
        assert all(s > 0 for s in scores)
        assert {d for d, _ in items} <= allowed
    assert "q4" not in results  # "+++" holds no term: an empty ranking, not an error


def test_scores_do_not_depend_on_documents_the_protocol_cannot_see(tmp_path, store_target):
    db = lexical_store(store_target)
    pinned(db)
    run(db, "r1")
    add_documents(db, "c", [DocumentIn(doc_id=f"g{i}", title="solar", text="solar heat wind",
                                       owner_org="globex", created_at=BEFORE) for i in range(30)])
    add_documents(db, "c", [DocumentIn(doc_id="late2", title="wind", text="wind power",
                                       owner_org="acme", created_at=AFTER)])
    add_documents(db, "elsewhere", [DocumentIn(doc_id="a1", title="solar", text="solar",
                                               owner_org="acme", created_at=BEFORE)])
    run(db, "r2")
    assert ranked(db, "r2") == ranked(db, "r1")


def test_a_document_created_after_the_cutoff_is_never_returned(tmp_path, store_target):
    db = lexical_store(store_target)
    pinned(db)
    run(db, "r1")
    returned = {d for items in ranked(db, "r1").values() for d, _ in items}
    assert "late" not in returned
    # ...although it is the best match when the cutoff lets it in.
    pinned(db, "later", cutoff="2026-12-31T00:00:00Z")
    run(db, "r-later", protocol="later")
    assert ranked(db, "r-later")["q1"][0][0] == "late"


def assert_refused_and_nothing_stored(db, name, *fragments):
    before = table_snapshot(db)
    with pytest.raises(RetrievalRefused) as info:
        run(db, name)
    message = str(info.value)
    for fragment in fragments:
        assert fragment in message, message
    after = table_snapshot(db)
    assert after["runs"] == before["runs"] and after["results"] == before["results"]
    refusals = list_refusals(open_study(db, "s", None))
    assert refusals[-1].run_name == name and refusals[-1].message == message
    assert len(after["retrieval_refusals"]) == len(before["retrieval_refusals"]) + 1
    assert audit_entries(open_study(db, "s", None))[0].action == "lexical.refused"
    return refusals[-1]


def test_a_changed_document_is_refused_and_named(tmp_path, store_target):
    db = lexical_store(store_target)
    pinned(db)
    add_documents(db, "c", docs(a3=("Panel maintenance", "cleaning is pointless", "acme")))
    refusal = assert_refused_and_nothing_stored(db, "r1", "content changed: 1: a3")
    assert refusal.detail["kinds"]["content_changed"]["first_ids"] == ["a3"]
    assert refusal.protocol == "p1"


def test_a_document_moved_to_another_organisation_is_refused(tmp_path, store_target):
    db = lexical_store(store_target)
    pinned(db)
    add_documents(db, "c", docs(a2=("Wind turbines", "offshore wind turbines produce power",
                                     "globex")))
    assert_refused_and_nothing_stored(
        db, "r1", "moved to another organisation: 1: a2 (acme -> globex)"
    )


def test_an_ownership_change_inside_the_permitted_organisations_is_refused(tmp_path, store_target):
    db = lexical_store(store_target)
    pinned(db, organisations=["acme", "globex"])
    add_documents(db, "c", docs(b1=("Solar subsidies", "solar panels subsidies for households",
                                     "acme")))
    assert_refused_and_nothing_stored(db, "r1", "b1 (globex -> acme)")


def test_removed_added_and_back_dated_documents_are_refused(tmp_path, store_target):
    db = lexical_store(store_target)
    pinned(db)
    db.execute("DELETE FROM documents WHERE doc_id = 'a4'")
    add_documents(db, "c", [DocumentIn(doc_id="a9", title="new", text="new solar",
                                       owner_org="acme", created_at=BEFORE)])
    db.execute("UPDATE documents SET created_at = '2026-07-02T00:00:00Z' WHERE doc_id = 'a1'")
    assert_refused_and_nothing_stored(
        db, "r1", "removed from the corpus: 1: a4", "new visible documents not in the pin: 1: a9",
        "now created after the cutoff: 1: a1",
    )


def test_refusal_names_the_first_ids_and_counts_the_rest(tmp_path, store_target):
    db = lexical_store(store_target)
    pinned(db)
    add_documents(db, "c", [DocumentIn(doc_id=f"n{i:02d}", title="x", text="y", owner_org="acme",
                                       created_at=BEFORE) for i in range(25)])
    assert_refused_and_nothing_stored(
        db, "r1", "new visible documents not in the pin: 25: n00, n01", "n09 and 15 more"
    )


def test_ties_are_broken_by_doc_id_even_at_the_top_k_cut(tmp_path, store_target):
    db = lexical_store(store_target)
    twins = [f"t{i}" for i in range(8)]
    shuffled = twins[:]
    random.Random(5).shuffle(shuffled)
    add_documents(db, "c", [DocumentIn(doc_id=d, title="twin", text="identical twin text",
                                       owner_org="tie", created_at=BEFORE) for d in shuffled])
    add_queries(db, "s", [QueryIn(query_id="qt", text="twin")])
    pinned(db, "ties", organisations=["tie"], top_k=3)
    run(db, "r-ties", protocol="ties")
    items = ranked(db, "r-ties")["qt"]
    # The product's one tie rule (trec_eval's): equal scores by doc id descending.
    assert [d for d, _ in items] == ["t7", "t6", "t5"]
    assert len({s for _, s in items}) == 1
    # A protocol pinned under the old rule re-executes as pinned: ascending.
    pinned(db, "ties-old", organisations=["tie"], top_k=3, tie_rule="doc_id_ascending")
    run(db, "r-ties-old", protocol="ties-old")
    assert [d for d, _ in ranked(db, "r-ties-old")["qt"]] == ["t0", "t1", "t2"]


def test_time_budget_stores_a_partial_scan(tmp_path, monkeypatch, store_target):
    db = lexical_store(store_target)
    pinned(db)
    ticks = iter(range(100))
    monkeypatch.setattr(workflow, "monotonic", lambda: float(next(ticks)))
    # t=0 start; checks before q1 (t=1), q2 (t=2), q3 (t=3): budget 2.5 stops before q3.
    info = run(db, "r-partial", time_budget_s=2.5)
    assert info.scan_complete is False
    assert info.protocol["execution"]["unexecuted_query_ids"] == ["q3", "q4"]
    assert info.protocol["execution"]["queries_executed"] == 2
    assert set(ranked(db, "r-partial")) == {"q1", "q2"}
    observations = observations_for_run(open_study(db, "s", None), "r-partial")
    assert observations and all(o.scan_complete is False for o in observations)


def test_permitted_ids_of_every_observation_are_the_pinned_set(tmp_path, store_target):
    db = lexical_store(store_target)
    pinned(db)
    run(db, "r1")
    observations = observations_for_run(open_study(db, "s", None), "r1")
    assert observations
    for obs in observations:
        assert sorted(obs.permitted_ids) == ["a1", "a2", "a3", "a4"]
        assert obs.k == 10


def test_bad_requests_store_nothing(tmp_path, store_target):
    db = lexical_store(store_target)
    pinned(db)
    run(db, "r1")
    before = table_snapshot(db)
    with pytest.raises(ValueError, match="already exists"):
        run(db, "r1")
    with pytest.raises(ValueError, match="positive"):
        run(db, "r2", time_budget_s=0)
    with pytest.raises(LookupError, match="no protocol 'nope'"):
        run(db, "r2", protocol="nope")
    with pytest.raises(ValueError, match="empty"):
        run(db, "")
    with pytest.raises(RuntimeError, match="own transactions"), write_transaction(db):
        run(db, "r2")
    assert table_snapshot(db) == before


def test_a_study_without_queries_is_rejected(tmp_path, store_target):
    db = lexical_store(store_target)
    create_study(db, StudyIn(study_id="empty", corpus_id="c"))
    pin_protocol(db, study_id="empty", name="p", protocol=protocol(), actor="t")
    with pytest.raises(ValueError, match="has no query"):
        execute_protocol(db, study_id="empty", protocol_name="p", run_name="r", actor="t")


def test_the_read_snapshot_does_not_block_writers(tmp_path, store_target):
    db = lexical_store(store_target)
    pin = pinned(db)
    writer = open_store(store_target)
    db.conn.execute("BEGIN")
    try:
        with SnapshotIndex(
            open_study(db, "s", None), get_pinned_protocol(open_study(db, "s", None), pin.name)
        ) as index:
            add_documents(writer, "c", [DocumentIn(doc_id="w1", title="solar", text="solar",
                                                   owner_org="acme", created_at=BEFORE)])
            # The snapshot still sees the pinned content only.
            assert "w1" not in {d for d, _ in index.search("solar", 10)}
            assert index.document_count == 4
    finally:
        db.conn.execute("COMMIT")


def test_the_run_protocol_records_how_it_was_executed(tmp_path, store_target):
    db = lexical_store(store_target)
    pinned(db, weights={"title": 2.0, "text": 1.0})
    info = run(db, "r1")
    stored = json.loads(
        db.execute("SELECT protocol_json FROM runs WHERE name = 'r1'").fetchone()[0]
    )
    assert stored == info.protocol
    assert stored["weights"] == {"title": 2.0, "text": 1.0}
    assert stored["cutoff"] == "2026-06-30T00:00:00Z"
    assert stored["execution"]["queries_total"] == 4
    assert stored["pinned_document_count"] == 4
    assert datetime.fromisoformat(stored["cutoff"].replace("Z", "+00:00")) == datetime(
        2026, 6, 30, tzinfo=UTC
    )
