"""How wide the aggregate bounds are, and what they cost, on a partially judged workload.

Workload (seeded): ``--queries`` queries, 100 returned documents each, k = 10,
each top-10 document unlabeled with probability ``--unlabeled`` (default 0.3),
plus 5 labels deeper in the run and 5 on documents never returned (gains 0..4
weighted towards 0), population complete. Prints, per measure, on how many
queries it is unavailable and the aggregate interval [lower, upper] with its
width; then the time of 8 measures (P@5, P@10, R@100, nDCG@10, nDCG@100,
AP@100, RR@10, Success@10) on the fully judged and the partially judged
variant (best of 3, packed batch -> arrays, and observations -> report).

Run: ``python3 benchmarks/bench_bounds_width.py [--queries N] [--unlabeled F]``.
"""

from __future__ import annotations

import argparse
import random
import time

from evalcore.compute.batch import ObservationBatch
from evalcore.compute.evaluate import compute, evaluate, packing_depth
from evalcore.contract.measures import parse_measure
from evalcore.contract.observation import Label, Observation

GAIN_WEIGHTS = [0.40, 0.25, 0.15, 0.12, 0.08]
WIDTH_MEASURES = ["P@10", "nDCG@10", "RR@10", "R@10", "AP@10", "Success@10", "RBP(p=0.8)@10"]
COST_MEASURES = ["P@5", "P@10", "R@100", "nDCG@10", "nDCG@100", "AP@100", "RR@10", "Success@10"]


def workload(n: int, unlabeled: float, seed: int = 7) -> list[Observation]:
    rng = random.Random(seed)
    out = []
    for qi in range(n):
        docs = [f"d{j}" for j in rng.sample(range(1000), 100)]
        labels: dict[str, int] = {}
        for d in docs[:10]:
            if rng.random() >= unlabeled:
                labels[d] = rng.choices(range(5), GAIN_WEIGHTS)[0]
        deeper = rng.sample(docs[10:], 5) + [f"x{j}" for j in rng.sample(range(1000, 2000), 5)]
        for d in deeper:
            labels[d] = rng.choices(range(5), GAIN_WEIGHTS)[0]
        out.append(Observation(
            query_id=f"q{qi}", k=10, returned_ids=docs,
            labels=[Label(id=d, gain=g) for d, g in labels.items()], population_complete=True,
        ))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--unlabeled", type=float, default=0.3)
    parser.add_argument("--cost-queries", type=int, default=10_000)
    args = parser.parse_args()
    measures = [parse_measure(m) for m in WIDTH_MEASURES]
    report = evaluate(workload(args.queries, args.unlabeled), measures=measures)
    print(f"{args.queries} queries, {args.unlabeled:.0%} of each top 10 unlabeled, complete")
    for name in WIDTH_MEASURES:
        a = report.aggregates[name]
        if a.available:
            print(f"  {name:14s} available: {a.value:.3f}")
        elif a.lower is None or a.upper is None:
            print(f"  {name:14s} unavailable on {a.n_missing}/{a.n_queries}, no bounds")
        else:
            print(f"  {name:14s} unavailable on {a.n_missing}/{a.n_queries}: "
                  f"[{a.lower:.3f}, {a.upper:.3f}] width {a.upper - a.lower:.3f}")
    cost = [parse_measure(m) for m in COST_MEASURES]
    print(f"cost: {args.cost_queries} queries x 100, {len(cost)} measures, best of 3")
    for fraction in (0.0, args.unlabeled):
        obs = workload(args.cost_queries, fraction)
        batch = ObservationBatch.from_observations(obs, min_depth=packing_depth(cost))
        arrays = report_time = float("inf")
        for _ in range(3):
            t = time.perf_counter()
            compute(batch, measures=cost)
            arrays = min(arrays, time.perf_counter() - t)
            t = time.perf_counter()
            evaluate(obs, measures=cost)
            report_time = min(report_time, time.perf_counter() - t)
        print(f"  {fraction:.0%} unlabeled in top 10: batch -> arrays {arrays:.3f} s, "
              f"observations -> report {report_time:.3f} s")


if __name__ == "__main__":
    main()
