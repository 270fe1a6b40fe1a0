"""Automatic judgments as predictors in the estimator (contract section 13): coverage does
not depend on their quality. Over several collections, a useless (random) source and an
adversarial one keep the 95% intervals' coverage near nominal; a good one narrows them."""

from __future__ import annotations

import numpy as np
import pytest
from estimation_builders import MEASURES, Generated, generate

from evalcore.estimation.design import grow
from evalcore.estimation.pair_estimate import Estimate, draw_for_pair, estimate_pair

MEASURE = "nDCG@5"


def _truth(g: Generated) -> dict[tuple[str, str], int]:
    return {(q, u): gain for q, labels in zip(g.qids, g.truth, strict=True)
            for u, gain in labels.items()}


def _sources(g: Generated, seed: int) -> dict[str, dict[tuple[str, str], int]]:
    """Automatic gains of every unit: right 90% of the time, uniformly random, or right on
    the labeled units and inverted on the hidden ones (calibration then trusts it)."""
    rng = np.random.default_rng(seed)
    truth = _truth(g)
    good = {k: (v if rng.random() < 0.9 else int(rng.integers(0, 5))) for k, v in truth.items()}
    random = {k: int(rng.integers(0, 5)) for k in truth}
    adversarial = {k: (4 - v if k in g.hidden else v) for k, v in truth.items()}
    return {"none": {}, "good": good, "random": random, "adversarial": adversarial}


def _true_mean(g: Generated) -> float:
    pair = g.true_pair([MEASURE])
    return float(np.nan_to_num(pair.intervals(MEASURE)[0]).mean())


def test_coverage_holds_whatever_the_predictor_over_seeds() -> None:
    reps = 25
    hits = {"none": 0, "good": 0, "random": 0, "adversarial": 0}
    width = dict.fromkeys(hits, 0.0)
    total = 0
    for collection in (21, 22, 23):
        g = generate(collection, n=50)
        pair = g.pair([MEASURE])
        true = _true_mean(g)
        truth = _truth(g)
        sources = _sources(g, collection)
        for seed in range(reps):
            design = draw_for_pair(pair, name="s", run_a="A", run_b="B", size=50, seed=seed)
            answers = {(u.query_id, u.unit_id): truth[(u.query_id, u.unit_id)]
                       for u in design.sampled_units()}
            total += 1
            for kind, auto in sources.items():
                (e,) = estimate_pair(pair, design, answers, automatic=auto or None,
                                     automatic_name=kind if auto else None)
                assert isinstance(e, Estimate)
                hits[kind] += e.lower - 1e-9 <= true <= e.upper + 1e-9
                width[kind] += e.upper - e.lower
    # 75 intervals per predictor: 0.95 nominal, one standard error about 0.025.
    for kind, n in hits.items():
        assert n >= 0.86 * total, (kind, n, total)
    assert width["good"] < 0.85 * width["none"], width
    assert width["adversarial"] > width["good"], width


@pytest.mark.parametrize("kind", ["random", "adversarial"])
def test_a_full_sample_is_exact_whatever_the_predictor(kind: str) -> None:
    g = generate(4, n=20)
    pair = g.pair(MEASURES)
    truth = _truth(g)
    design = grow(draw_for_pair(pair, name="s", run_a="A", run_b="B", size=10, seed=1), 10**6)
    answers = {(u.query_id, u.unit_id): truth[(u.query_id, u.unit_id)]
               for u in design.sampled_units()}
    true = g.true_pair(MEASURES)
    for e in estimate_pair(pair, design, answers, automatic=_sources(g, 4)[kind]):
        if not isinstance(e, Estimate):
            continue
        value = float(np.nan_to_num(true.intervals(e.measure)[0]).mean())
        assert e.lower == pytest.approx(value, abs=1e-9)
        assert e.upper == pytest.approx(value, abs=1e-9)
