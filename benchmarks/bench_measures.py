"""Benchmark: the measure catalogue, in process, against pytrec_eval; and what bounds cost.

Workload (seeded): 10,000 queries, 100 returned documents each (scores on a
0.1 grid, so ties occur and are ordered as trec_eval orders them), every
returned document labeled (gains 0..4) plus 5 labels on documents never
returned (one of them relevant), population complete. The ``30% unlabeled``
variant leaves each returned document unlabeled with probability 0.3.

(1) Same measures, same run, trec_eval semantics (targets: >= 3x pytrec_eval):
    the 8 measures P@5, P@10, R@100, nDCG@10, nDCG@100, AP@100, RR@10 and
    Success@10. pytrec_eval computes ``P.5,10 recall.100 ndcg_cut.10,100
    map_cut.100 success.10`` on the run, and ``recip_rank`` on the run cut at
    10 (trec_eval's recip_rank has no cutoff; the cut run is made before
    timing). evalcore computes them with ``trec_eval=True``:

    * ``evalcore.evaluate(qrels, run, ...)``: the one call from the same dicts
      (validation, ranking, packing, every per-query object and the aggregates);
    * from a packed ``ObservationBatch``: arrays only (the metric computer), and
      the full report.

(2) Bounds cost (target: within 2x): every catalogue measure (the 8, plus
    Judged@10 and RBP(p=0.8)@10) under the default protocol, from a packed
    batch, on the fully judged workload and on the 30%-unlabeled one (where
    most measures of most queries are unavailable with bounds). Arrays only,
    and the full report.

(3) Aggregate intervals on the 30%-unlabeled workload: P@10, nDCG@10 and
    RR@10 are unavailable; the width of their aggregate bounds is printed.

Every time is the best of ``--repeat`` runs, each after a full collection.
Run: ``python3 benchmarks/bench_measures.py [--queries N] [--repeat R]``.
"""

from __future__ import annotations

import argparse
import random

import pytrec_eval
from bench_evalcore import best_of, trec_order  # run as a script: benchmarks/ is on the path

import evalcore
from evalcore.compute.batch import ObservationBatch
from evalcore.compute.evaluate import compute, evaluate_batch, packing_depth
from evalcore.contract.evaluation_protocol import EvalProtocol
from evalcore.contract.measures import parse_measure

RETURNED = 100
EXTRA_LABELS = 5
GAIN_WEIGHTS = [0.55, 0.2, 0.12, 0.08, 0.05]  # gains 0..4
EIGHT = ["P@5", "P@10", "R@100", "nDCG@10", "nDCG@100", "AP@100", "RR@10", "Success@10"]
EVERY = [*EIGHT, "Judged@10", "RBP(p=0.8)@10"]
PYTREC_MEASURES = {"P.5,10", "recall.100", "ndcg_cut.10,100", "map_cut.100", "success.10"}

Qrels = dict[str, dict[str, int]]
Run = dict[str, dict[str, float]]


def generate(n_queries: int, unlabeled_fraction: float, seed: int = 20261203) -> tuple[Qrels, Run]:
    """qrels and run dicts for the workload described in the module docstring."""
    rng = random.Random(seed)
    gains = [0, 1, 2, 3, 4]
    qrels: Qrels = {}
    runs: Run = {}
    for qi in range(n_queries):
        q = f"q{qi:05d}"
        docs = [f"doc{j:06d}" for j in rng.sample(range(1_000_000), RETURNED + EXTRA_LABELS)]
        returned, unreturned = docs[:RETURNED], docs[RETURNED:]
        runs[q] = {d: round(rng.uniform(0, 50), 1) for d in returned}
        drawn = rng.choices(gains, GAIN_WEIGHTS, k=RETURNED + EXTRA_LABELS)
        labels = {d: g for d, g in zip(returned, drawn, strict=False)
                  if rng.random() >= unlabeled_fraction}
        labels.update(zip(unreturned, drawn[RETURNED:], strict=True))
        labels[unreturned[-1]] = rng.randint(1, 4)  # every query has a relevant unit
        qrels[q] = labels
    return qrels, runs


def pack(qrels: Qrels, runs: Run, protocol: EvalProtocol, depth: int) -> ObservationBatch:
    queries = sorted(qrels)
    return ObservationBatch.from_gain_maps(
        queries,
        depth,
        [trec_order(runs[q]) for q in queries],
        [qrels[q] for q in queries],
        [True] * len(queries),
        protocol=protocol,
        min_depth=depth,
    )


def pytrec(qrels: Qrels, runs: Run, cut: Run) -> None:
    """The 8 measures with pytrec_eval: recip_rank on the run cut at 10 is RR@10."""
    pytrec_eval.RelevanceEvaluator(qrels, PYTREC_MEASURES).evaluate(runs)
    pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(cut)


def same_measures(qrels: Qrels, runs: Run, repeat: int) -> None:
    protocol = EvalProtocol(trec_eval=True)
    measures = [parse_measure(m) for m in EIGHT]
    batch = pack(qrels, runs, protocol, packing_depth(measures))
    n = len(qrels)
    cut = {q: {d: run[d] for d in trec_order(run)[:10]} for q, run in runs.items()}
    rows = {
        "pytrec_eval (dicts; RR@10 on the run cut at 10)": lambda: pytrec(qrels, runs, cut),
        "evalcore.evaluate(qrels, run, 8 measures, trec_eval=True)":
            lambda: evalcore.evaluate(qrels, runs, EIGHT, trec_eval=True),
        "evalcore batch -> arrays (the metric computer)":
            lambda: compute(batch, protocol, measures),
        "evalcore batch -> full report": lambda: evaluate_batch(batch, protocol, measures=measures),
    }
    times = {label: best_of(repeat, fn) for label, fn in rows.items()}
    base = next(iter(times.values()))
    print(f"\n(1) same 8 measures, same run, trec_eval semantics: {n:,} queries x {RETURNED}; "
          f"best of {repeat}")
    print(f"{'':<62} {'seconds':>8} {'queries/s':>10} {'vs pytrec_eval':>15}")
    for label, seconds in times.items():
        print(f"{label:<62} {seconds:>8.3f} {n / seconds:>10,.0f} {base / seconds:>14.2f}x")
    print(f"{'target: >= 3x pytrec_eval':<62}")


def bounds_cost(judged: tuple[Qrels, Run], unlabeled: tuple[Qrels, Run], repeat: int) -> None:
    protocol = EvalProtocol()
    measures = [parse_measure(m) for m in EVERY]
    depth = packing_depth(measures)
    batches = {"fully judged": pack(*judged, protocol, depth),
               "30% unlabeled": pack(*unlabeled, protocol, depth)}
    print(f"\n(2) bounds cost: {len(EVERY)} measures ({', '.join(EVERY)}), default protocol")
    print(f"{'':<40} {'fully judged':>13} {'30% unlabeled':>14} {'ratio':>7}")
    for label, fn in (
        ("batch -> arrays", lambda b: compute(b, protocol, measures)),
        ("batch -> full report", lambda b: evaluate_batch(b, protocol, measures=measures)),
    ):
        t = [best_of(repeat, lambda b=b, fn=fn: fn(b)) for b in batches.values()]
        print(f"{label:<40} {t[0]:>12.3f}s {t[1]:>13.3f}s {t[1] / t[0]:>6.2f}x")
    print(f"{'target: 30% unlabeled within 2x':<40}")
    report = evaluate_batch(batches["30% unlabeled"], protocol, measures=measures)
    print("\n(3) aggregate intervals on the 30%-unlabeled workload")
    for name in ("P@10", "nDCG@10", "RR@10", "AP@100", "RBP(p=0.8)@10"):
        agg = report.aggregates[name]
        if agg.available:
            print(f"  {name:<14} available: {agg.value:.4f}")
        elif agg.lower is None or agg.upper is None:
            print(f"  {name:<14} unavailable on {agg.n_missing:,} of {agg.n_queries:,}, no bounds")
        else:
            print(f"  {name:<14} unavailable on {agg.n_missing:,} of {agg.n_queries:,}: "
                  f"[{agg.lower:.4f}, {agg.upper:.4f}], width {agg.upper - agg.lower:.4f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    judged = generate(args.queries, 0.0)
    unlabeled = generate(args.queries, 0.3)
    same_measures(*judged, args.repeat)
    bounds_cost(judged, unlabeled, args.repeat)


if __name__ == "__main__":
    main()
