"""The cheap up-front export checks say exactly what the exports themselves would refuse."""

import io

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from store_fixtures import new_store

from evalcore.store.export_checks import qrels_refusal, run_refusal, tool_labels_refusal
from evalcore.store.exports import ExportRefusedError, export_qrels, export_run
from evalcore.store.labels import record_label
from evalcore.store.runs import add_run
from evalcore.store.studies import QueryIn
from evalcore.store.study_setup import add_queries
from evalcore.store.tool_label_exports import export_tool_labels

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
    assert qrels_refusal(db, "s", None, viewer=None) == _export_says(
        lambda out: export_qrels(db, "s", out, viewer=None))
    assert run_refusal(db, "s", "r", viewer=None) == _export_says(
        lambda out: export_run(db, "s", "r", out, viewer=None))


def test_a_clean_study_is_not_suspected_and_quepid_duplicates_are(tmp_path) -> None:
    db = new_store(tmp_path)
    record_label(db, study_id="s", query_id="q1", unit_id="A", gain=1, annotator="a")
    assert qrels_refusal(db, "s", None, viewer=None) is None
    add_queries(db, "s", [QueryIn(query_id="q8", text="same"), QueryIn(query_id="q9", text="same")])
    record_label(db, study_id="s", query_id="q8", unit_id="A", gain=1, annotator="a")
    record_label(db, study_id="s", query_id="q9", unit_id="A", gain=1, annotator="a")
    said = tool_labels_refusal(db, "s", "quepid", None, viewer=None)
    assert said is not None and "same text" in said
    assert said == _export_says(lambda out: export_tool_labels(db, "s", out, "quepid", viewer=None))
    assert tool_labels_refusal(db, "s", "rre", None, viewer=None) is None


#: Unit ids a label may carry: clean ones, and ones a TREC export refuses.
label_ids = st.sampled_from(["A", "b-2", "d\u00e9j\u00e0", "x y", "tab\there", "nb\u00a0sp", "a\u3000b"])


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(batches=st.lists(st.lists(st.tuples(st.sampled_from(["q1", "q 2", "#q3", "q4"]), label_ids),
                                 max_size=3), min_size=1, max_size=4))
def test_label_ids_seen_label_by_label_is_the_whole_reading(tmp_path_factory, batches) -> None:
    """Brought up to date after each batch of labels, the answer is the one a whole reading
    gives, and the qrels check it feeds says what the export says."""
    from evalcore.store.export_checks import label_ids_seen_unchecked

    db = new_store(tmp_path_factory.mktemp("seen"))
    seen = label_ids_seen_unchecked(db, "s")
    assert not seen.suspect and seen.events == 0
    for batch in batches:
        for query_id, unit_id in batch:
            record_label(db, study_id="s", query_id=query_id, unit_id=unit_id, gain=1,
                         annotator="a")
        seen = label_ids_seen_unchecked(db, "s", seen)
        whole = label_ids_seen_unchecked(db, "s")
        assert seen == whole
        assert qrels_refusal(db, "s", None, viewer=None, suspect=seen.suspect) == _export_says(
            lambda out: export_qrels(db, "s", out, viewer=None))


def test_a_reused_event_id_is_not_skipped(tmp_path) -> None:
    """Event ids are reused after the last events are deleted (a discarded staged study):
    a label of the study under an id already read past is still read."""
    from evalcore.store.export_checks import label_ids_seen_unchecked
    from evalcore.store.studies import StudyIn
    from evalcore.store.study_setup import create_study

    db = new_store(tmp_path)
    create_study(db, StudyIn(study_id="other", corpus_id="c"))
    record_label(db, study_id="s", query_id="q1", unit_id="A", gain=1, annotator="a")
    for unit in ("B", "C"):
        record_label(db, study_id="other", query_id="q1", unit_id=unit, gain=1, annotator="a")
    seen = label_ids_seen_unchecked(db, "s")
    assert seen.through_event == 3 and not seen.suspect
    # what discarding a staged study does to its events (the trigger lets only that delete)
    db.execute("DROP TRIGGER label_events_append_only_d")
    db.execute("DELETE FROM label_events WHERE study_id = 'other'")
    for unit in ("has space", "D", "E"):  # ids 2 and 3 reused, 4 new
        record_label(db, study_id="s", query_id="q1", unit_id=unit, gain=1, annotator="a")
    assert db.execute("SELECT event_id FROM label_events WHERE unit_id = 'has space'"
                      ).fetchone()[0] == 2
    assert label_ids_seen_unchecked(db, "s", seen) == label_ids_seen_unchecked(db, "s")
    assert label_ids_seen_unchecked(db, "s", seen).suspect


def test_the_suspect_checks_find_exactly_what_the_exports_refuse(tmp_path) -> None:
    """A run's suspect check is exact (empty ids, whitespace, a leading '#'); the qrels one
    reads every event (an undone label with a space is still a suspect: the export, run
    then, says there is nothing to refuse)."""
    from evalcore.store.export_checks import qrels_suspect_unchecked, run_suspect_unchecked
    from evalcore.store.labels import undo_last_label

    db = new_store(tmp_path)
    clean = add_run(db, study_id="s", name="clean", source="imported", k=2,
                    results=[("q1", 1, "d\u00e9j\u00e0", 2.0), ("q1", 2, "B", 1.0)])
    assert not run_suspect_unchecked(db, clean)
    for query_id, unit_id in [("q1", "a\u2003b"), ("#q", "A"), ("q\n", "A")]:
        run_id = add_run(db, study_id="s", name=f"r{unit_id}{query_id}", source="imported", k=1,
                         results=[("q0", 1, "A", 2.0), (query_id, 1, unit_id, 1.0)])
        assert run_suspect_unchecked(db, run_id)
    record_label(db, study_id="s", query_id="q1", unit_id="x y", gain=1, annotator="a")
    undo_last_label(db, study_id="s", query_id="q1", annotator="a")
    assert qrels_suspect_unchecked(db, "s", None)
    assert qrels_refusal(db, "s", None, viewer=None) is None
