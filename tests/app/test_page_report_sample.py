"""The Reports page's sample choice (contract section 13): a lead publishing a report can
show a stored sample's estimates at a chosen confidence level, apart from the decided
verdicts, as ``evalcore report --sample`` does; the choice is in the address."""

from pathlib import Path

import pytest
from app_harness import ENTRY
from store_fixtures import built_demo
from streamlit.testing.v1 import AppTest

from evalcore.demo.study import DEMO_STUDY_ID
from evalcore.estimation.stored import draw_stored_sample
from evalcore.report.stored import load_report
from evalcore.store.connection import open_store
from evalcore.store.labels import record_label
from evalcore.store.references import freeze_reference
from evalcore.store.reports import list_reports
from evalcore.store.runs import list_runs
from evalcore.store.samples import sample_units
from evalcore.store.study_handle import open_study

REPORTS = "views/reports.py"
WORKING = "(working labels — not pinned)"


@pytest.fixture
def demo_store(built_store_target, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh copy of the demo store with sample s1 of the first two runs, 12 units labeled,
    and a frozen reference version."""
    path = built_store_target("demo", built_demo, "ledger.sqlite")
    db = open_store(path)
    baseline, candidate = [r.name for r in list_runs(open_study(db, DEMO_STUDY_ID, None))][:2]
    draw_stored_sample(db, study_id=DEMO_STUDY_ID, name="s1", candidate=candidate,
                       baseline=baseline, measures=["P@10", "nDCG@10"], size=30, seed=7,
                       actor=None)
    for i, unit in enumerate(sample_units(open_study(db, DEMO_STUDY_ID, None), "s1")[:12]):
        record_label(db, study_id=DEMO_STUDY_ID, query_id=unit.query_id, unit_id=unit.unit_id,
                     gain=i % 3, annotator="ann")
    freeze_reference(db, study_id=DEMO_STUDY_ID, name="frozen", actor="lead")
    db.conn.close()
    monkeypatch.setenv("RELEVANCE_LEDGER_DB", str(path))
    return path


def _open(params: dict[str, str]) -> AppTest:
    at = AppTest.from_file(ENTRY, default_timeout=60)
    at.query_params.update({"annotator": "lead", **params})
    at.run()
    at.switch_page(REPORTS).run()
    assert not at.exception, at.exception
    return at


def _generate(at: AppTest, name: str) -> None:
    at.selectbox(key="rl_report_reference").set_value(WORKING)
    at.text_input(key="rl_report_name").set_value(name)
    at.button(key="rl_report_generate").click().run()
    assert not at.exception, at.exception


def _estimates(db, name: str) -> list[str]:
    (stored,) = [s for s in list_reports(open_study(db, DEMO_STUDY_ID, None)) if s.name == name]
    report = load_report(open_study(db, DEMO_STUDY_ID, None), stored.report_id)
    return [m.estimate for line in report.bottom_lines for m in line.measures if m.estimate]


def test_the_address_chooses_the_sample_and_level_and_the_report_shows_the_estimate(
    demo_store: Path,
) -> None:
    at = _open({"sample": "s1", "level": "0.9"})
    assert at.selectbox(key="rl_report_sample").value == "s1"
    assert at.selectbox(key="rl_report_level").value == "0.9"
    _generate(at, "with estimate")
    db = open_store(demo_store)
    shown = _estimates(db, "with estimate")
    assert shown and all(e.startswith("estimated: ") and "90% CI" in e for e in shown)
    assert all("decided" not in e for e in shown)
    captions = " ".join(c.value.replace("\\", "") for c in at.caption)
    assert "estimated: " in captions and "unknown units sampled" in captions
    assert at.query_params["sample"] == "s1" and at.query_params["level"] == "0.9"


def test_no_sample_by_default_and_the_choice_is_written_into_the_address(
    demo_store: Path,
) -> None:
    at = _open({})
    assert at.selectbox(key="rl_report_sample").value == "(none)"
    assert at.selectbox(key="rl_report_level").disabled
    assert "sample" not in at.query_params
    _generate(at, "plain")
    db = open_store(demo_store)
    assert _estimates(db, "plain") == []
    at.selectbox(key="rl_report_sample").set_value("s1").run()
    assert at.query_params["sample"] == "s1" and "level" not in at.query_params  # 95%
    at.selectbox(key="rl_report_level").set_value("0.99").run()
    assert at.query_params["level"] == "0.99"
    _generate(at, "at 99")
    assert all("99% CI" in e for e in _estimates(db, "at 99")) and _estimates(db, "at 99")


def test_a_sample_with_a_frozen_reference_or_unknown_is_refused_clearly(demo_store: Path) -> None:
    at = _open({"sample": "nope"})
    assert any("sample 'nope'" in w.value.replace("\\", "") for w in at.warning)
    assert at.selectbox(key="rl_report_sample").value == "(none)"
    at.selectbox(key="rl_report_sample").set_value("s1").run()
    at.selectbox(key="rl_report_reference").set_value("frozen")
    at.text_input(key="rl_report_name").set_value("pinned")
    at.button(key="rl_report_generate").click().run()
    assert not at.exception, at.exception
    assert any("estimates from the working labels" in e.value.replace("\\", "")
               for e in at.error)
    db = open_store(demo_store)
    assert not [s for s in list_reports(open_study(db, DEMO_STUDY_ID, None))
                if s.name == "pinned"]
