"""The cheap up-front export checks say exactly what the exports themselves would refuse."""

import io
import re
from pathlib import Path

import pytest
import sqlite_utils
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from store_fixtures import new_store, store_at_version

from evalcore.store.connection import open_store
from evalcore.store.exports import (
    ExportRefusedError,
    export_qrels,
    export_run,
    export_tool_labels,
    qrels_refusal,
    qrels_suspect,
    run_refusal,
    run_suspect,
    tool_labels_refusal,
)
from evalcore.store.labels import record_label
from evalcore.store.runs import add_run, write_run_results
from evalcore.store.schema import SCHEMA_VERSION, schema_version
from evalcore.store.studies import QueryIn
from evalcore.store.study_handle import open_study
from evalcore.store.study_setup import add_queries
from evalcore.store.transaction import write_transaction
from evalcore.store.trec_ids import (
    PER_QUERY,
    TREC_SPACE,
    ids_suspect,
    scan_run_suspect,
)

#: Ids with the characters that matter: spaces of several kinds (no-break, ideographic), '#'.
ids = st.text(alphabet="ab#1 \t\u00a0\u3000", min_size=1, max_size=4).filter(str.strip)


def _export_says(export) -> str | None:
    try:
        export(io.StringIO())
    except ExportRefusedError as error:
        return str(error)
    return None


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(query_id=ids, unit_id=ids)
def test_checks_agree_with_the_exports(tmp_path_factory, query_id: str, unit_id: str) -> None:
    db = new_store(tmp_path_factory.mktemp("checks"))
    record_label(db, study_id="s", query_id=query_id, unit_id=unit_id, gain=1, annotator="a")
    add_run(db, study_id="s", name="r", source="imported", k=1, results=[(query_id, 1, unit_id, 1.0)])
    assert qrels_refusal(open_study(db, "s", None), None) == _export_says(
        lambda out: export_qrels(open_study(db, "s", None), out)
    )
    assert run_refusal(open_study(db, "s", None), "r") == _export_says(
        lambda out: export_run(open_study(db, "s", None), "r", out)
    )


def test_a_clean_study_is_not_suspected_and_quepid_duplicates_are(tmp_path, store_target) -> None:
    db = new_store(store_target)
    record_label(db, study_id="s", query_id="q1", unit_id="A", gain=1, annotator="a")
    assert qrels_refusal(open_study(db, "s", None), None) is None
    add_queries(db, "s", [QueryIn(query_id="q8", text="same"), QueryIn(query_id="q9", text="same")])
    record_label(db, study_id="s", query_id="q8", unit_id="A", gain=1, annotator="a")
    record_label(db, study_id="s", query_id="q9", unit_id="A", gain=1, annotator="a")
    said = tool_labels_refusal(open_study(db, "s", None), "quepid", None)
    assert said is not None and "same text" in said
    assert said == _export_says(
        lambda out: export_tool_labels(open_study(db, "s", None), out, "quepid")
    )
    assert tool_labels_refusal(open_study(db, "s", None), "rre", None) is None


#: Ids a label or result may carry: clean ones, and ones a TREC export refuses.
label_ids = st.sampled_from(["A", "b-2", "d\u00e9j\u00e0", "x y", "tab\there", "nb\u00a0sp",
                             "a\u3000b", "", "l\u2028s", "#h"])
query_ids = st.sampled_from(["q1", "q 2", "#q3", "q4", "", "q\x1c"])


def _labels_scanned(db, study_id: str) -> bool:
    """The whole reading of the study's label events (what the recorded fact stands for)."""
    return ids_suspect(db.execute(PER_QUERY.format(source="label_events WHERE study_id = ?"),
                                  [study_id]))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(batches=st.lists(st.lists(st.tuples(query_ids, label_ids), min_size=1, max_size=3),
                        min_size=1, max_size=4))
def test_the_recorded_facts_are_the_whole_reading(tmp_path_factory, batches) -> None:
    """After each batch of labels (one event each) and each run (its results written in
    chunks, as a staged import writes them), the facts the store recorded are what a whole
    reading of the events and results says, and the checks they feed say what the exports
    say."""
    db = new_store(tmp_path_factory.mktemp("facts"))
    for n, batch in enumerate(batches):
        for query_id, unit_id in batch:
            if query_id and unit_id:
                record_label(db, study_id="s", query_id=query_id, unit_id=unit_id, gain=1,
                             annotator="a")
            else:  # an empty id, which only another writer (an older import) could store
                db.execute("INSERT INTO label_events (study_id, query_id, unit_id, gain, "
                           "annotator, created_at) VALUES ('s', ?, ?, 1, 'a', 'now')",
                           [query_id, unit_id])
        assert qrels_suspect(open_study(db, "s", None), None) == _labels_scanned(db, "s")
        assert qrels_refusal(open_study(db, "s", None), None) == _export_says(
            lambda out: export_qrels(open_study(db, "s", None), out)
        )
        run_id = add_run(db, study_id="s", name=f"r{n}", source="imported", k=1,
                         results=[("q0", 1, "A", 1.0)])
        for i, (query_id, unit_id) in enumerate(batch):  # one chunk per query
            with write_transaction(db):
                write_run_results(db, run_id, [(f"{query_id}{i}", 1, unit_id, 1.0)])
        assert run_suspect(open_study(db, "s", None), run_id) == scan_run_suspect(db, run_id)
        assert run_refusal(open_study(db, "s", None), f"r{n}") == _export_says(
            lambda out, n=n: export_run(open_study(db, "s", None), f"r{n}", out)
        )


def test_the_label_trigger_knows_every_space_trec_refuses() -> None:
    """The label trigger's condition finds Python's ``\\s`` (the exports' rule), code point
    by code point, in a query id and in a unit id."""
    from evalcore.store.schema import _trec_suspect_sql

    python = [n for n in range(1, 0x110000) if TREC_SPACE.match(chr(n))]
    db = sqlite_utils.Database(memory=True)
    for query_id, unit_id in (("'q' || char(n) || 'x'", "'A'"), ("'q'", "'d' || char(n) || 'é'")):
        sql = [r[0] for r in db.execute(
            "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 1114111) "
            f"SELECT n FROM c WHERE (n < 55296 OR n > 57343) AND "
            f"{_trec_suspect_sql(query_id, unit_id)}")]
        assert sql == python


def test_a_label_of_another_study_or_written_by_sql_is_recorded(tmp_path, store_target) -> None:
    """The fact is per study, and recorded whoever writes the event (a trigger)."""
    from evalcore.store.studies import StudyIn
    from evalcore.store.study_setup import create_study

    db = new_store(store_target)
    create_study(db, StudyIn(study_id="other", corpus_id="c"))
    record_label(db, study_id="other", query_id="q1", unit_id="has space", gain=1,
                 annotator="a")
    assert qrels_suspect(open_study(db, "other", None), None)
    assert not qrels_suspect(open_study(db, "s", None), None)
    db.execute("INSERT INTO label_events (study_id, query_id, unit_id, gain, annotator, "
               "created_at) VALUES ('s', '#q', 'A', 1, 'a', '2026-01-01T00:00:00Z')")
    assert qrels_suspect(open_study(db, "s", None), None)


@pytest.mark.sqlite_only
def test_a_v15_store_migrates_with_its_facts(tmp_path) -> None:
    """The v16 migration records the facts of the runs and labels stored before it: the
    same answers as reading every result and event."""
    path = tmp_path / "store.db"
    runs = {1: [("q1", "A"), ("q1", "B")], 2: [("q1", "A"), ("q2", "x\u00a0y")],
            3: [("#q", "A")], 4: [("q1", "")], 5: []}
    rows = [f"INSERT INTO runs (run_id, study_id, name, source, k, created_at) VALUES "
            f"({r}, 's', 'run{r}', 'imported', 2, '2026-01-01T00:00:00Z')" for r in runs]
    rows += [f"INSERT INTO results (run_id, query_id, rank, unit_id, score) VALUES "
             f"({r}, '{q}', {rank}, '{u}', 1.0)"
             for r, results in runs.items() for rank, (q, u) in enumerate(results, 1)]
    rows += ["INSERT INTO studies (study_id, name, corpus_id, created_at) "
             "VALUES ('t', 't', 'c', '2026-01-01T00:00:00Z')",
             "INSERT INTO studies (study_id, name, corpus_id, created_at) "
             "VALUES ('u', 'u', 'c', '2026-01-01T00:00:00Z')"]
    rows += ["INSERT INTO label_events (study_id, query_id, unit_id, gain, annotator, created_at)"
             f" VALUES ('{s}', 'q1', '{u}', 1, 'ann', '2026-01-01T00:00:00Z')"
             for s, u in (("s", "A"), ("s", "B"), ("t", "A"), ("t", "tab\there"))]
    store_at_version(path, 15, *rows)
    db = open_store(path)
    assert schema_version(db) == SCHEMA_VERSION >= 16
    assert {r: run_suspect(open_study(db, "s", None), r) for r in runs} == {
        1: False,
        2: True,
        3: True,
        4: True,
        5: False,
    }
    for r in runs:
        assert run_suspect(open_study(db, "s", None), r) == scan_run_suspect(db, r)
    assert [qrels_suspect(open_study(db, s, None), None) for s in ("s", "t", "u")] == [
        False,
        True,
        False,
    ]
    for s in ("s", "t", "u"):
        assert qrels_suspect(open_study(db, s, None), None) == _labels_scanned(db, s)
    # the trigger is there after the migration
    record_label(db, study_id="s", query_id="q1", unit_id="C D", gain=1, annotator="a")
    assert qrels_suspect(open_study(db, "s", None), None)


def test_an_archive_round_trip_keeps_the_facts(tmp_path, monkeypatch, store_target, new_store_target) -> None:
    """A study imported from its archive (staged, written in chunks by other writers than
    the app's) has the same facts, and a staged study's discard takes its facts along."""
    from evalcore.store.study_archive import export_study, import_study, read_archive

    db = new_store(store_target)
    add_run(db, study_id="s", name="clean", source="imported", k=1, results=[("q1", 1, "A", 1.0)])
    add_run(db, study_id="s", name="spaced", source="imported", k=1,
            results=[("q1", 1, "A", 1.0), ("q2", 1, "x\u00a0y", 1.0)])
    record_label(db, study_id="s", query_id="q 1", unit_id="A", gain=1, annotator="a")
    out = tmp_path / "s.zip"
    export_study(db, "s", out, actor="lead")
    target = open_store(new_store_target("other.db"))
    (tmp_path / "work").mkdir()
    import_study(target, read_archive(out, tmp_path / "work"), actor="lead")
    for store in (db, target):
        facts = dict(store.execute("SELECT name, trec_suspect FROM runs").fetchall())
        assert facts == {"clean": 0, "spaced": 1}
        assert qrels_suspect(open_study(store, "s", "lead"), None)
    # an import failing in its last step: the staged study is discarded, its fact with it
    import evalcore.store.study_archive as archive_module

    def explode(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(archive_module._Import, "_restore_members", explode)
    third = open_store(new_store_target("third.db"))
    (tmp_path / "work3").mkdir()
    with pytest.raises(OSError):
        import_study(third, read_archive(out, tmp_path / "work3"), actor="lead")
    assert third.execute("SELECT count(*) FROM label_id_suspects").fetchone()[0] == 0
    assert third.execute("SELECT count(*) FROM runs").fetchone()[0] == 0


def test_results_are_written_only_where_the_fact_is_recorded() -> None:
    """Every result row goes through ``write_run_results``, which records the run's fact."""
    root = Path(__file__).resolve().parents[2] / "evalcore"
    writes = re.compile(r'INTO results\b|write_rows\([^,]+,\s*"results"')
    writers = sorted(str(p.relative_to(root)) for p in root.rglob("*.py")
                     if writes.search(p.read_text(encoding="utf-8")))
    assert writers == ["store/runs.py"]


def test_a_run_stored_as_rankings_records_its_fact(tmp_path, store_target) -> None:
    """The lexical workflow hands the store rankings (``add_run(rankings=...)``), not rows:
    the same writer records the fact, equal to a scan of what was stored."""
    db = new_store(store_target)
    clean = add_run(db, study_id="s", name="clean", source="lexical", k=2,
                    rankings={"q1": (("A", 2.0), ("B", 1.0)), "q2": ()})
    spaced = add_run(db, study_id="s", name="spaced", source="lexical", k=2,
                     rankings={"q1": (("A", 2.0),), "q2": (("a\u00a0b", 1.0),)})
    hashed = add_run(db, study_id="s", name="hashed", source="lexical", k=2,
                     rankings={"#q": (("A", 2.0),)})
    for run_id, suspect in [(clean, False), (spaced, True), (hashed, True)]:
        assert run_suspect(open_study(db, "s", None), run_id) is suspect
        assert scan_run_suspect(db, run_id) is suspect


def test_the_suspect_checks_find_exactly_what_the_exports_refuse(tmp_path, store_target) -> None:
    """A run's suspect check is exact (empty ids, whitespace, a leading '#'); the qrels one
    reads every event (an undone label with a space is still a suspect: the export, run
    then, says there is nothing to refuse)."""
    from evalcore.store.labels import undo_last_label

    db = new_store(store_target)
    clean = add_run(db, study_id="s", name="clean", source="imported", k=2,
                    results=[("q1", 1, "d\u00e9j\u00e0", 2.0), ("q1", 2, "B", 1.0)])
    assert not run_suspect(open_study(db, "s", None), clean)
    for query_id, unit_id in [("q1", "a\u2003b"), ("#q", "A"), ("q\n", "A")]:
        run_id = add_run(db, study_id="s", name=f"r{unit_id}{query_id}", source="imported", k=1,
                         results=[("q0", 1, "A", 2.0), (query_id, 1, unit_id, 1.0)])
        assert run_suspect(open_study(db, "s", None), run_id)
    record_label(db, study_id="s", query_id="q1", unit_id="x y", gain=1, annotator="a")
    undo_last_label(db, study_id="s", query_id="q1", annotator="a")
    assert qrels_suspect(open_study(db, "s", None), None)
    assert qrels_refusal(open_study(db, "s", None), None) is None
