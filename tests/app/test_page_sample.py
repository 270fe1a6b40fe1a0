"""A stored sample in the app (contract section 13): the Annotate page's sample queue
shows the sample's units in order (no choosing; skip and can't judge recorded as the
sample's non-responses), and the Compare page's "Estimate instead" shows the estimate
rows apart from the decided verdicts."""

from pathlib import Path

import pytest
from app_harness import ENTRY, grade_button, item_caption, keyed
from store_fixtures import built_demo
from streamlit.testing.v1 import AppTest

from evalcore.demo.study import DEMO_STUDY_ID
from evalcore.estimation.stored import draw_stored_sample
from evalcore.store.connection import open_store
from evalcore.store.resolution import resolve_unit_in_store
from evalcore.store.runs import list_runs
from evalcore.store.samples import nonresponses, sample_units
from evalcore.store.study_handle import open_study

ANNOTATE = "views/annotate.py"
COMPARE = "views/compare.py"
MEASURES = ["P@10", "nDCG@10"]


@pytest.fixture
def demo_store(built_store_target, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh copy of the demo store with sample s1 of the first two runs."""
    path = built_store_target("demo", built_demo, "ledger.sqlite")
    db = open_store(path)
    baseline, candidate = [r.name for r in list_runs(open_study(db, DEMO_STUDY_ID, None))][:2]
    draw_stored_sample(
        db,
        study_id=DEMO_STUDY_ID,
        name="s1",
        candidate=candidate,
        baseline=baseline,
        measures=MEASURES,
        size=30,
        seed=7,
        actor=None,
    )
    db.conn.close()
    monkeypatch.setenv("RELEVANCE_LEDGER_DB", str(path))
    return path


def _open(page: str, params: dict[str, str]) -> AppTest:
    at = AppTest.from_file(ENTRY, default_timeout=60)
    at.query_params.update({"annotator": "lead", **params})
    at.run()
    at.switch_page(page).run()
    assert not at.exception, at.exception
    return at


def _shown(at: AppTest) -> tuple[str, str]:
    heading = next(m.value for m in at.markdown if m.value.startswith("#### "))
    return heading[5:].replace("\\", "").split(":")[0], item_caption(at).split(" · ")[1]


def test_the_sample_queue_shows_the_units_in_order_and_records_non_response(
    demo_store: Path,
) -> None:
    at = _open(ANNOTATE, {"queue": "sample", "sample": "s1"})
    db = open_store(demo_store)
    units = sample_units(open_study(db, DEMO_STUDY_ID, None), "s1")
    assert at.selectbox(key="rl_sample_name").value == "s1"
    assert item_caption(at).startswith(f"sample unit 1 of {len(units)}")
    assert _shown(at) == (units[0].query_id, units[0].unit_id)
    grade_button(at, 2).click().run()
    assert not at.exception, at.exception
    label = resolve_unit_in_store(
        open_study(db, DEMO_STUDY_ID, None), units[0].query_id, units[0].unit_id
    )
    assert label is not None and label.annotators.get("lead") == 2
    assert _shown(at) == (units[1].query_id, units[1].unit_id)  # the next, no choosing
    keyed(at.button, "skip_").click().run()
    keyed(at.button, "cant_judge_").click().run()
    assert not at.exception, at.exception
    kinds = [(r.unit_id, r.kind) for r in nonresponses(open_study(db, DEMO_STUDY_ID, None), "s1")]
    assert kinds == [(units[1].unit_id, "skip"), (units[2].unit_id, "cant_judge")]
    assert _shown(at) == (units[3].query_id, units[3].unit_id)
    progress = " ".join(p.proto.text for p in at.get("progress"))
    assert f"Sample s1: 1 labeled, 2 non-response, {len(units) - 3} to label" in progress
    assert at.query_params.get("queue") in ("sample", ["sample"])
    db.conn.close()


def test_compare_estimate_instead_shows_the_estimate_apart_from_the_verdict(
    demo_store: Path,
) -> None:
    at = _open(COMPARE, {})
    at.multiselect(key="rl_compare_measures").set_value(MEASURES).run()
    bottom = " ".join(str(t.value) for t in at.table)
    assert "estimated" not in bottom and "Estimated from a sample" not in [
        h.value for h in at.subheader
    ]  # nothing estimated until asked
    at.toggle(key="rl_compare_estimate").set_value(True).run()
    assert not at.exception, at.exception
    assert at.selectbox(key="rl_compare_sample").value == "s1"
    headers = [h.value for h in at.subheader]
    assert headers.index("Estimated from a sample") > headers.index("Bottom line")
    estimate_table = at.table[-1].value
    assert list(estimate_table.index) == MEASURES
    sampled = estimate_table["sampled of unknown units"]
    assert set(sampled) == {sampled.iloc[0]} and " of " in sampled.iloc[0]
    assert list(estimate_table["labeled · non-response"]) == ["0 · 0", "0 · 0"]
    captions = " ".join(c.value for c in at.caption).replace("\\", "")
    assert "estimated: " in captions and "non-response" in captions
    assert "difference estimator with finite-population correction" in captions
    # the decided verdict table is the evidence's alone
    verdicts = at.table[0].value
    assert "estimated" not in " ".join(map(str, verdicts.to_numpy().ravel()))


def test_compare_draws_a_sample_and_the_annotate_queue_offers_it(demo_store: Path) -> None:
    at = _open(COMPARE, {})
    at.multiselect(key="rl_compare_measures").set_value(["P@10"]).run()
    at.toggle(key="rl_compare_estimate").set_value(True).run()
    at.text_input(key="rl_sample_new_name").set_value("mine").run()
    at.number_input(key="rl_sample_new_size").set_value(12).run()
    at.button(key="rl_sample_draw").click().run()
    assert not at.exception, at.exception
    assert "Sample mine drawn" in " ".join(s.value for s in at.success)
    assert at.selectbox(key="rl_compare_sample").value == "mine"
    db = open_store(demo_store)
    assert sample_units(open_study(db, DEMO_STUDY_ID, None), "mine")
    db.conn.close()
    again = _open(ANNOTATE, {"queue": "sample", "sample": "mine"})
    assert again.selectbox(key="rl_sample_name").value == "mine"


def test_compare_estimate_takes_an_automatic_source_as_predictor_only(demo_store: Path,
                                                                    tmp_path: Path) -> None:
    from evalcore.store.imports.automatic_labels import import_automatic_labels

    db = open_store(demo_store)
    units = sample_units(open_study(db, DEMO_STUDY_ID, None), "s1")
    csv = tmp_path / "judge.csv"
    csv.write_text(
        "query_id,unit_id,gain\n" + "".join(f"{u.query_id},{u.unit_id},1\n" for u in units)
    )
    import_automatic_labels(
        db, csv, study_id=DEMO_STUDY_ID, name="judge", format="csv", actor="lead"
    )
    db.conn.close()
    at = _open(COMPARE, {})
    at.multiselect(key="rl_compare_measures").set_value(MEASURES).run()
    verdicts = at.table[0].value.copy()
    at.toggle(key="rl_compare_estimate").set_value(True).run()
    at.selectbox(key="rl_compare_predictor").set_value("judge").run()
    assert not at.exception, at.exception
    captions = " ".join(c.value for c in at.caption).replace("\\", "")
    assert "automatic judgments 'judge' as predictor" in captions
    assert at.table[0].value.equals(verdicts)  # the verdicts do not read them
