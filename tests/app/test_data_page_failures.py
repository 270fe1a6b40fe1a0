"""The Data page never shows a traceback: broken zips and unexportable ids get clear messages."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from broken_zips import BROKEN  # noqa: E402
from store_fixtures import table_snapshot  # noqa: E402

PAGE = "views/data.py"


@pytest.mark.parametrize("kind", sorted(BROKEN))
def test_each_broken_zip_kind_is_refused_with_a_clear_message(small_store, new_app,
                                                              kind: str) -> None:
    _, db = small_store
    before = table_snapshot(db)
    build, words = BROKEN[kind]
    at = new_app("ann", PAGE)
    at.selectbox(key="rl_import_kind").set_value("beir").run()
    at.get("file_uploader")[0].set_value(("dataset.zip", build(), "application/zip"))
    next(b for b in at.button if b.label == "Import").click().run()
    assert not at.exception, at.exception
    assert any("The import was refused" in e.value for e in at.error)
    report = at.code[0].value
    assert report.startswith("dataset.zip: ") and words in report
    assert table_snapshot(db) == before


def test_a_query_id_with_a_space_does_not_break_the_page(small_store, new_app) -> None:
    from evalcore.store.labels import record_label

    _, db = small_store
    record_label(db, study_id="s1", query_id="q 1", unit_id="d1", gain=3, annotator="ann")
    at = new_app("ann", PAGE)
    assert not at.exception, at.exception
    warnings = [w.value.replace("\\", "") for w in at.warning]  # markdown-escaped
    assert any("query id 'q 1' contains whitespace" in w for w in warnings), warnings
    labels = [b.proto.label for b in at.get("download_button")]
    assert "Download label events" in labels and "Download qrels" not in labels


def test_a_full_disk_during_an_upload_is_a_message(small_store, new_app, monkeypatch) -> None:
    import errno

    from broken_zips import beir_zip

    import evalcore.io.zip_extract as zip_extract

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(zip_extract._Extraction, "copy", full)
    at = new_app("ann", PAGE)
    at.selectbox(key="rl_import_kind").set_value("beir").run()
    at.get("file_uploader")[0].set_value(("dataset.zip", beir_zip(), "application/zip"))
    next(b for b in at.button if b.label == "Import").click().run()
    assert not at.exception, at.exception
    assert any("No space left on device" in e.value and "free disk space" in e.value
               for e in at.error)


def test_a_label_with_a_space_written_after_the_page_is_drawn_is_refused_at_once(
        small_store, new_app) -> None:
    """The "would the qrels export be refused" fact is kept across renders and sessions and
    brought up to date by the labels written since: a new label with a space is seen on the
    next render of this session and by a new one, a clean one changes nothing."""
    from evalcore.store.labels import record_label

    _, db = small_store
    record_label(db, study_id="s1", query_id="q1", unit_id="d1", gain=3, annotator="ann")
    at = new_app("ann", PAGE)

    def offered(app) -> list[str]:
        assert not app.exception, app.exception
        return [b.proto.label for b in app.get("download_button")]

    assert "Download qrels" in offered(at)
    record_label(db, study_id="s1", query_id="q1", unit_id="d2", gain=1, annotator="bob")
    assert "Download qrels" in offered(at.run())
    record_label(db, study_id="s1", query_id="q1", unit_id="d 9", gain=1, annotator="bob")
    for app in (at.run(), new_app("ann", PAGE)):
        assert "Download qrels" not in offered(app)
        warnings = [w.value.replace("\\", "") for w in app.warning]
        assert any("unit id 'd 9' contains whitespace" in w for w in warnings), warnings
