"""Information needs in the app: shown beside the query (escaped, collapsible), edited by a
lead on the Data page (audited); documents, topics and Quepid ratings uploaded there."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from store_fixtures import table_snapshot  # noqa: E402

from evalcore.store.audit import audit_entries
from evalcore.store.information_needs import InformationNeed, information_need, set_information_need
from evalcore.store.resolution import resolved_gains
from evalcore.store.study_handle import open_study

HOSTILE = "**bold** <script>alert(1)</script> [link](http://evil.example)"


def _set_need(db) -> None:
    set_information_need(db, study_id="s1", query_id="q1", actor=None,
                         need=InformationNeed(description="Reset a forgotten password.",
                                              narrative=HOSTILE))


def _need_markdown(at) -> list[str]:
    return [m.value for m in at.markdown if "Narrative" in m.value or "Description" in m.value]


def test_annotate_page_shows_the_need_escaped_in_an_expander(small_store, new_app) -> None:
    _, db = small_store
    _set_need(db)
    at = new_app("ann", "views/annotate.py")
    assert any(e.label.startswith("Information need") for e in at.expander)
    shown = " ".join(_need_markdown(at))
    assert "Reset a forgotten password" in shown
    assert "<script>" not in shown and "\\<script\\>" in shown  # never HTML
    assert "\\*\\*bold\\*\\*" in shown  # never markdown


def test_inspector_shows_the_need(small_store, new_app) -> None:
    _, db = small_store
    _set_need(db)
    at = new_app("ann", "views/inspector.py")
    assert any(e.label.startswith("Information need") for e in at.expander)


def test_no_need_no_expander(small_store, new_app) -> None:
    at = new_app("ann", "views/annotate.py")
    assert not any(e.label.startswith("Information need") for e in at.expander)


def test_lead_edits_the_need_on_the_data_page_audited(small_store, new_app) -> None:
    _, db = small_store
    at = new_app("lead", "views/data.py")
    at.selectbox(key="rl_need_query").set_value("q2").run()
    areas = at.text_area
    areas[0].set_value("Guides about passwords.")
    areas[1].set_value("Any guide counts.")
    next(b for b in at.button if b.label == "Save information need").click().run()
    assert not at.exception, at.exception
    assert information_need(open_study(db, "s1", None), "q2") == InformationNeed(
        description="Guides about passwords.", narrative="Any guide counts."
    )
    entry = audit_entries(open_study(db, "s1", None))[0]
    assert entry.action == "query.need.set" and entry.detail["query_id"] == "q2"
    assert entry.detail["old"] == {"description": "", "narrative": ""}


def _upload(at, kind: str, name: str, content: bytes):
    at.selectbox(key="rl_import_kind").set_value(kind).run()
    at.get("file_uploader")[0].set_value((name, content, "text/plain"))
    next(b for b in at.button if b.label == "Import").click().run()
    assert not at.exception, at.exception
    return at


def test_upload_topics_documents_and_quepid(small_store, new_app) -> None:
    _, db = small_store
    at = new_app("lead", "views/data.py")
    topics = (b"<top>\n<num> Number: q1\n<title> reset password\n<desc> Description:\n"
              b"How to reset it.\n<narr> Narrative:\nSteps count.\n</top>\n")
    _upload(at, "queries", "topics.trec", topics)
    assert information_need(open_study(db, "s1", None), "q1").narrative == "Steps count."
    _upload(at, "documents", "more.trec", b"<DOC><DOCNO>d9</DOCNO><TEXT>New.</TEXT></DOC>\n")
    assert "documents\\: 1" in at.success[0].value
    _upload(at, "labels-quepid", "ratings.csv", b"query,docid,rating\nreset password,d9,3\n")
    assert resolved_gains(open_study(db, "s1", None))["q1"]["d9"] == 3


def test_bad_topics_upload_lists_errors_and_writes_nothing(small_store, new_app) -> None:
    _, db = small_store
    before = table_snapshot(db)
    at = new_app("lead", "views/data.py")
    _upload(at, "queries", "topics.trec", b"<top>\n<title> no number\n</top>\n<top>\n")
    text = " ".join(c.value for c in at.code)
    assert "topics.trec:1: num: the topic has no <num>" in text
    assert "topics.trec:4: top: a <top> without its </top>" in text
    assert table_snapshot(db) == before
