"""Each automatic source against the human gains that count: quadratic-weighted kappa,
confusion matrix and per-grade counts, checked against a hand computation."""

from __future__ import annotations

from pathlib import Path

import pytest
from store_fixtures import new_store

from evalcore.analysis.automatic_agreement import automatic_agreement, source_agreement
from evalcore.io.text_lines import SourceText
from evalcore.store.imports.automatic_labels import import_automatic_labels
from evalcore.store.labels import adjudicate, record_label
from evalcore.store.study_handle import open_study


def _hand_kappa(pairs: list[tuple[int, int]]) -> float:
    """Quadratic-weighted Cohen's kappa written out: 1 - sum w*O / sum w*E over 5 grades."""
    n = len(pairs)
    k = 5
    observed = [[0.0] * k for _ in range(k)]
    for h, a in pairs:
        observed[h][a] += 1 / n
    rows = [sum(observed[i]) for i in range(k)]
    cols = [sum(observed[i][j] for i in range(k)) for j in range(k)]
    num = den = 0.0
    for i in range(k):
        for j in range(k):
            w = (i - j) ** 2 / (k - 1) ** 2
            num += w * observed[i][j]
            den += w * rows[i] * cols[j]
    return 1 - num / den


def test_source_agreement_equals_the_hand_computation() -> None:
    human = {
        ("q1", "d1"): 0,
        ("q1", "d2"): 1,
        ("q1", "d3"): 2,
        ("q2", "d1"): 3,
        ("q2", "d2"): 4,
        ("q2", "d3"): 0,
        ("q3", "d1"): 2,
    }
    auto = {
        ("q1", "d1"): 0,
        ("q1", "d2"): 2,
        ("q1", "d3"): 2,
        ("q2", "d1"): 1,
        ("q2", "d2"): 4,
        ("q2", "d3"): 1,
        ("q9", "d9"): 3,
    }  # q9: no human gain
    got = source_agreement("judge", human, auto)
    shared = [(human[key], auto[key]) for key in auto if key in human]
    assert (got.n_labels, got.n_units) == (7, 6)
    assert got.kappa.value == pytest.approx(_hand_kappa(shared), abs=1e-12)
    # By hand: observed weighted disagreement 36/(36*16), expected 136/(36*16).
    assert got.kappa.value == pytest.approx(1 - 36 / 136, abs=1e-12)
    assert got.confusion[1][2] == 1 and got.confusion[3][1] == 1 and got.confusion[0][0] == 1
    assert sum(map(sum, got.confusion)) == 6
    assert got.human_counts == [2, 1, 1, 1, 1]
    assert got.automatic_counts == [1, 2, 2, 0, 1]
    assert got.automatic_all_counts == [1, 2, 2, 1, 1]
    assert got.exact_agreement == pytest.approx(3 / 6)


def test_no_shared_unit_is_not_computable() -> None:
    got = source_agreement("judge", {}, {("q", "d"): 2})
    assert got.n_units == 0 and not got.kappa.computed and got.exact_agreement is None
    assert got.automatic_all_counts == [0, 0, 1, 0, 0]


def test_study_agreement_compares_with_the_gain_that_counts(tmp_path: Path, store_target) -> None:
    db = new_store(store_target)
    for unit, gain in (("d1", 3), ("d2", 0), ("d3", 1)):
        record_label(db, study_id="s", query_id="q1", unit_id=unit, gain=gain, annotator="ann")
    record_label(db, study_id="s", query_id="q1", unit_id="d4", gain=1, annotator="ann")
    record_label(db, study_id="s", query_id="q1", unit_id="d4", gain=3, annotator="bob")
    record_label(db, study_id="s", query_id="q1", unit_id="d5", gain=0, annotator="ann")
    record_label(db, study_id="s", query_id="q1", unit_id="d5", gain=4, annotator="bob")
    adjudicate(db, study_id="s", query_id="q1", unit_id="d5", gain=2, reviewer="rev")
    text = "q1 0 d1 3\nq1 0 d2 1\nq1 0 d3 1\nq1 0 d4 4\nq1 0 d5 2\nq1 0 d6 0\n"
    import_automatic_labels(db, SourceText("j.qrels", text), study_id="s", name="judge")
    (got,) = automatic_agreement(open_study(db, "s", None))
    # d4 is in conflict (no gain counts) and d6 has no human label: 4 shared units.
    shared = [(3, 3), (0, 1), (1, 1), (2, 2)]
    assert (got.source, got.n_labels, got.n_units) == ("judge", 6, 4)
    assert got.kappa.value == pytest.approx(_hand_kappa(shared), abs=1e-12)
    assert got.human_counts == [1, 1, 1, 1, 0]
    (tmp_path / "other").mkdir()
    assert automatic_agreement(open_study(new_store(tmp_path / "other", study_id="t"), "t", None)) == []
