"""The Compare page's bottom line: the sentence and its table first (candidate − baseline,
the baseline named: the first run chosen), then the labels that would settle each open
measure with their link, the paired tests with their caution once, the trec_eval
compatibility numbers apart."""

from urllib.parse import parse_qs

import pytest
from app_harness import build_small_study

from evalcore.analysis.bottom_line import bottom_line
from evalcore.analysis.pair_comparison import COMPAT_LABEL, compare_pair
from evalcore.store.labels import record_label
from evalcore.store.study_handle import open_study
from evalcore.store.study_measures import set_study_measures

PAGE = "views/compare.py"


@pytest.fixture
def store_to_10(new_store_target, monkeypatch: pytest.MonkeyPatch):
    """The small study with its runs stored to depth 10 (they return at most 3 results a
    query): the @10 comparisons below read ranks the runs hold, empty past the third."""
    path = new_store_target("ledger.sqlite")
    db = build_small_study(path, depth=10)
    monkeypatch.setenv("RELEVANCE_LEDGER_DB", str(path))
    return path, db


def _label(db, gains: dict[str, int]) -> None:
    for unit, gain in gains.items():
        query = "q1" if unit in {"d1", "d2", "d3", "d4"} else "q2"
        record_label(db, study_id="s1", query_id=query, unit_id=unit, gain=gain, annotator="a")


def _texts(at) -> list[str]:
    """The lines of markdown, captions and warnings in page order (escapes removed; the
    page draws several lines in one element), the measure picker's caption on the runs'
    depth left out (it belongs to the pickers)."""
    out = _walk(at.main)
    lines = [line.rstrip(" ").replace("\\", "").replace("**", "")
             for t in out for line in t.split("\n")]
    return [line for line in lines if not line.startswith("Cutoffs up to @")]


def _walk(node) -> list[str]:
    kind = getattr(node, "type", "")
    if kind in ("markdown", "caption", "warning", "info", "error") and hasattr(node, "value"):
        return [str(node.value)]
    children = getattr(node, "children", None) or {}
    out = []
    for child in children.values():
        out.extend(_walk(child))
    return out


def _first(texts: list[str], needle: str) -> int:
    return next(i for i, t in enumerate(texts) if needle in t)


def _bottom(at):
    """The bottom line's table: one row per measure."""
    return at.table[0].value


def _sentence(db, measures: list[str]) -> str:
    """What ``evalcore compare --runs r1,r2`` says first (r1, the first run, the baseline)."""
    return bottom_line(compare_pair(open_study(db, "s1", None), "r2", "r1", measures, queue_limit=10)).sentence


def test_the_bottom_line_comes_first(store_to_10, new_app) -> None:
    _, db = store_to_10
    _label(db, {"d1": 2, "d2": 0, "d3": 1, "d4": 3, "d5": 1, "d6": 0})
    at = new_app(page=PAGE)
    assert not at.exception, at.exception
    assert at.multiselect(key="rl_compare_runs").value == ["r1", "r2"]  # r1: the baseline
    # the study's default measures at the runs' depth (10)
    assert at.multiselect(key="rl_compare_measures").value == ["P@10", "R@10", "nDCG@10", "RR@10"]
    measures = ["P@10", "R@10", "nDCG@10", "RR@10"]
    at.multiselect(key="rl_compare_measures").set_value(measures).run()
    texts = _texts(at)
    expected = {
        m.measure: m.decision
        for m in compare_pair(open_study(db, "s1", None), "r2", "r1", measures).measures
    }
    assert expected["P@10"].verdict == "b_better"
    sentence = _sentence(db, measures)
    assert sentence.startswith("r2 vs r1 (baseline): worse on P@10")
    assert texts[0] == sentence  # nothing before it but the pickers and its heading
    table = _bottom(at)
    assert list(table.columns) == ["verdict", "candidate − baseline (mean)",
                                   "what would settle it"]
    assert table.loc["P@10", "verdict"] == "decided: worse"
    assert table.loc["P@10", "candidate − baseline (mean)"] == "−0.050 to −0.050"
    assert table.loc["RR@10", "verdict"] == "decided: worse"
    assert table.loc["P@10", "what would settle it"] == (
        "nothing: decided whatever the missing labels are")
    assert 0 < _first(texts, "Labels that would settle it") < _first(
        texts, "Paired significance tests")
    # decided: nothing to label, no queue shown for it
    assert not [e for e in at.expander if e.label.startswith("P@10")]
    assert at.subheader[0].value == "Bottom line" and at.subheader[0].proto.help


def test_cannot_be_decided_yet_says_why_in_plain_words_and_what_to_do(store_to_10,
                                                                      new_app) -> None:
    _, db = store_to_10
    _label(db, {"d1": 2, "d2": 0, "d3": 1, "d4": 3})  # q2 has no label at all
    at = new_app(page=PAGE)
    at.multiselect(key="rl_compare_measures").set_value(["P@10"]).run()
    texts = _texts(at)
    assert texts[0] == _sentence(db, ["P@10"]) == (
        "r2 vs r1 (baseline): P@10 cannot be decided yet — 1 query has no label at all")
    row = _bottom(at).loc["P@10"]
    assert row["verdict"] == "cannot be decided yet"
    assert row["candidate − baseline (mean)"] == "unavailable"
    assert row["what would settle it"] == "1 query has no label at all: label any result of them"


def test_open_shows_the_labels_that_would_settle_it_and_its_link(store_to_10, new_app) -> None:
    _, db = store_to_10
    _label(db, {"d1": 2, "d2": 0, "d5": 1})  # d3, d4 (q1) and d6 (q2) unlabeled
    at = new_app(annotator="ann", page=PAGE)
    at.multiselect(key="rl_compare_measures").set_value(["P@10"]).run()
    assert not at.exception, at.exception
    texts = _texts(at)
    assert texts[0] == _sentence(db, ["P@10"])
    assert texts[0].startswith("r2 vs r1 (baseline): P@10 still open")
    row = _bottom(at).loc["P@10"]
    assert row["verdict"] == "open"
    assert row["candidate − baseline (mean)"] == "−0.100 to +0.050"
    assert "3 unknown units" in row["what would settle it"]
    (expander,) = [e for e in at.expander if e.label.startswith("P@10: open — ")]
    queue = next(d.value for d in expander.dataframe if "unit" in d.value.columns)
    assert sorted(queue["unit"]) == ["d3", "d4", "d6"]
    assert set(queue["query text"]) == {"reset password", "password guide"}
    row = queue[queue["unit"] == "d6"].iloc[0]
    assert (row["r2 rank"], row["r1 rank (baseline)"]) == ("1", "not returned")
    assert row["narrows the interval by (at least)"] == 0.05  # 1/10 of one of 2 queries
    (link,) = [p for p in at.get("page_link") if p.proto.label.startswith("Label these")]
    assert link.proto.label == "Label these on the Annotate page (P@10)"
    assert link.proto.page == "annotate"
    assert "queue=decide&run_a=r2&run_b=r1&measure=P%4010" in link.proto.query_string
    params = {k: v[0] for k, v in parse_qs(link.proto.query_string).items()}
    assert params == {"study": "s1", "annotator": "ann", "queue": "decide", "run_a": "r2",
                      "run_b": "r1", "measure": "P@10"}


def test_paired_tests_say_what_was_left_out_and_the_caution_once(store_to_10, new_app) -> None:
    _, db = store_to_10
    _label(db, {"d1": 2, "d2": 0, "d3": 1, "d4": 3, "d5": 1})  # d6 unlabeled
    at = new_app(page=PAGE)
    at.multiselect(key="rl_compare_measures").set_value(["P@10", "RR@10"]).run()
    texts = _texts(at)
    (paired,) = [d.value for d in at.table if "paired queries" in d.value.columns]
    assert paired.loc["P@10", "paired queries"] == "1 of 2"
    assert ("P@10: 1 of 2 queries (1 left out: 1 with unlabeled results in the top k in "
            "run r2)") in texts
    cautions = [t for t in texts if t.startswith("Caution: ")]
    assert len(cautions) == 1  # said once, for every measure
    assert "selected by judging completeness that can be biased" in cautions[0]
    assert _first(texts, "Paired significance tests") < texts.index(cautions[0])
    assert not any("unlabeled_returned" in t for t in texts)


def test_compat_numbers_are_labeled_and_apart(store_to_10, new_app) -> None:
    _, db = store_to_10
    _label(db, {"d1": 2, "d2": 0, "d5": 1})
    at = new_app(page=PAGE)
    at.multiselect(key="rl_compare_measures").set_value(["P@10", "RR@10"]).run()
    (expander,) = [e for e in at.expander if "trec_eval" in e.label]
    assert expander.label == COMPAT_LABEL.capitalize()
    (compat,) = [d.value for d in expander.dataframe]
    assert list(compat.columns) == ["measure", "r2 (compat.)", "r1 (baseline, compat.)",
                                    "candidate − baseline (compat.)", "queries"]
    # unjudged d3, d4, d6 count as non-relevant: r1 has d1 and d5 relevant in its top 10
    p10 = compat[compat["measure"] == "P@10"].iloc[0]
    assert p10["r1 (baseline, compat.)"] == "0.1000"  # (1/10 + 1/10) / 2
    assert p10["r2 (compat.)"] == "0.0500"
    assert p10["candidate − baseline (compat.)"] == "−0.0500"
    # never in the evidence's tables or sentences
    others = [d.value for d in at.dataframe if "r1 (baseline, compat.)" not in d.value.columns]
    others.append(_bottom(at))
    assert not any("compat" in str(c) for d in others for c in d.columns)
    assert not any("0.1000" in str(v) for d in others for v in d.to_numpy().ravel())
    assert "0.100" not in _texts(at)[0]


def test_hostile_names_are_not_rendered_as_markup(small_store, new_app) -> None:
    from evalcore.store.runs import add_run

    _, db = small_store
    add_run(db, study_id="s1", name="**bold**<b>x</b>", source="imported", k=3,
            results=[("q1", 1, "d1", 1.0), ("q2", 1, "d5", 1.0)])
    _label(db, {"d1": 2, "d2": 0, "d5": 1})
    at = new_app(page=PAGE)
    at.multiselect(key="rl_compare_runs").set_value(["r1", "**bold**<b>x</b>"]).run()
    at.checkbox(key="rl_compare_accept_unverified").check().run()
    assert not at.exception, at.exception
    raw = [line for m in at.markdown for line in m.value.split("  \n")]
    line = next(m for m in raw if "vs r1 \\(baseline\\)" in m)
    assert line.startswith("**\\*\\*bold\\*\\*\\<b\\>x\\<\\/b\\> vs r1")


def test_the_verdicts_are_computed_once_per_store_state(small_store, new_app,
                                                        monkeypatch) -> None:
    import evalcore.analysis.pair_comparison as module

    _, db = small_store
    _label(db, {"d1": 2, "d2": 0, "d5": 1})
    calls = []
    real = module.compare_pair

    def counted(*args, **kwargs):
        calls.append(args[1:4])
        return real(*args, **kwargs)

    monkeypatch.setattr(module, "compare_pair", counted)
    first = new_app(page=PAGE)
    first.run()  # a rerun of the same session (a click)
    new_app(page=PAGE)  # another session
    assert len(calls) == 1, calls
    record_label(db, study_id="s1", query_id="q1", unit_id="d3", gain=1, annotator="a")
    at = new_app(page=PAGE)  # the store moved: computed again, with the new label
    assert len(calls) == 2
    assert _texts(at)[0] == _sentence(db, ["P@3", "R@3", "nDCG@3", "RR@3"])


def test_a_label_shows_on_the_next_run_of_the_same_session(small_store, new_app) -> None:
    """A run's results are keyed on the store's marks read once for the run: a label
    written after it moves them, and the session's next run shows it everywhere (the
    verdict sentence, the results table, the per-query chart)."""
    _, db = small_store
    _label(db, {"d1": 2, "d2": 0, "d5": 1})
    at = new_app(page=PAGE)
    before = (_texts(at)[0], _results(at), _chart(at))
    assert before[0] == _sentence(db, ["P@3", "R@3", "nDCG@3", "RR@3"])
    record_label(db, study_id="s1", query_id="q1", unit_id="d3", gain=3, annotator="a")
    at.run()
    assert not at.exception, at.exception
    after = (_texts(at)[0], _results(at), _chart(at))
    assert after[0] == _sentence(db, ["P@3", "R@3", "nDCG@3", "RR@3"])
    assert all(a != b for a, b in zip(after, before, strict=True)), (before, after)


def _results(at) -> list:
    (table,) = [d.value for d in at.dataframe if "run" in d.value.columns]
    return table.to_dict("records")


def _chart(at) -> str:
    return at.get("plotly_chart")[0].proto.spec


def test_the_default_measures_are_the_studys_chosen_ones(small_store, new_app) -> None:
    _, db = small_store
    set_study_measures(db, study_id="s1", measures=["Success@2", "nDCG", "P@50"], actor=None)
    at = new_app(page=PAGE)
    assert not at.exception, at.exception
    # a measure without a cutoff is taken at the runs' depth; one deeper than it is left out
    assert at.multiselect(key="rl_compare_measures").value == ["Success@2", "nDCG@3"]


def test_a_large_study_shows_verdicts_first_and_the_queues_once_computed(
    small_store, new_app, monkeypatch
) -> None:
    """Above LARGE_STUDY_QUERIES the verdicts and paired tests come at once; the queues and
    compat numbers are computed in the background (started on the next run) and shown then,
    from the same read and evaluation of the two runs as the verdicts."""
    import time

    import app.components.state as state
    import evalcore.analysis.decision as decision

    _, db = small_store
    _label(db, {"d1": 2, "d2": 0, "d3": 1, "d4": 3, "d5": 1, "d6": 0})
    monkeypatch.setattr(state, "LARGE_STUDY_QUERIES", 0)
    reads = []
    read = decision.runs_as_columns
    monkeypatch.setattr(
        decision, "runs_as_columns", lambda *a, **kw: reads.append(a[1]) or read(*a, **kw)
    )
    at = new_app(page=PAGE)
    assert not at.exception, at.exception
    texts = _texts(at)
    assert texts[0].startswith("r2 vs r1 (baseline): ")
    verdicts = _bottom(at)["verdict"].tolist()
    assert any("Working out which labels would decide" in t for t in texts)
    assert not any("Label these on the Annotate page" in str(getattr(n, "label", ""))
                   for n in at.main)
    assert not any(COMPAT_LABEL.capitalize() in str(getattr(n, "label", "")) for n in at.expander)
    deadline = time.monotonic() + 60
    while any("Working out which labels would decide" in t for t in _texts(at)):
        assert time.monotonic() < deadline, "the queues never came"
        time.sleep(0.2)
        at.run()
        assert not at.exception, at.exception
    assert any(COMPAT_LABEL.capitalize() in str(n.label) for n in at.expander)
    assert _bottom(at)["verdict"].tolist() == verdicts
    # one read (candidate r2, baseline r1) for the verdicts, the queues and compat
    assert reads == [["r2", "r1"]]


def test_a_large_study_computes_every_runs_table_when_asked(small_store, new_app,
                                                            monkeypatch) -> None:
    """Above LARGE_STUDY_QUERIES the results table and per-query differences of every chosen
    run wait for a switch (the verdicts come first), with a note saying so; switched on,
    they are the same numbers as on a small study, and another session then sees them at
    once (shared until the labels change)."""
    import app.components.shared_results as shared_results
    import app.components.state as state

    _, db = small_store
    _label(db, {"d1": 2, "d2": 0, "d3": 1, "d4": 3, "d5": 1, "d6": 0})
    small = new_app(page=PAGE)
    table = small.dataframe[-1].value
    shared_results._slot.clear()  # computed afresh below
    monkeypatch.setattr(state, "LARGE_STUDY_QUERIES", 0)
    at = new_app(page=PAGE)
    assert not at.exception, at.exception
    texts = _texts(at)
    assert texts[0].startswith("r2 vs r1 (baseline): ")  # the bottom line is drawn
    assert any("A large study (2 queries): every chosen run's results table" in t for t in texts)
    assert not any("Results table" in t for t in texts)
    assert not any(t.startswith("Paired tests ") for t in texts)
    at.toggle(key="rl_compare_every_run").set_value(True).run()
    assert not at.exception, at.exception
    assert any("Results table" in t for t in _texts(at))
    assert at.dataframe[-1].value.equals(table)
    other = new_app(page=PAGE)  # the table is computed for these marks: shown at once
    assert any("Results table" in t for t in _texts(other))
    assert other.dataframe[-1].value.equals(table)


def test_each_candidate_gets_its_sentence_against_the_one_baseline(small_store,
                                                                    new_app) -> None:
    from evalcore.store.runs import add_run

    _, db = small_store
    add_run(db, study_id="s1", name="r3", source="imported", k=3,
            results=[("q1", 1, "d4", 1.0), ("q2", 1, "d5", 1.0)])
    _label(db, {"d1": 2, "d2": 0, "d3": 1, "d4": 3, "d5": 1, "d6": 0})
    at = new_app(page=PAGE)
    at.multiselect(key="rl_compare_runs").set_value(["r2", "r1", "r3"]).run()
    at.checkbox(key="rl_compare_accept_unverified").check().run()
    assert not at.exception, at.exception
    texts = _texts(at)
    measures = at.multiselect(key="rl_compare_measures").value
    expected = [bottom_line(compare_pair(open_study(db, "s1", None), c, "r2", measures, queue_limit=10)).sentence for c in ("r1", "r3")]
    assert texts[:2] == expected  # r2, chosen first, is the baseline of both
    assert all(t.startswith(f"{c} vs r2 (baseline): ") for t, c in zip(texts[:2], ("r1", "r3"), strict=True))
    assert len(at.table) == 4  # per candidate: its bottom line table, its paired tests


def test_only_cutoffs_the_runs_hold_are_offered_and_the_caption_says_why(small_store,
                                                                        new_app) -> None:
    """Runs stored to depth 3 hold no rank past 3: the measure picker offers no deeper
    cutoff (a verdict on P@10 would count ranks never retrieved as empty), and a caption
    under it names each run's depth; a deeper measure in a shared address is left out."""
    _, db = small_store
    _label(db, {"d1": 2, "d2": 0, "d3": 1, "d4": 3, "d5": 1, "d6": 0})
    at = new_app(page=PAGE)
    assert not at.exception, at.exception
    options = at.multiselect(key="rl_compare_measures").options
    assert "P@3" in options and "nDCG@3" in options
    assert not [m for m in options if m.split("@")[1] not in ("3",)], options
    captions = [c.value.replace("\\", "") for c in at.caption]
    assert ("Cutoffs up to @3 only: r1 and r2 are stored to depth 3. Ranks past a run's depth "
            "were never retrieved, so a deeper cutoff would count them as empty.") in captions
    assert not any("@10" in str(v) for t in at.table for v in t.value.index)
    linked = new_app(page=PAGE)
    linked.query_params["measures"] = "P@3,P@20"
    linked.run()
    assert linked.multiselect(key="rl_compare_measures").value == ["P@3"]
    assert list(_bottom(linked).index) == ["P@3"]
    assert ("The address asks for measures 'P@20', not offered for these runs (see under "
            "Measures); they are left out.") in [w.value.replace("\\", "") for w in linked.warning]


def test_runs_stored_to_depth_10_are_offered_5_and_10_not_20_or_100(store_to_10,
                                                                    new_app) -> None:
    _, db = store_to_10
    at = new_app(page=PAGE)
    options = at.multiselect(key="rl_compare_measures").options
    assert {m.split("@")[1] for m in options} == {"5", "10"}
    assert any("Cutoffs up to @10 only: r1 and r2 are stored to depth 10. Ranks past"
               in c.value.replace("\\", "") for c in at.caption)
    from evalcore.store.runs import add_run

    add_run(db, study_id="s1", name="r3", source="imported", k=5,
            results=[("q1", 1, "d4", 1.0), ("q2", 1, "d5", 1.0)])
    at = new_app(page=PAGE)
    at.multiselect(key="rl_compare_runs").set_value(["r1", "r3"]).run()
    assert not at.exception, at.exception
    options = at.multiselect(key="rl_compare_measures").options
    assert {m.split("@")[1] for m in options} == {"5"}
    assert any("Cutoffs up to @5 only: r1 is stored to depth 10, r3 to depth 5. Ranks past"
               in c.value.replace("\\", "") for c in at.caption)


def test_switching_to_shallower_runs_carries_the_chosen_measures_to_their_depth(
        store_to_10, new_app) -> None:
    """P@10 chosen over runs stored to depth 10 becomes P@5 when runs stored to depth 5 are
    chosen instead (the same family at the runs' depth), with a caption saying so; the
    bottom line follows."""
    _, db = store_to_10
    from evalcore.store.runs import add_run

    for name, top in (("r3", "d4"), ("r4", "d1")):
        add_run(db, study_id="s1", name=name, source="imported", k=5,
                results=[("q1", 1, top, 1.0), ("q2", 1, "d5", 1.0)])
    at = new_app(page=PAGE)
    at.multiselect(key="rl_compare_measures").set_value(["P@10", "nDCG@5"]).run()
    at.multiselect(key="rl_compare_runs").set_value(["r1", "r3"]).run()  # one step at a time
    assert at.multiselect(key="rl_compare_measures").value == ["P@5", "nDCG@5"]
    at.multiselect(key="rl_compare_runs").set_value(["r3", "r4"]).run()
    assert not at.exception, at.exception
    assert at.multiselect(key="rl_compare_measures").value == ["P@5", "nDCG@5"]
    assert list(_bottom(at).index) == ["P@5", "nDCG@5"]
    captions = [c.value.replace("\\", "") for c in at.caption]
    assert any(c.startswith("P@10 changed to P@5. Cutoffs up to @5 only: r3 and r4 are stored to")
               for c in captions), captions
    assert not at.error and not at.warning
    at.multiselect(key="rl_compare_measures").set_value(["nDCG@5"]).run()  # the lead's choice
    assert not any("changed to" in c.value for c in at.caption)
