"""Validity and efficiency of estimated comparisons (contract section 13).

Generated collections (seeded, numpy): ``--queries`` queries, each with a pool of 40
units whose true gains (0..4) follow a latent quality; run A ranks the pool by quality
plus noise, run B by the same plus ``s`` times its own noise (``s`` set by bisection so
that the true mean difference A - B of a measure is a target, or fixed for the coverage
runs). Every pool unit is labeled and every population complete; then ``--hidden`` of the
units in either run's top 10 are hidden (unknown). The truth is every label.

For each setting the sample design is drawn ``--reps`` times (seeds 0..reps-1) and the
sampled units are answered with their true gains. Predictors ("automatic judgments"):

* ``none``: the middle of each query's worst-case interval;
* ``agree90`` / ``agree80`` / ``agree70``: each unit's true gain with that chance, else
  another gain at random (exact agreement of the gain);
* ``random``: a useless source, each unit's gain drawn uniformly from 0..4 whatever its
  true gain;
* ``skips``: no automatic judgments, and the annotator skips (non-response) three in ten
  of the units of gain 2 or more and one in twenty of the others: not at random. Those
  units stay unknown and are taken at their worst case.
* ``adversarial``: right on every labeled unit (so that calibrating it against the human
  labels trusts it) and wrong on relevance on every hidden one (0 for a relevant unit, 4
  for a non-relevant one): the worst case for an estimator that leans on it.

The automatic source judges every pool unit, labeled or not (as a judge run over a pool
does); the estimator calibrates it on the labeled units
(:func:`evalcore.estimation.pair_estimate.calibration`) and never reads it as evidence.

Printed:

1. per measure, predictor and sample size (30, 60, 120, 240 labels): the coverage of the
   95% intervals with its simulation error (1.96 standard errors), the mean width, the
   width against the worst-case (decided) interval on the same labels, and the width
   against the same size without automatic judgments;
2. per target difference (0.02, 0.05) and measure: the labels the sample needs before its
   95% interval excludes 0 (median over repetitions; the sample grows query by query), and
   the labels the worst-case to-decide queue needs to decide (followed in order, re-planned
   every few labels, the truth revealed), with their ratio.

Each estimate is computed by the library's estimator
(:func:`evalcore.estimation.estimator.stratified_difference` on
:func:`evalcore.estimation.pair_estimate.stratified_input`): a query's answered
difference depends only on its own units, so the per-query arrays are computed once per
collection and predictor (with every hidden unit answered) and each repetition selects
its sampled queries; a few repetitions are checked against
:func:`~evalcore.estimation.pair_estimate.estimate_pair` end to end.

Run: ``python3 benchmarks/bench_estimation.py [--quick | --full]``.
"""

from __future__ import annotations

import argparse
import math
import statistics
import time
from dataclasses import dataclass

import numpy as np

from evalcore.analysis.decision import PairEvaluation, decide_measure, evaluate_pair
from evalcore.analysis.decision_queue import decide_queue
from evalcore.compute.batch import ObservationBatch
from evalcore.contract.evaluation_protocol import EvalProtocol
from evalcore.contract.measures import parse_measure
from evalcore.estimation.design import grow
from evalcore.estimation.estimator import stratified_difference
from evalcore.estimation.pair_estimate import (
    Estimate,
    QueryArrays,
    draw_for_pair,
    estimate_pair,
    query_arrays,
    spread_scores,
    stratified_input,
)

POOL, DEPTH, TOP = 40, 20, 10
PROTOCOL = EvalProtocol()
MEASURES = ["P@10", "RR@10", "nDCG@10", "AP@10", "R@10", "RBP(p=0.8)@10"]
SIZES = [30, 60, 120, 240]
PREDICTORS = ["none", "agree90", "agree80", "agree70", "random", "adversarial", "skips"]
#: Automatic judgments agreeing this much or more must narrow the interval by 30%.
GOOD = ("agree90", "agree80")
COVERAGE_TARGET, NARROWER_TARGET, QUEUE_SHARE_TARGET = 0.93, 0.70, 0.25
LEVEL = 0.95


@dataclass
class Collection:
    gains: np.ndarray  # int[n, POOL]
    run_a: np.ndarray  # int[n, DEPTH]
    run_b: np.ndarray
    hidden: np.ndarray  # bool[n, POOL]

    @property
    def n(self) -> int:
        return self.gains.shape[0]

    def qids(self) -> list[str]:
        return [f"q{i:04d}" for i in range(self.n)]

    def pair(self, measures: list[str], known: np.ndarray) -> PairEvaluation:
        """Both runs with the units ``known`` (bool[n, POOL]) labeled."""
        ids = [[f"d{u}" for u in np.flatnonzero(known[q])] for q in range(self.n)]
        gains = [self.gains[q, known[q]].tolist() for q in range(self.n)]
        parsed = [parse_measure(m) for m in measures]
        batches = [
            ObservationBatch.from_gain_maps(
                self.qids(),
                DEPTH,
                [[f"d{u}" for u in row] for row in run.tolist()],
                [dict(zip(i, g, strict=True)) for i, g in zip(ids, gains, strict=True)],
                [True] * self.n,
                protocol=PROTOCOL,
                min_depth=TOP,
            )
            for run in (self.run_a, self.run_b)
        ]
        return evaluate_pair(batches[0], batches[1], parsed, PROTOCOL)

    def truth(self, measure: str) -> float:
        pair = self.pair([measure], np.ones_like(self.hidden))
        return float(np.nan_to_num(pair.intervals(measure)[0]).mean())


class Generator:
    def __init__(self, seed: int, n: int, hidden: float) -> None:
        rng = np.random.default_rng(seed)
        self.quality = rng.normal(size=(n, POOL))
        self.gains = np.clip(np.rint(self.quality * 1.3 - 0.6), 0, 4).astype(np.int64)
        self.noise_a = rng.normal(size=(n, POOL))
        self.noise_b = rng.normal(size=(n, POOL))
        self.run_a = np.argsort(-(self.quality + self.noise_a), axis=1)[:, :DEPTH]
        self.draw_hidden = rng.random((n, POOL)) < hidden

    def collection(self, scale: float) -> Collection:
        run_b = np.argsort(-(self.quality + self.noise_a + scale * self.noise_b), axis=1)[:, :DEPTH]
        n = self.gains.shape[0]
        tops = np.zeros((n, POOL), dtype=bool)
        rows = np.arange(n)[:, None]
        tops[rows, self.run_a[:, :TOP]] = True
        tops[rows, run_b[:, :TOP]] = True
        return Collection(self.gains, self.run_a, run_b, self.draw_hidden & tops)

    def for_target(self, measure: str, target: float) -> tuple[Collection, float]:
        lo, hi = 0.0, 8.0
        best: tuple[Collection, float] | None = None
        for _ in range(12):
            mid = (lo + hi) / 2
            coll = self.collection(mid)
            diff = coll.truth(measure)
            if best is None or abs(diff - target) < abs(best[1] - target):
                best = (coll, diff)
            lo, hi = (mid, hi) if diff < target else (lo, mid)
        assert best is not None
        return best


def automatic(coll: Collection, kind: str, seed: int) -> dict[tuple[str, str], int]:
    """Automatic gains of every pool unit, labeled or not (a judge run over the whole pool;
    see the module docstring)."""
    rng = np.random.default_rng(10_000 + seed)
    qids = coll.qids()
    out = {}
    for q, u in np.ndindex(*coll.gains.shape):
        g = int(coll.gains[q, u])
        if kind == "adversarial":
            # Right where humans can check it, wrong on relevance everywhere else.
            if coll.hidden[q, u]:
                a = 0 if g >= PROTOCOL.relevance_threshold else 4
            else:
                a = g
        elif kind == "random":
            a = int(rng.integers(0, 5))
        else:
            share = int(kind.removeprefix("agree")) / 100
            a = g if rng.random() < share else int(rng.choice([x for x in range(5) if x != g]))
        out[(qids[q], f"d{u}")] = a
    return out


def setting_arrays(
    coll: Collection, pair: PairEvaluation, measures: list[str]
) -> dict[tuple[str, str], QueryArrays | None]:
    """Per (measure, predictor): the per-query arrays with every hidden unit answered."""
    rows_of, every = {}, {}
    u = pair.units
    unknown = u.unknown
    qids = pair.query_ids
    for q, unit, r in zip(
        u.query.tolist(), u.unit_ids(np.arange(u.query.size)), range(u.query.size), strict=True
    ):
        every[(qids[q], unit)] = r
        if unknown[r]:
            rows_of[(qids[q], unit)] = r
    truth = {key: int(coll.gains[int(key[0][1:]), int(key[1][1:])]) for key in rows_of}
    keys = sorted(rows_of)  # the skipped units must not depend on the hash seed
    rows = np.array([rows_of[k] for k in keys], dtype=np.int64)
    gains = np.array([truth[k] for k in keys], dtype=np.int64)
    empty = np.zeros(0, dtype=np.int64)
    out = {}
    for kind in PREDICTORS:
        answered = np.ones(rows.size, dtype=bool)
        if kind == "skips":
            answered = ~_skipped(gains)
        if kind in ("none", "skips"):
            a_rows, a_gains = empty, empty
        else:
            auto = automatic(coll, kind, 0)
            a_keys = [k for k in auto if k in every]
            a_rows = np.array([every[k] for k in a_keys], dtype=np.int64)
            a_gains = np.array([auto[k] for k in a_keys], dtype=np.int64)
        for m in measures:
            out[(m, kind)] = query_arrays(pair, m, rows[answered], gains[answered], a_rows, a_gains)
    return out


def _skipped(gains: np.ndarray) -> np.ndarray:
    """Which units an annotator would skip or mark "can't judge": not at random, the
    relevant ones (gain 2 or more) three times in ten, the others one time in twenty."""
    rng = np.random.default_rng(77)
    return rng.random(gains.size) < np.where(gains >= 2, 0.3, 0.05)


def _half(p: float, n: int) -> float:
    return 1.96 * math.sqrt(max(p * (1 - p), 1e-12) / n)


#: (measure, predictor, size) -> coverage, its simulation error, mean width, width over the
#: worst-case width, width over the width without automatic judgments.
CoverageRows = dict[tuple[str, str, int], tuple[float, float, float, float, float]]
#: (measure, target difference, predictor) -> labels to exclude 0 (None: never), queue labels.
LabelRows = dict[tuple[str, float, str], tuple[float | None, int | None]]


def coverage(args: argparse.Namespace) -> CoverageRows:
    gen = Generator(args.seed, args.queries, args.hidden)
    coll = gen.collection(1.0)
    known = ~coll.hidden
    pair = coll.pair(MEASURES, known)
    truth = {m: coll.truth(m) for m in MEASURES}
    arrays = setting_arrays(coll, pair, MEASURES)
    index = {q: i for i, q in enumerate(pair.query_ids)}
    scores = spread_scores(pair, MEASURES)
    designs = {
        size: [
            draw_for_pair(pair, name="s", run_a="A", run_b="B", size=size, seed=rep, scores=scores)
            for rep in range(args.reps)
        ]
        for size in SIZES
    }
    print(
        f"\n1. Coverage and width: {args.queries} queries, {int(coll.hidden.sum())} hidden "
        f"units in the top {TOP}s ({designs[SIZES[0]][0].n_unknown} unknown in the design's "
        f"population), {args.reps} samples per setting, 95% intervals"
    )
    print("   true differences A - B: " + ", ".join(f"{m} {truth[m]:+.3f}" for m in MEASURES))
    _check_end_to_end(coll, pair, scores)
    print(
        f"{'measure':<14} {'predictor':<12} {'size':>5} {'labels':>7} {'coverage':>15} "
        f"{'width':>7} {'/worst':>7} {'/none':>7}"
    )
    worst_cov = 1.0
    out: CoverageRows = {}
    for m in MEASURES:
        lower, upper, _, _ = pair.intervals(m)
        worst = float(upper.mean() - lower.mean())
        width_none: dict[int, float] = {}
        for kind in PREDICTORS:
            data = arrays[(m, kind)]
            if data is None:
                print(f"{m:<14} {kind:<12} not estimable (no bounds)")
                continue
            for size in SIZES:
                hits, widths, labels = 0, [], []
                for design in designs[size]:
                    est = stratified_difference(
                        stratified_input(design, design.draws, data, index), LEVEL
                    )
                    hits += est.lower - 1e-9 <= truth[m] <= est.upper + 1e-9
                    widths.append(est.upper - est.lower)
                    labels.append(sum(len(q.units) for q in design.sampled_queries()))
                cov = hits / args.reps
                worst_cov = min(worst_cov, cov)
                w = statistics.fmean(widths)
                if kind == "none":
                    width_none[size] = w
                rel = w / width_none[size] if width_none.get(size) else float("nan")
                ratio = w / worst if worst else float("nan")
                out[(m, kind, size)] = (cov, _half(cov, args.reps), w, ratio, rel)
                print(
                    f"{m:<14} {kind:<12} {size:>5} {statistics.fmean(labels):>7.1f} "
                    f"{cov:>8.3f} ±{_half(cov, args.reps):.3f} {w:>7.3f} "
                    f"{ratio:>7.2f} {rel:>7.2f}"
                )
    print(f"   lowest coverage of any setting: {worst_cov:.3f} (target >= {COVERAGE_TARGET})")
    return out


def _check_end_to_end(coll: Collection, pair: PairEvaluation, scores: dict[str, float]) -> None:
    """A few repetitions through estimate_pair equal the per-query shortcut."""
    qids = coll.qids()
    answers = {
        (qids[q], f"d{u}"): int(coll.gains[q, u])
        for q, u in zip(*np.nonzero(coll.hidden), strict=True)
    }
    auto = automatic(coll, "agree70", 0)
    arrays = setting_arrays(coll, pair, MEASURES)
    index = {q: i for i, q in enumerate(pair.query_ids)}
    for rep in range(3):
        design = draw_for_pair(pair, name="s", run_a="A", run_b="B", size=60, seed=rep)
        assert design == draw_for_pair(
            pair, name="s", run_a="A", run_b="B", size=60, seed=rep, scores=scores
        )
        sampled = {(x.query_id, x.unit_id) for x in design.sampled_units()}
        given = {k: v for k, v in answers.items() if k in sampled}
        for e in estimate_pair(pair, design, given, automatic=auto, automatic_name="agree70"):
            assert isinstance(e, Estimate)
            data = arrays[(e.measure, "agree70")]
            assert data is not None
            fast = stratified_difference(stratified_input(design, design.draws, data, index), LEVEL)
            assert abs(fast.lower - e.lower) < 1e-9 and abs(fast.upper - e.upper) < 1e-9, (
                e.measure,
                fast,
                e,
            )


def labels_to_exclude_zero(
    pair: PairEvaluation, data: QueryArrays, measure: str, reps: int, truth: float
) -> tuple[float | None, int]:
    """Median labels before the 95% interval first excludes 0 (None: it never does in
    most repetitions), and how many repetitions excluded it on the wrong side."""
    index = {q: i for i, q in enumerate(pair.query_ids)}
    scores = spread_scores(pair, [measure])
    needed: list[float] = []
    wrong = 0
    for rep in range(reps):
        design = grow(
            draw_for_pair(pair, name="s", run_a="A", run_b="B", size=0, seed=rep, scores=scores),
            10**9,
        )
        labels = 0
        found = math.inf
        for t, q in enumerate(design.queries, start=1):
            labels += len(q.units)
            est = stratified_difference(stratified_input(design, t, data, index), LEVEL)
            if est.lower > 0 or est.upper < 0:
                if (est.lower > 0) != (truth > 0):
                    wrong += 1
                found = labels
                break
        needed.append(found)
    middle = statistics.median(needed)
    return (None if middle == math.inf else middle), wrong


def queue_labels(coll: Collection, measure: str, step: int) -> int | None:
    """Labels the worst-case to-decide queue takes to decide (re-planned every ``step``)."""
    known = ~coll.hidden
    qids = coll.qids()
    taken = 0
    while True:
        pair = coll.pair([measure], known)
        d = decide_measure(pair, measure)
        if d.verdict in ("a_better", "b_better", "tied"):
            return taken
        queue = decide_queue(pair, measure, limit=step, estimate=False)
        if not queue.items:
            return None
        for item in queue.items:
            q = qids.index(item.query_id)
            known[q, int(item.unit_id[1:])] = True
            taken += 1


def targets(args: argparse.Namespace) -> LabelRows:
    print(
        f"\n2. Labels to exclude 0 (estimate, median of {args.reps // 2} samples, growing "
        "query by query) against labels to decide (worst-case queue)"
    )
    print(
        f"{'measure':<10} {'target':>6} {'true':>7} {'unknown':>8} {'predictor':<10} "
        f"{'estimate':>9} {'wrong':>6} {'queue':>6} {'ratio':>6}"
    )
    gen = Generator(args.seed + 1, args.queries, args.hidden)
    out: LabelRows = {}
    for m in args.target_measures:
        for target in (0.02, 0.05):
            coll, true = gen.for_target(m, target)
            pair = coll.pair([m], ~coll.hidden)
            arrays = setting_arrays(coll, pair, [m])
            unknown = int(coll.hidden.sum())
            queue = queue_labels(coll, m, max(5, unknown // 40))
            for kind in ("none", "agree90"):
                data = arrays[(m, kind)]
                assert data is not None
                found, wrong = labels_to_exclude_zero(pair, data, m, args.reps // 2, true)
                out[(m, target, kind)] = (found, queue)
                ratio = f"{found / queue:.2f}" if found is not None and queue else "—"
                print(
                    f"{m:<10} {target:>6.2f} {true:>+7.3f} {unknown:>8} {kind:<10} "
                    f"{'never' if found is None else f'{found:.0f}':>9} {wrong:>6} "
                    f"{'never' if queue is None else queue:>6} {ratio:>6}"
                )
    return out


def _verdict(ok: bool) -> str:
    return "met" if ok else "NOT met"


def verdicts(cov: CoverageRows, labels: LabelRows, reps: int) -> None:
    """Each target of the issue, met or not, from the two tables."""
    print("\n3. Targets")
    judged = [k for k in cov if k[1] != "skips"]
    low = min(judged, key=lambda k: cov[k][0])
    short = [k for k in judged if cov[k][0] < COVERAGE_TARGET]
    print(
        f"   coverage of every 95% interval >= {COVERAGE_TARGET} ({len(judged)} settings: "
        f"{len(MEASURES)} measures x {len(SIZES)} sizes x {len(PREDICTORS) - 1} predictors, "
        f"{reps} samples each): lowest {cov[low][0]:.3f} ±{cov[low][1]:.3f} "
        f"({low[0]}, {low[1]}, {low[2]} labels): {_verdict(not short)}"
    )
    for k in short:
        print(f"      below: {k[0]} {k[1]} {k[2]} labels {cov[k][0]:.3f} ±{cov[k][1]:.3f}")
    adv = [k for k in judged if k[1] == "adversarial"]
    worst_adv = min(adv, key=lambda k: cov[k][0])
    print(
        f"   coverage with adversarial judgments >= {COVERAGE_TARGET}: lowest "
        f"{cov[worst_adv][0]:.3f} ±{cov[worst_adv][1]:.3f}: "
        f"{_verdict(cov[worst_adv][0] >= COVERAGE_TARGET)}"
    )
    good = [k for k in cov if k[1] in GOOD]
    widest = max(good, key=lambda k: cov[k][4])
    wide = [k for k in good if cov[k][4] > NARROWER_TARGET]
    print(
        f"   judgments agreeing >= 80%: interval at least 30% narrower than without "
        f"(width / none <= {NARROWER_TARGET}) at every measure and size: widest "
        f"{cov[widest][4]:.2f} ({widest[0]}, {widest[1]}, {widest[2]} labels): "
        f"{_verdict(not wide)}"
    )
    for k in wide:
        print(f"      wider: {k[0]} {k[1]} {k[2]} labels width / none {cov[k][4]:.2f}")
    for target in (0.05, 0.02):
        for kind in ("none", "agree90"):
            parts, ok = [], True
            for m in ("P@10", "nDCG@10"):
                found, queue = labels.get((m, target, kind), (None, None))
                share = found / queue if found is not None and queue else math.inf
                ok &= share <= QUEUE_SHARE_TARGET
                parts.append(
                    f"{m} {'never' if found is None else f'{found:.0f}'} vs "
                    f"{'never' if queue is None else queue} ({share:.2f})"
                )
            if target == 0.05:
                head = f"<= {QUEUE_SHARE_TARGET:g} of the worst-case queue's"
                what = f": {_verdict(ok)}"
            else:
                head, what = "against the worst-case queue's", " (reported; no target)"
            print(
                f"   labels to exclude 0 at a true {target:.2f} ({kind}) {head}: "
                f"{'; '.join(parts)}{what}"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--hidden", type=float, default=0.4)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--quick", action="store_true", help="a small run for tests")
    parser.add_argument("--full", action="store_true", help="the issue's numbers: more samples")
    args = parser.parse_args()
    args.target_measures = ["P@10", "nDCG@10"]
    if args.quick:
        args.queries, args.reps = 40, 20
    if args.full:
        args.queries, args.reps = 200, 500
        args.target_measures = MEASURES
    start = time.perf_counter()
    cov = coverage(args)
    labels = targets(args)
    verdicts(cov, labels, args.reps)
    print(f"\n({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
