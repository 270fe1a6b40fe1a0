"""Decided comparisons without completeness claims (contract section 12, issue 29).

Generated collections (seeded, numpy): ``--queries`` queries, each with a pool of 40
units, the query's whole corpus, whose true gains (0..4) follow a latent quality. Run A
ranks the pool by quality plus noise and returns its top 20. Run B comes from one of
three generators:

* ``independent``: B ranks the pool by quality plus its own noise, scaled up;
* ``mostly-better``: B is A where, on some queries, A's best unit in its top 10 is
  swapped with the worst of its ranks 11-20 (A better there) and, on a fifth as many, A's
  worst top-10 unit with the best of ranks 11-20 (B better there);
* ``regressions``: as ``mostly-better`` with no query where B is better.

For each seed, measure and target difference (0.02 to 0.05), B's noise scale
(``independent``, by bisection) or the share of changed queries (the others) is set so
that the true mean difference A - B (every gain known, the population complete) is the
target. The evidence: both runs' top 10 labeled with the truth, ranks 11-20 unlabeled,
**no query marked complete**; U_out unbounded (no corpus size) or bounded (the corpus
size 40 known).

Prints, in one run:

1. per generator, measure and target: the share of seeds where the comparison is decided
   (and how many verdicts contradict the truth: must be 0);
2. the mean-difference interval width on open populations against the same evidence with
   every query declared complete (the price of not claiming completeness), with the top
   10s fully labeled and with half of their units labeled;
3. the to-decide queue's "about N labels": the queue is followed (re-planned after every
   label, the truth revealed) until the verdict settles; at the start and every
   ``--every`` labels the estimate of the labels still needed is compared with the labels
   it took from there: how often it under- and over-estimates, against the estimate it
   replaced (the fewest head labels whose worst-case removals reach the gap).

Run: ``python3 benchmarks/bench_open_populations.py [--seeds 10] [--queries 200]``.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from evalcore.analysis.decision import ZERO, decide_measure, evaluate_pair
from evalcore.analysis.decision_queue import decide_queue
from evalcore.compute.batch import ObservationBatch
from evalcore.compute.evaluate import compute
from evalcore.contract.evaluation_protocol import EvalProtocol
from evalcore.contract.measures import Measure, parse_measure

POOL, DEPTH, TOP = 40, 20, 10
PROTOCOL = EvalProtocol()
MEASURES = ["nDCG@10", "R@10", "AP@10"]
TARGETS = [0.02, 0.03, 0.04, 0.05]
GENERATORS = ["independent", "mostly-better", "regressions"]
SETTLED = ("a_better", "b_better", "tied")


@dataclass
class Collection:
    """Truth and both runs' rankings (unit indices into the pool) of ``n`` queries."""

    gains: np.ndarray  # int[n, POOL]
    run_a: np.ndarray  # int[n, DEPTH]
    run_b: np.ndarray  # int[n, DEPTH]

    @property
    def n(self) -> int:
        return self.gains.shape[0]

    def batches(self, labeled: Callable[[int], list[int]], measures: list[Measure], *,
                complete: bool = False, corpus: int | None = None
                ) -> tuple[ObservationBatch, ObservationBatch]:
        """Both runs' batches with the units ``labeled(q)`` labeled with their true gain."""
        qids = [f"q{i:04d}" for i in range(self.n)]
        ids = [[f"d{u}" for u in labeled(q)] for q in range(self.n)]
        gains = [[int(self.gains[q, u]) for u in labeled(q)] for q in range(self.n)]
        depth = max(m.k or 0 for m in measures)
        out = []
        for run in (self.run_a, self.run_b):
            batch = ObservationBatch.from_gain_maps(
                qids, DEPTH, [[f"d{u}" for u in row] for row in run],
                [dict(zip(i, g, strict=True)) for i, g in zip(ids, gains, strict=True)],
                [complete] * self.n, protocol=PROTOCOL, min_depth=depth)
            out.append(batch if corpus is None else batch.with_corpus_size(corpus))
        return out[0], out[1]

    def tops(self, q: int) -> list[int]:
        return list(dict.fromkeys([*self.run_a[q, :TOP].tolist(), *self.run_b[q, :TOP].tolist()]))

    def true_values(self, measure: Measure, run: np.ndarray) -> np.ndarray:
        everything = list(range(POOL))
        qids = [f"q{i:04d}" for i in range(self.n)]
        batch = ObservationBatch.from_gain_maps(
            qids, DEPTH, [[f"d{u}" for u in row] for row in run],
            [dict(zip([f"d{u}" for u in everything], self.gains[q].tolist(), strict=True))
             for q in range(self.n)], [True] * self.n, protocol=PROTOCOL,
            min_depth=measure.k or 0)
        result = compute(batch, PROTOCOL, [measure])
        return np.nan_to_num(result.values(measure.canonical), nan=0.0)  # |R| = 0: 0 for both


class Generator:
    """One seed's draws; :meth:`collection` builds a collection for a target difference."""

    def __init__(self, seed: int, n: int) -> None:
        rng = np.random.default_rng(seed)
        quality = rng.normal(size=(n, POOL))
        self.gains = np.clip(np.rint(quality * 1.3 - 0.6), 0, 4).astype(np.int64)
        self.quality = quality
        self.noise_b = rng.normal(size=(n, POOL))
        self.change = rng.random(n)
        self.direction = rng.random(n)
        self.run_a = np.argsort(-(quality + rng.normal(size=(n, POOL))), axis=1)[:, :DEPTH]

    def independent(self, scale: float) -> Collection:
        run_b = np.argsort(-(self.quality + scale * self.noise_b), axis=1)[:, :DEPTH]
        return Collection(self.gains, self.run_a, run_b)

    def changed(self, better_share: float) -> np.ndarray:
        """B on every query changed: A worse (a fifth of ``better_share``...) or better."""
        run_b = self.run_a.copy()
        for q in range(self.run_a.shape[0]):
            g = self.gains[q, self.run_a[q]]
            top, rest = np.arange(TOP), np.arange(TOP, DEPTH)
            if self.direction[q] < better_share:  # B better: its worst top unit out
                i, j = top[np.argmin(g[:TOP])], rest[np.argmax(g[TOP:])]
            else:  # A better: B drops A's best top unit below rank 10
                i, j = top[np.argmax(g[:TOP])], rest[np.argmin(g[TOP:])]
            run_b[q, i], run_b[q, j] = run_b[q, j], run_b[q, i]
        return run_b

    def collection(self, kind: str, measure: Measure, target: float
                   ) -> tuple[Collection, float, float]:
        """The collection whose true mean difference of ``measure`` is closest to ``target``
        (that difference, and the share of queries where B is truly better)."""
        truth_a = Collection(self.gains, self.run_a, self.run_a).true_values(measure, self.run_a)
        if kind == "independent":
            lo, hi = 1.0, 12.0
            best = None
            for _ in range(14):
                mid = (lo + hi) / 2
                coll = self.independent(mid)
                d = truth_a - coll.true_values(measure, coll.run_b)
                diff = float(d.mean())
                if best is None or abs(diff - target) < abs(best[1] - target):
                    best = (coll, diff, float((d < -ZERO).mean()))
                lo, hi = (mid, hi) if diff < target else (lo, mid)
            assert best is not None
            return best
        changed = self.changed(0.0 if kind == "regressions" else 1 / 6)
        full = Collection(self.gains, self.run_a, changed)
        d = truth_a - full.true_values(measure, changed)
        order = np.argsort(self.change)
        means = np.cumsum(d[order]) / d.size
        count = int(np.argmin(np.abs(means - target))) + 1
        chosen = np.zeros(d.size, dtype=bool)
        chosen[order[:count]] = True
        run_b = np.where(chosen[:, None], changed, self.run_a)
        return (Collection(self.gains, self.run_a, run_b), float(means[count - 1]),
                float((chosen & (d < -ZERO)).mean()))


def decisions(seeds: int, n: int) -> dict[tuple[str, str, float], list[tuple]]:
    """(generator, measure, target) -> per seed (verdict unbounded, verdict corpus 40, true
    difference, share of queries where B is truly better)."""
    out: dict[tuple[str, str, float], list[tuple]] = {}
    for seed in range(seeds):
        gen = Generator(seed, n)
        for kind in GENERATORS:
            for name in MEASURES:
                m = parse_measure(name)
                for target in TARGETS:
                    coll, truth, b_better = gen.collection(kind, m, target)
                    verdicts = []
                    for corpus in (None, POOL):
                        pair = evaluate_pair(*coll.batches(coll.tops, [m], corpus=corpus), [m],
                                             PROTOCOL)
                        verdicts.append(decide_measure(pair, name).verdict)
                    out.setdefault((kind, name, target), []).append(
                        (*verdicts, truth, b_better))
    return out


def print_decisions(found: dict, seeds: int) -> None:
    print("1. decided on open populations: both top 10s labeled, no query complete; share of "
          f"{seeds} seeds decided 'A better' (U_out unbounded / corpus size known), "
          "contradicted by the truth\n")
    print(f"{'generator':<14} {'measure':<8} " + "  ".join(
        f"{'diff ' + format(t, '.2f'):>17}" for t in TARGETS)
        + "   contradicted   B truly better on (at 0.05)")
    for kind in GENERATORS:
        for name in MEASURES:
            cells, wrong = [], 0
            for target in TARGETS:
                rows = found[(kind, name, target)]
                dec = [sum(v[i] in ("a_better", "b_better") for v in rows) for i in (0, 1)]
                wrong += sum((v[i] == "b_better" and v[2] > 0) or (v[i] == "a_better" and v[2] < 0)
                             for v in rows for i in (0, 1))
                cells.append(f"{dec[0] / len(rows):>7.0%} / {dec[1] / len(rows):>6.0%}")
            share = statistics.mean(v[3] for v in found[(kind, name, TARGETS[-1])])
            print(f"{kind:<14} {name:<8} " + "  ".join(f"{c:>17}" for c in cells)
                  + f"   {wrong:>12}   {share:.0%} of queries")
    true_diffs = [v[2] for rows in found.values() for v in rows]
    print(f"(true differences reached: {min(true_diffs):+.4f} to {max(true_diffs):+.4f}; with "
          "the top 10s labeled these intervals are exact, so no sound method decides more: "
          "the mean's lower end is the mean over queries of each one's worst case, an A-win "
          "shrunk by the largest relevant set and a B-win at the smallest)")


def widths(seed: int, n: int) -> None:
    print("\n2. mean-difference interval width, open population vs the same evidence with every "
          "query declared complete (independent generator, target 0.05, seed "
          f"{seed})\n")
    print(f"{'measure':<8} {'top 10s labeled':<16} {'open, unbounded':>16} {'open, corpus 40':>16} "
          f"{'complete':>9}")
    gen = Generator(seed, n)
    rng = np.random.default_rng(seed + 1000)
    for name in MEASURES:
        m = parse_measure(name)
        coll, _, _ = gen.collection("independent", m, 0.05)
        half = {q: [u for u in coll.tops(q) if rng.random() < 0.5] for q in range(coll.n)}
        for label, labeled in (("all", coll.tops), ("half", half.__getitem__)):
            cells = []
            for corpus, complete in ((None, False), (POOL, False), (None, True)):
                pair = evaluate_pair(*coll.batches(labeled, [m], complete=complete,
                                                   corpus=corpus), [m], PROTOCOL)
                d = decide_measure(pair, name)
                cells.append("undecidable" if d.lower is None else f"{d.upper - d.lower:.4f}")
            print(f"{name:<8} {label:<16} {cells[0]:>16} {cells[1]:>16} {cells[2]:>9}")


def _old_estimate(pair, name: str) -> int | None:
    """The estimate the queue gave before: the fewest head labels whose worst-case removals
    reach the distance from 0 to the nearer end of the mean interval."""
    lower, upper, _, _ = pair.intervals(name)
    lo, hi = float(lower.mean()), float(upper.mean())
    if lo > ZERO or hi < -ZERO:
        return 0
    removes = [i.removes for i in decide_queue(pair, name, limit=None, estimate=False).items]
    reached = np.flatnonzero(np.cumsum(removes) >= min(-lo, hi) - ZERO)
    return int(reached[0]) + 1 if reached.size else None


#: The calibration workload: B's noise scale in the independent generator (A truly better
#: by ~0.1 in nDCG@10), half of both top 10s labeled, every query declared complete.
CALIBRATION_SCALE = 2.0


def calibration(seeds: int, n: int, every: int, measures: list[str]) -> None:
    print(f"\n3. 'about N labels' against the labels the queue took ({n} queries, half of "
          "both top 10s labeled, every query complete, independent generator with B's noise "
          f"x{CALIBRATION_SCALE}; the queue re-planned after every label; estimates at the "
          f"start and every {every} labels)\n")
    print(f"{'measure':<9} {'points':>6} {'new: under':>10} {'over':>5} {'exact':>6} "
          f"{'median est/actual':>18}   {'was: under':>10} {'over':>5} {'never':>6}   "
          "start: estimate / was / took")
    for name in measures:
        m = parse_measure(name)
        points: list[tuple[int | None, int | None, int | None]] = []  # (new, old, actual)
        starts = []
        for seed in range(seeds):
            coll = Generator(200 + seed, n).independent(CALIBRATION_SCALE)
            rng = np.random.default_rng(seed)
            labeled = {q: {u for u in coll.tops(q) if rng.random() < 0.5} for q in range(coll.n)}
            seen: list[tuple[int, int | None, int | None]] = []
            step, took = 0, None
            cap = sum(len(coll.tops(q)) for q in range(coll.n))
            while step <= cap:
                pair = evaluate_pair(*coll.batches(lambda q, seen=labeled: sorted(seen[q]), [m],
                                                   complete=True), [m], PROTOCOL)
                if decide_measure(pair, name).verdict in SETTLED:
                    took = step
                    break
                check = step % every == 0
                queue = decide_queue(pair, name, limit=1, estimate=check)
                if check:
                    seen.append((step, queue.labels_to_decide, _old_estimate(pair, name)))
                if not queue.items:
                    break
                item = queue.items[0]
                labeled[int(item.query_id[1:])].add(int(item.unit_id[1:]))
                step += 1
            for at, new, old in seen:
                points.append((new, old, None if took is None else took - at))
            starts.append((seen[0][1] if seen else None, seen[0][2] if seen else None, took))
        _print_calibration(name, points, starts)
    print("under: the estimate was below the labels it took from there; over: above; never: "
          "the estimate said it could not decide (or did not settle) while the queue did")


def _print_calibration(name: str, points, starts) -> None:
    def counts(i: int) -> tuple[int, int, int, int, list[float]]:
        under = over = exact = never = 0
        ratios = []
        for p in points:
            est, actual = p[i], p[2]
            if actual is None or est is None:
                never += (est is None) != (actual is None)
                exact += (est is None) and (actual is None)
                continue
            under += est < actual
            over += est > actual
            exact += est == actual
            ratios.append(est / actual if actual else 1.0)
        return under, over, exact, never, ratios

    u, o, e, nv, ratios = counts(0)
    ou, oo, _, onv, _ = counts(1)
    med = f"{statistics.median(ratios):.2f}" if ratios else "-"
    start = ", ".join(f"{s[0]}/{s[1]}/{s[2]}" for s in starts)
    print(f"{name:<9} {len(points):>6} {u:>10} {o:>5} {e:>6} {med:>18}   {ou:>10} {oo:>5} "
          f"{onv:>6}   {start}   (new never/None: {nv})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--calibration-seeds", type=int, default=3)
    parser.add_argument("--calibration-queries", type=int, default=100)
    parser.add_argument("--every", type=int, default=25)
    parser.add_argument("--skip-calibration", action="store_true")
    args = parser.parse_args()
    t0 = time.process_time()
    print_decisions(decisions(args.seeds, args.queries), args.seeds)
    widths(0, args.queries)
    if not args.skip_calibration:
        calibration(args.calibration_seeds, args.calibration_queries, args.every,
                    ["P@10", "RR@10", "nDCG@10", "R@10", "AP@10"])
    print(f"\n({time.process_time() - t0:.0f} s CPU)")


if __name__ == "__main__":
    main()
