"""Why a completeness claim was withdrawn, on the Annotate page and the Inspector.

A relevant label on a unit the complete relevant set did not hold withdraws the claim;
annotators and reviewers see who claimed it, who (which label) withdrew it and when, as
plain text: a unit id full of markup characters stays text.
"""

from app.components.safe_text import escape_markdown
from evalcore.store.completeness import mark_complete
from evalcore.store.labels import record_label

HOSTILE = "d<b>*x*</b>"


def _withdraw(db) -> None:
    for unit in ("d1", "d2", "d3", "d4"):
        record_label(db, study_id="s1", query_id="q1", unit_id=unit, gain=0, annotator="ann")
    mark_complete(db, study_id="s1", query_id="q1", actor="lead")
    record_label(db, study_id="s1", query_id="q1", unit_id=HOSTILE, gain=3, annotator="bob")


def test_the_annotate_page_says_who_withdrew_the_claim(small_store, new_app) -> None:
    _, db = small_store
    _withdraw(db)
    at = new_app("ann", "views/annotate.py")
    said = [w.value for w in at.warning if "was withdrawn" in w.value]
    assert len(said) == 1, [w.value for w in at.warning]
    assert escape_markdown(f"new relevant label on {HOSTILE} by bob") in said[0]
    assert escape_markdown("withdrawn by bob") in said[0]
    assert escape_markdown("(lead, ") in said[0]
    assert "<b>" not in said[0]
    assert at.button(key="mark_complete") is not None  # it can be marked complete again


def test_the_inspector_says_who_withdrew_the_claim(small_store, new_app) -> None:
    _, db = small_store
    _withdraw(db)
    at = new_app(page="views/inspector.py")
    captions = [c.value for c in at.caption if "was withdrawn" in c.value]
    assert len(captions) == 1, [c.value for c in at.caption]
    assert escape_markdown(f"new relevant label on {HOSTILE} by bob") in captions[0]
    assert "<b>" not in captions[0]
    # the query stays bounded: recall is a range, not a bare "unavailable"
    chips = " ".join(m.value for m in at.markdown if "badge" in m.value)
    assert "R\\@3 unavailable · " in chips and " to " in chips
