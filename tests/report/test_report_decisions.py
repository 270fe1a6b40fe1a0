"""Reports comparing runs: the verdict per measure first, then the significance with its
caution; the trec_eval-compatible numbers in their own labeled section (issue 14)."""

import json
import re
from html import escape

import pytest
from report_builders import DEMO_RUNS, demo_store

from evalcore.analysis.pair_comparison import COMPAT_LABEL, compare_pair
from evalcore.report.decision_text import render_pair
from evalcore.report.from_store import report_from_store
from evalcore.report.html import render_html
from evalcore.report.model import Report, render_json
from evalcore.report.stored import load_report, save_report
from evalcore.store.study_handle import open_study

RUNS = DEMO_RUNS


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    _, db = demo_store(tmp_path_factory)
    report = report_from_store(open_study(db, "demo", "lead"), runs=RUNS, created_by="lead")
    return db, report


def _section(html: str, heading: str) -> str:
    start = html.index(f"<h2>{heading}")
    end = html.find("<h2>", start + 4)
    return html[start:end]


def test_report_holds_the_decisions_of_each_compared_pair(demo) -> None:
    db, report = demo
    assert report.comparison is not None
    (pc,) = report.decisions
    # the comparison's own order: each run against the baseline (the first run)
    assert (pc.run_a, pc.run_b) == ("bm25-title-boost", "bm25-plain")
    assert [m.measure for m in pc.measures] == ["P@10", "R@10", "nDCG@10", "RR@10"]
    direct = compare_pair(open_study(db, "demo", None), pc.run_a, pc.run_b, ["P@10"], queue_limit=5)
    assert pc.measures[0].decision == direct.measures[0].decision
    assert pc.measures[0].decision.verdict == "undecided" and not pc.measures[0].causes
    # R@10 on the demo's open populations (section 12): bounded, undecided, nothing to lift
    assert pc.measures[1].decision.verdict == "undecided" and not pc.measures[1].causes
    assert pc.compat[0] == direct.compat[0]


def test_html_shows_the_bottom_line_first_then_the_details(demo) -> None:
    _, report = demo
    html = render_html(report)
    body = html[html.index("<body>"):]
    line = html.index('<p class="bottomline">')
    # nothing but the title before the bottom line
    assert body.index("<h2>") == body.index("<h2>Bottom line</h2>")
    assert line < html.index("<h2>Runs</h2>") < html.index("<h2>Measures</h2>") < html.index(
        "<h2>Decided comparisons</h2>") < html.index("<h2>Glossary</h2>")
    sentence = report.bottom_lines[0].sentence
    assert sentence.startswith("bm25-title-boost vs bm25-plain (baseline): ")
    assert f"<strong>{escape(sentence)}</strong>" in html
    section = _section(html, "Decided comparisons")
    assert "<h3>bm25-title-boost vs bm25-plain (baseline)</h3>" in section
    assert section.index("<strong>open</strong>") < section.index("5 of 25 queries (20 left out")
    # section 12: R@10 and nDCG@10 are bounded on the open populations, not blocked
    assert "cannot be decided yet" not in _section(html, "Bottom line")
    # the caution once, the averages in one table, plain words for reasons
    assert html.count("can be biased") == 1
    assert "<h2>Results</h2>" not in html and "<h2>Aggregates per run" not in html
    assert "<h2>Paired comparisons</h2>" not in html
    assert "20 with unlabeled results in the top k in both runs" in section
    visible = re.sub(r"<script.*?</script>", "", html, flags=re.S)
    glossary = _section(html, "Glossary")
    assert "unlabeled_returned" not in visible.replace(glossary, "")
    for word in ("decided", "open", "cannot be decided yet", "unavailable"):
        assert f"<dt>{word}</dt>" in glossary
    assert "(A)" not in visible and "A − B" not in visible


def test_html_compat_numbers_only_in_their_own_section(demo) -> None:
    _, report = demo
    html = render_html(report)
    compat = _section(html, COMPAT_LABEL.capitalize())
    assert "Not evidence" in compat and 'class="compat"' in compat
    values = {f"{v:.4f}" for row in report.decisions[0].compat
              for v in (row.value_a, row.value_b) if v is not None}
    assert values and all(v in compat for v in values)
    evidence = (_section(html, "Bottom line") + _section(html, "Decided comparisons")
                + _section(html, "Measures"))
    # 0 and 1 are also bounds of evidence-backed intervals; the other compat values are not
    distinctive = values - {"0.0000", "1.0000"}
    assert distinctive
    for value in distinctive:
        assert not re.search(rf"<td[^>]*>{re.escape(value)}", evidence), value
    assert html.count('class="compat"') == 1


def test_json_has_the_decisions_with_compat_apart_and_round_trips(demo) -> None:
    db, report = demo
    data = json.loads(render_json(report))
    (pc,) = data["decisions"]
    first, recall = pc["measures"][0], pc["measures"][1]
    assert list(first) == ["decision", "causes", "queue", "paired"]
    assert first["decision"]["verdict"] == "undecided"
    assert recall["decision"]["verdict"] == "undecided"
    assert recall["decision"]["lower"] <= 0 <= recall["decision"]["upper"]
    assert "biased" in first["paired"]["selection_note"]
    assert pc["compat_label"] == COMPAT_LABEL
    assert {"measure", "value_a", "value_b", "difference"} <= set(pc["compat"][0])
    assert not any("value_a" in m["decision"] for m in pc["measures"])
    assert Report.model_validate_json(render_json(report)) == report.for_export()
    stored = save_report(db, report)
    assert load_report(open_study(db, "demo", "lead"), stored.report_id).decisions == report.decisions


def test_text_puts_the_bottom_line_first_and_compat_last(demo) -> None:
    _, report = demo
    text = render_pair(report.decisions[0])
    assert text.startswith(report.bottom_lines[0].sentence + "\n")
    assert text.startswith("bm25-title-boost vs bm25-plain (baseline): ")
    for name in ("P@10", "RR@10", "R@10", "nDCG@10"):
        assert f"{name}: open — mean candidate − baseline: " in text
    assert text.index("RR@10: open") < text.index(COMPAT_LABEL)
    assert text.count("caution: ") == 1 and "can be biased" in text


def test_text_names_what_lifts_an_undecidable_verdict(tmp_path, store_target) -> None:
    from store_fixtures import new_store

    from evalcore.store.labels import record_label
    from evalcore.store.runs import add_run

    db = new_store(store_target)
    add_run(db, study_id="s", name="A", source="imported", k=2,
            results=[("q1", 1, "a", 2.0), ("q2", 1, "d", 1.0)])
    add_run(db, study_id="s", name="B", source="imported", k=2,
            results=[("q1", 1, "b", 2.0), ("q2", 1, "d", 1.0)])
    record_label(db, study_id="s", query_id="q2", unit_id="d", gain=1, annotator="ann")
    text = render_pair(compare_pair(open_study(db, "s", None), "A", "B", ["R@2"]))
    assert text.startswith("A vs B (baseline): R@2 cannot be decided yet — 1 query has no "
                           "label at all\n")
    block = text[text.index("R@2: cannot be decided yet"):]
    assert block.index("to lift it: 1 query has no label at all") < block.index("paired tests on")
