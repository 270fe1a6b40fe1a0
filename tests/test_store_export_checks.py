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
