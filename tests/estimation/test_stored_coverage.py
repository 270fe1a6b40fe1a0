"""Coverage, through the store: on a simulated study whose every label is known, hide
some, draw a stored sample, label its units with the truth, and estimate from the store
(:func:`evalcore.estimation.stored.estimate_stored`). Over 50 seeds of the sample the
95% interval holds the true mean difference in most of them (a tolerant bound: the seeds
are fixed, so the count is deterministic, but it is not tuned to one exact value)."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from estimation_builders import Generated, generate

from evalcore.estimation.stored import draw_stored_sample, estimate_stored
from evalcore.store.completeness import mark_complete
from evalcore.store.connection import open_store
from evalcore.store.labels import record_label
from evalcore.store.runs import add_run
from evalcore.store.samples import sample_units
from evalcore.store.studies import StudyIn
from evalcore.store.study_handle import open_study
from evalcore.store.study_setup import create_study

MEASURES = ["P@5", "nDCG@5", "RR@5"]
SEEDS = range(50)
#: At least this share of the 50 intervals must hold the truth (nominal 95%).
MOST = 0.84


def _study(path: Path, g: Generated) -> None:
    db = open_store(path)
    create_study(db, StudyIn(study_id="s", corpus_id="c"))
    for name, ranking in (("A", g.run_a), ("B", g.run_b)):
        add_run(
            db,
            study_id="s",
            name=name,
            source="imported",
            k=5,
            results=[
                (q, r, u, 10.0 - r)
                for q, row in zip(g.qids, ranking, strict=True)
                for r, u in enumerate(row, start=1)
            ],
        )
    for q, labels in zip(g.qids, g.truth, strict=True):
        for unit, gain in labels.items():
            if (q, unit) not in g.hidden:
                record_label(
                    db, study_id="s", query_id=q, unit_id=unit, gain=gain, annotator="setup"
                )
        mark_complete(db, study_id="s", query_id=q, actor="setup")
    db.conn.close()


def _true_means(g: Generated) -> dict[str, float]:
    pair = g.true_pair(MEASURES)
    return {m: float(np.nan_to_num(pair.intervals(m)[0]).mean()) for m in MEASURES}


@pytest.mark.sqlite_only
@pytest.mark.slow
def test_stored_intervals_cover_the_truth_in_most_seeds(tmp_path: Path) -> None:
    g = generate(11, n=40)
    base = tmp_path / "base.db"
    _study(base, g)
    truth = _true_means(g)
    gains = {
        (q, u): gain
        for q, labels in zip(g.qids, g.truth, strict=True)
        for u, gain in labels.items()
    }
    covered = dict.fromkeys(MEASURES, 0)
    widths = {m: [] for m in MEASURES}
    for seed in SEEDS:
        path = tmp_path / f"s{seed}.db"
        shutil.copy(base, path)
        db = open_store(path)
        draw_stored_sample(
            db,
            study_id="s",
            name="x",
            candidate="A",
            baseline="B",
            measures=MEASURES,
            size=30,
            seed=seed,
            actor=None,
        )
        for unit in sample_units(open_study(db, "s", None), "x"):
            record_label(
                db,
                study_id="s",
                query_id=unit.query_id,
                unit_id=unit.unit_id,
                gain=gains[(unit.query_id, unit.unit_id)],
                annotator="ann",
            )
        found = estimate_stored(open_study(db, "s", None), "x", candidate="A", baseline="B")
        for e in found.estimates:
            assert e.n_pending == 0 and e.n_labeled > 0, e
            covered[e.measure] += e.lower - 1e-9 <= truth[e.measure] <= e.upper + 1e-9
            widths[e.measure].append(e.upper - e.lower)
        db.conn.close()
        path.unlink()
    for m in MEASURES:
        assert covered[m] >= MOST * len(SEEDS), (m, covered[m], truth[m])
        # an interval, not the worst case: the sample narrows it
        assert 0 < float(np.mean(widths[m])) < 1.0
