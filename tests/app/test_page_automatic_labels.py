"""Automatic judgments on the pages (AppTest): the Agreement page's section per source, and
the marker beside human labels in the adjudication view and the Inspector."""

from evalcore.analysis.automatic_agreement import automatic_agreement
from evalcore.io.text_lines import SourceText
from evalcore.store.imports.automatic_labels import import_automatic_labels
from evalcore.store.labels import record_label
from evalcore.store.study_handle import open_study

AGREEMENT = "views/agreement.py"
INSPECTOR = "views/inspector.py"
JUDGE = "q1 0 d1 2\nq1 0 d2 1\nq1 0 d3 4\nq1 0 d4 0\n"


def _labels(db) -> None:
    alice = {"d1": 2, "d2": 0, "d3": 1, "d4": 3}
    bob = {"d1": 2, "d2": 3, "d3": 1, "d4": 3}
    for unit in alice:
        record_label(
            db, study_id="s1", query_id="q1", unit_id=unit, gain=alice[unit], annotator="alice"
        )
        record_label(
            db, study_id="s1", query_id="q1", unit_id=unit, gain=bob[unit], annotator="bob"
        )
    import_automatic_labels(
        db,
        SourceText("judge.qrels", JUDGE),
        study_id="s1",
        name="llm-judge",
        allow_unknown_ids=True,
    )


def test_agreement_page_shows_each_source_against_the_humans(small_store, new_app) -> None:
    _, db = small_store
    _labels(db)
    at = new_app(page=AGREEMENT)
    assert not at.exception, at.exception
    assert any(h.value == "Automatic judgments (not evidence)" for h in at.subheader)
    (expected,) = automatic_agreement(open_study(db, "s1", None))
    table = next(d.value for d in at.dataframe if "units judged" in d.value.columns)
    assert list(table["source"]) == ["llm-judge"]
    assert list(table["shared with humans"]) == [3]  # d2 is in conflict: no gain counts
    assert table["weighted kappa (quadratic)"][0] == f"{expected.kappa.value:.3f}"
    grades = next(d.value for d in at.dataframe if "automatic (all judged)" in d.value.columns)
    assert list(grades["human"]) == expected.human_counts
    assert list(grades["automatic"]) == expected.automatic_counts
    assert list(grades["automatic (all judged)"]) == [1, 1, 1, 0, 1]
    assert len(at.get("plotly_chart")) == 2  # the annotators' confusion and the source's
    # the conflict on d2 shows the automatic label marked as such, beside the humans
    said = " ".join(m.value for m in at.markdown).replace("\\", "")
    assert "automatic (llm-judge) said 1" in said and "a helper, not a judgement" in said


def test_without_automatic_labels_the_section_is_absent(small_store, new_app) -> None:
    _, db = small_store
    record_label(db, study_id="s1", query_id="q1", unit_id="d1", gain=2, annotator="alice")
    at = new_app(page=AGREEMENT)
    assert not at.exception, at.exception
    assert not any("Automatic" in h.value for h in at.subheader)


def test_inspector_marks_automatic_labels_beside_the_human_ones(small_store, new_app) -> None:
    _, db = small_store
    _labels(db)
    at = new_app(page=INSPECTOR)
    assert not at.exception, at.exception
    (frame,) = [d.value for d in at.dataframe]
    assert list(frame["unit"]) == ["d1", "d2", "d3"]
    assert list(frame["automatic"]) == ["llm-judge: 2", "llm-judge: 1", "llm-judge: 4"]
    # the label that counts is the humans' alone: d2 stays in conflict, d3 stays 1
    assert list(frame["label"]) == ["2", "—", "1"]


def test_inspector_without_automatic_labels_has_no_such_column(small_store, new_app) -> None:
    at = new_app(page=INSPECTOR)
    assert not at.exception, at.exception
    assert "automatic" not in at.dataframe[0].value.columns
