"""The Data page's measures setting: a lead saves the study's measures (audited); a bad name
is refused with the known measures and nothing is written."""

from evalcore.contract.measures import parse_measure
from evalcore.store.audit import audit_entries
from evalcore.store.study_handle import open_study
from evalcore.store.study_measures import DEFAULT_STUDY_MEASURES, study_measures

PAGE = "views/data.py"


def _save(at, text: str):
    field = next(t for t in at.text_input if t.label == "Measures (comma-separated)")
    field.set_value(text)
    next(b for b in at.button if b.label == "Save measures").click().run()
    assert not at.exception, at.exception
    return at


def test_a_lead_saves_the_measures_and_the_dashboard_shows_them(small_store, new_app) -> None:
    _, db = small_store
    at = new_app("lead", PAGE)
    caption = " ".join(c.value for c in at.caption)
    assert "P\\@k\\, R\\@k\\, nDCG\\@k\\, MRR\\@k" in caption
    _save(at, "nDCG@2, P(rel=2)@1")
    assert study_measures(open_study(db, "s1", None)) == [
        parse_measure("nDCG@2"),
        parse_measure("P(rel=2)@1"),
    ]
    entry = [e for e in audit_entries(open_study(db, "s1", None)) if e.action == "study.measures.set"][-1]
    assert entry.detail["new"] == ["nDCG@2", "P(rel=2)@1"]
    at.switch_page("views/dashboard.py").run()
    assert not at.exception
    shown = " ".join(m.value for m in at.markdown)
    assert "**nDCG\\@2**" in shown and "**Judged\\@1**" in shown


def test_a_bad_name_is_refused_with_the_known_measures(small_store, new_app) -> None:
    _, db = small_store
    at = _save(new_app("lead", PAGE), "P@10, nDGC@10")
    assert "The measures were not saved" in at.error[0].value
    text = " ".join(c.value for c in at.code)
    assert "no measure family 'nDGC'" in text and "known measures: P@k" in text
    assert study_measures(open_study(db, "s1", None)) == list(DEFAULT_STUDY_MEASURES)
