"""The bottom line's sentence and table (evalcore.analysis.bottom_line): the words
"decided", "open" and "cannot be decided yet", the candidate − baseline sign, and an
estimate that is never "decided"."""

import pytest
from report_builders import DEMO_RUNS, demo_store

from evalcore.analysis.bottom_line import (
    DIFFERENCE,
    GLOSSARY,
    Estimate,
    bottom_line,
    render_text,
    table_rows,
)
from evalcore.analysis.pair_comparison import PairComparison, UndecidableCause, compare_pair
from evalcore.store.study_handle import open_study

MEASURES = ["P@10", "nDCG@10", "RR@10", "R@10"]


@pytest.fixture(scope="module")
def demo_pair(tmp_path_factory) -> PairComparison:
    _, db = demo_store(tmp_path_factory)
    baseline, candidate = DEMO_RUNS
    return compare_pair(open_study(db, "demo", None), candidate, baseline, MEASURES, queue_limit=3)


def _set(
    pc: PairComparison,
    measure: str,
    verdict: str,
    lower: float | None = None,
    upper: float | None = None,
    *,
    labels: int | None = None,
    causes=(),
    paired_mean: float | None = None,
) -> PairComparison:
    """``pc`` with one measure's verdict replaced (the rest of its evidence kept)."""
    items = []
    for item in pc.measures:
        if item.measure == measure:
            decision = item.decision.model_copy(
                update={"verdict": verdict, "lower": lower, "upper": upper}
            )
            queue = item.queue.model_copy(update={"labels_to_decide": labels})
            paired = (
                item.paired
                if paired_mean is None
                else item.paired.model_copy(update={"mean_delta": paired_mean})
            )
            item = item.model_copy(
                update={
                    "decision": decision,
                    "queue": queue,
                    "causes": list(causes),
                    "paired": paired,
                }
            )
        items.append(item)
    return pc.model_copy(update={"measures": items})


def _mixed(pc: PairComparison) -> PairComparison:
    pc = _set(pc, "P@10", "a_better", 0.004, 0.056, labels=0)
    pc = _set(pc, "nDCG@10", "a_better", 0.010, 0.030, labels=3)
    pc = _set(pc, "RR@10", "b_better", -0.040, -0.010)
    return _set(pc, "R@10", "undecided", -0.02, 0.05, labels=40)


def test_mixed_reads_as_the_lead_repeats_it(demo_pair) -> None:
    line = bottom_line(_mixed(demo_pair))
    assert line.sentence == (
        "bm25-title-boost vs bm25-plain (baseline): better on P@10 and nDCG@10 whatever the "
        "missing labels are; worse on RR@10; R@10 still open — about 40 labels would settle it"
    )
    assert (line.candidate, line.baseline, line.difference) == (
        "bm25-title-boost",
        "bm25-plain",
        DIFFERENCE,
    )
    rows = {r["measure"]: r for r in table_rows(line)}
    assert rows["P@10"]["verdict"] == "decided: better"
    assert rows["RR@10"]["verdict"] == "decided: worse"
    assert rows["R@10"]["verdict"] == "open"
    assert rows["RR@10"][f"{DIFFERENCE} (mean)"] == "−0.040 to −0.010"
    assert rows["R@10"]["what would settle it"].startswith("about 40 labels (of ")
    # a decided measure never offers labels to decide it, whatever its queue estimated
    for name in ("P@10", "nDCG@10", "RR@10"):
        assert "label" not in rows[name]["what would settle it"].replace("missing labels", "")
        assert "about" not in rows[name]["what would settle it"]
    by = {m.measure: m for m in line.measures}
    assert by["nDCG@10"].labels_to_settle is None and by["R@10"].labels_to_settle == 40


def test_all_decided(demo_pair) -> None:
    pc = demo_pair
    for name in MEASURES:
        pc = _set(pc, name, "a_better", 0.01, 0.02, labels=5)
    line = bottom_line(pc)
    assert line.sentence == (
        "bm25-title-boost vs bm25-plain (baseline): better on P@10, nDCG@10, RR@10 and R@10 "
        "whatever the missing labels are"
    )
    assert all(m.status == "decided" and m.labels_to_settle is None for m in line.measures)
    assert "about" not in render_text(line)


def test_open_with_a_labels_estimate_each(demo_pair) -> None:
    line = bottom_line(demo_pair)  # the demo: every measure open
    counts = [m.labels_to_settle for m in line.measures]
    assert all(isinstance(c, int) and c > 0 for c in counts)
    assert line.sentence == (
        "bm25-title-boost vs bm25-plain (baseline): P@10, nDCG@10, RR@10 and R@10 still open — "
        f"about {counts[0]}, {counts[1]}, {counts[2]} and {counts[3]} labels respectively "
        "would settle them"
    )
    assert [m.status for m in line.measures] == ["open"] * 4
    # an open measure whose queue is not computed yet says so without a number
    one = bottom_line(_set(demo_pair, "RR@10", "undecided", -0.04, 0.0, labels=None))
    assert "RR@10" in one.sentence and "still open" in one.sentence
    assert "about" not in one.sentence
    assert next(m for m in one.measures if m.measure == "RR@10").settle.startswith(
        "labels on some of the "
    )


def test_cannot_be_decided_yet_says_what_is_missing(demo_pair) -> None:
    cause = UndecidableCause(
        reason="missing_reference",
        n_queries=3,
        text="3 queries have no label at all: label any result of them",
    )
    pc = _set(_mixed(demo_pair), "R@10", "undecidable", causes=[cause])
    line = bottom_line(pc)
    assert line.sentence.endswith(
        "worse on RR@10; R@10 cannot be decided yet — 3 queries have no label at all"
    )
    row = next(m for m in line.measures if m.measure == "R@10")
    assert (row.status, row.word, row.interval) == (
        "cannot be decided yet",
        "cannot be decided yet",
        "unavailable",
    )
    assert row.settle == cause.text and row.verdict_cell == "cannot be decided yet"
    assert "missing_reference" not in render_text(line)


def test_an_estimate_is_never_decided(demo_pair) -> None:
    pc = _set(demo_pair, "R@10", "undecided", -0.02, 0.05, labels=40)
    estimate = Estimate(
        measure="R@10", run_a=pc.run_a, run_b=pc.run_b, point=0.02, lower=0.012, upper=0.041,
        level=0.95, n_sampled=120, n_labeled=117, n_unknown=2512, n_nonresponse=3,
        n_pending=0, n_queries=25, n_queries_sampled=10, worst_lower=-0.02, worst_upper=0.05,
        method="a method",
    )
    line = bottom_line(pc, {"R@10": estimate})
    row = next(m for m in line.measures if m.measure == "R@10")
    assert (row.status, row.word, row.verdict) == ("open", "open", "undecided")
    assert row.estimate == (
        f"estimated: {pc.run_a} better (95% CI +0.012 to +0.041; 120 of 2,512 unknown units "
        "sampled, 3 non-response; a method)"
    )
    assert "better" not in line.sentence and "decided" not in line.sentence.replace(
        "cannot be decided", ""
    )
    assert f"R@10: {row.estimate}" in line.notes
    assert "decided" not in row.estimate


def test_a_decided_verdict_beside_a_paired_mean_of_the_other_sign_is_explained(demo_pair) -> None:
    pc = _set(demo_pair, "P@10", "a_better", 0.004, 0.056, paired_mean=-0.02)
    line = bottom_line(pc)
    (note,) = [n for n in line.notes if n.startswith("P@10")]
    assert note == (
        "P@10: decided better over all 25 queries, while the paired mean is "
        "−0.020: that mean is over the 5 fully labeled queries only; both are true"
    )
    same_sign = bottom_line(_set(demo_pair, "P@10", "a_better", 0.004, 0.056, paired_mean=0.02))
    assert not [n for n in same_sign.notes if n.startswith("P@10")]


def test_glossary_defines_every_word_the_surfaces_use() -> None:
    for word in (
        "decided",
        "open",
        "cannot be decided yet",
        "estimated",
        "unavailable",
        DIFFERENCE,
    ):
        assert GLOSSARY[word]


def test_an_open_end_at_zero_is_said(demo_pair) -> None:
    pc = _set(demo_pair, "R@10", "a_better", 0.0, 0.05)
    item = next(m for m in pc.measures if m.measure == "R@10")
    item = item.model_copy(update={"decision": item.decision.model_copy(
        update={"lower_open": True})})
    pc = pc.model_copy(update={"measures": [item if m.measure == "R@10" else m
                                            for m in pc.measures]})
    row = next(m for m in bottom_line(pc).measures if m.measure == "R@10")
    assert row.interval == "0.000 to +0.050 (0 itself excluded)"
    assert row.verdict_cell == "decided: better"
