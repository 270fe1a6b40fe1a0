"""Decided comparisons: how much narrower the pair bounds are, how many labels each
judging order needs to decide, and what a verdict costs.

Workload (seeded, hidden complete truth): ``--queries`` queries, each with a
pool of 40 documents whose true gain (0..4) follows a latent quality. Run A
ranks the pool by quality plus noise, run B by quality plus slightly more
noise (A is truly better by a small margin); both return their top 20, so
they overlap heavily. Every document of the union of the two top 20s is
labeled with its true gain with probability 1 - ``--unlabeled`` (default 0.5),
plus 5 labeled pool documents neither run returned; population complete.

Prints:

1. per measure, the mean-difference interval from the pair bounds against the
   naive ``lower_A - upper_B`` one, and how much narrower it is;
2. the judging simulation: labels (revealed from the truth, one at a time)
   until the comparison is decided, for the decision-targeted queue, the
   blocking order (:mod:`evalcore.annotation.blocking`, recomputed after
   every label) and a random order (mean over ``--seeds`` seeds);
3. the time of the verdict for 2 runs x ``--big`` queries x 8 measures from
   packed batches, and **from a store** (target: < 1 s): the same workload
   imported into a temporary store with the store's own import functions
   (``import_run`` for each run file, ``import_qrels`` with ``--complete``),
   then :func:`evalcore.analysis.decision.decide`, the call the CLI and the
   app make, timed whole (reading both runs and the labels from SQLite,
   packing, computing, deciding); best of 3, each from a fresh connection.

Run: ``python3 benchmarks/bench_decision.py [--queries 200] [--unlabeled 0.5]``.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from evalcore.analysis.decision import decide, decide_measure, evaluate_pair
from evalcore.analysis.decision_queue import candidate_rows, decide_queue
from evalcore.annotation.blocking_table import RunBlocking, blocking_table
from evalcore.compute.batch import ObservationBatch
from evalcore.compute.evaluate import packing_depth
from evalcore.contract.evaluation_protocol import EvalProtocol
from evalcore.contract.measures import Measure, parse_measure
from evalcore.store.connection import open_store
from evalcore.store.imports import import_qrels, import_run
from evalcore.store.studies import StudyIn
from evalcore.store.study_handle import open_study
from evalcore.store.study_setup import create_study

INTERVAL_MEASURES = ["P@10", "P@20", "RBP(p=0.8)@20", "RR@10", "Success@5", "nDCG@10",
                     "nDCG@20", "R@20", "AP@20"]
SIM_MEASURES = ["P@10", "nDCG@10", "RR@10"]
TIMING_MEASURES = ["P@5", "P@10", "R@20", "nDCG@10", "nDCG@20", "AP@20", "RR@10", "Success@10"]
PROTOCOL = EvalProtocol()
DECIDED = ("a_better", "b_better", "tied")


class Workload:
    """Two runs over ``n`` queries with a hidden truth and a partial set of labels."""

    def __init__(self, n: int, unlabeled: float, seed: int = 11, margin: float = 0.15) -> None:
        rng = random.Random(seed)
        self.qids = [f"q{i:05d}" for i in range(n)]
        self.truth: list[dict[str, int]] = []
        self.run_a: list[list[str]] = []
        self.run_b: list[list[str]] = []
        self.labels: list[dict[str, int]] = []
        for _ in range(n):
            pool = [f"d{j}" for j in rng.sample(range(5000), 40)]
            quality = {d: rng.gauss(0, 1) for d in pool}
            truth = {d: max(0, min(4, int(round(quality[d] * 1.3 - 0.6)))) for d in pool}
            a = sorted(pool, key=lambda d: -(quality[d] + rng.gauss(0, 1.0)))[:20]
            b = sorted(pool, key=lambda d: -(quality[d] + rng.gauss(0, 1.0 + margin * 4)))[:20]
            labels = {d: truth[d] for d in dict.fromkeys(a + b) if rng.random() >= unlabeled}
            for d in rng.sample([d for d in pool if d not in a and d not in b] or pool, 5):
                labels[d] = truth[d]
            self.truth.append(truth)
            self.run_a.append(a)
            self.run_b.append(b)
            self.labels.append(labels)

    def batches(self, measures: list[Measure]) -> tuple[ObservationBatch, ObservationBatch]:
        depth = packing_depth(measures)
        return tuple(  # type: ignore[return-value]
            ObservationBatch.from_gain_maps(
                self.qids, 20, run, self.labels, [True] * len(self.qids), protocol=PROTOCOL,
                min_depth=depth,
            )
            for run in (self.run_a, self.run_b)
        )

    def write_store(self, folder: Path) -> Path:
        """The workload as a study in a new store at ``folder``, through the import functions."""
        path = folder / "store.db"
        db = open_store(path)
        create_study(db, StudyIn(study_id="bench", corpus_id="bench"))
        for name, run in (("A", self.run_a), ("B", self.run_b)):
            lines = [f"{q} Q0 {d} {r} {100 - r} {name}\n"
                     for q, docs in zip(self.qids, run, strict=True)
                     for r, d in enumerate(docs, 1)]
            (folder / f"{name}.run").write_text("".join(lines))
            import_run(db, folder / f"{name}.run", study_id="bench", k=20, name=name,
                       allow_unknown_ids=True)
        qrels = [f"{q} 0 {d} {g}\n" for q, lab in zip(self.qids, self.labels, strict=True)
                 for d, g in lab.items()]
        (folder / "labels.qrels").write_text("".join(qrels))
        import_qrels(db, folder / "labels.qrels", study_id="bench", complete=True,
                     allow_unknown_ids=True)
        db.conn.close()
        return path

    def reveal(self, q: int, unit: str) -> None:
        self.labels[q][unit] = self.truth[q][unit]

    def copy(self) -> Workload:
        other = object.__new__(Workload)
        other.qids, other.truth, other.run_a, other.run_b = (
            self.qids, self.truth, self.run_a, self.run_b)
        other.labels = [dict(lab) for lab in self.labels]
        return other


def intervals(work: Workload) -> None:
    measures = [parse_measure(m) for m in INTERVAL_MEASURES]
    pair = evaluate_pair(*work.batches(measures), measures, PROTOCOL)
    print(f"{'measure':<15} {'verdict':<18} {'pair interval':<22} {'naive interval':<22} "
          f"narrower by")
    for name in pair.measures:
        d = decide_measure(pair, name)
        if d.lower is None or d.upper is None or d.naive_lower is None or d.naive_upper is None:
            print(f"{name:<15} {d.summary}")
            continue
        width = d.upper - d.lower
        naive = d.naive_upper - d.naive_lower
        print(f"{name:<15} {d.verdict_text:<18} [{d.lower:+.4f}, {d.upper:+.4f}]   "
              f"[{d.naive_lower:+.4f}, {d.naive_upper:+.4f}]   "
              f"{(1 - width / naive) * 100 if naive else 0:5.1f}% (width {width:.4f} vs "
              f"{naive:.4f})")


def _verdict(work: Workload, measure: Measure):
    pair = evaluate_pair(*work.batches([measure]), [measure], PROTOCOL)
    return pair, decide_measure(pair, measure.canonical)


def labels_decision_order(work: Workload, measure: Measure, cap: int) -> int | None:
    work = work.copy()
    for step in range(cap + 1):
        pair, d = _verdict(work, measure)
        if d.verdict in DECIDED:
            return step
        queue = decide_queue(pair, measure.canonical, limit=1)
        if not queue.items:
            return None
        item = queue.items[0]
        work.reveal(work.qids.index(item.query_id), item.unit_id)
    return None


def labels_blocking_order(work: Workload, measure: Measure, cap: int) -> int | None:
    work = work.copy()
    for step in range(cap + 1):
        pair, d = _verdict(work, measure)
        if d.verdict in DECIDED:
            return step
        positions = np.arange(len(work.qids), dtype=np.int64)
        runs = {"A": RunBlocking(pair.result_a, positions), "B": RunBlocking(pair.result_b, positions)}
        head = blocking_table(["A", "B"], runs, work.qids).page(0, 1)
        if not head:
            return None
        work.reveal(work.qids.index(head[0].query_id), head[0].unit_id)
    return None


def labels_random_order(work: Workload, measure: Measure, seed: int) -> int | None:
    """Random order over the unknown units in the runs' cuts; labels are only ever added,
    so the verdict, once decided, stays decided: binary search over the prefix length."""
    pair, _ = _verdict(work, measure)
    rows = candidate_rows(pair, measure.canonical)
    units = [(int(pair.units.query[r]), pair.units.unit_id(r)) for r in rows.tolist()]
    random.Random(seed).shuffle(units)

    def decided(m: int) -> bool:
        w = work.copy()
        for q, unit in units[:m]:
            w.reveal(q, unit)
        return _verdict(w, measure)[1].verdict in DECIDED

    if not decided(len(units)):
        return None
    lo, hi = 0, len(units)
    while lo < hi:
        mid = (lo + hi) // 2
        if decided(mid):
            hi = mid
        else:
            lo = mid + 1
    return lo


def simulation(work: Workload, seeds: int) -> None:
    print(f"\n{'measure':<9} {'truth':<8} {'unknown':>7} {'decision':>9} {'blocking':>9} "
          f"{'random':>16}  decision/blocking")
    for text in SIM_MEASURES:
        measure = parse_measure(text)
        pair, d = _verdict(work, measure)
        truth = work.copy()
        for q, truth_q in enumerate(truth.truth):
            for unit in dict.fromkeys(truth.run_a[q] + truth.run_b[q]):
                truth.labels[q][unit] = truth_q[unit]
        full = _verdict(truth, measure)[1]
        n_unknown = int(candidate_rows(pair, measure.canonical).size)
        cap = n_unknown
        t0 = time.perf_counter()
        dec = labels_decision_order(work, measure, cap)
        t_dec = time.perf_counter() - t0
        blk = labels_blocking_order(work, measure, cap)
        rnd = [labels_random_order(work, measure, s) for s in range(seeds)]
        rnd_ok = [r for r in rnd if r is not None]
        rnd_text = (f"{statistics.mean(rnd_ok):.1f} (+-{statistics.pstdev(rnd_ok):.1f})"
                    if rnd_ok else "never")
        ratio = f"{dec / blk:.2f}" if dec is not None and blk else "-"
        print(f"{text:<9} {full.lower:+.4f} {n_unknown:>7} {dec!s:>9} {blk!s:>9} "
              f"{rnd_text:>16}  {ratio}   (decision order: {t_dec:.1f} s)")
    print("truth: the mean difference A - B with every label known; unknown: unknown units "
          "in either run's cut at the start; numbers: labels until decided")


def _rounded(d) -> tuple:
    return d.verdict, None if d.lower is None else round(d.lower, 9), (
        None if d.upper is None else round(d.upper, 9))


def timing(n: int) -> None:
    work = Workload(n, 0.5, seed=3)
    measures = [parse_measure(m) for m in TIMING_MEASURES]
    ba, bb = work.batches(measures)
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        pair = evaluate_pair(ba, bb, measures, PROTOCOL)
        decisions = [decide_measure(pair, name) for name in pair.measures]
        best = min(best, time.perf_counter() - t0)
    print(f"\nverdict, 2 runs x {n} queries x {len(measures)} measures from packed batches: "
          f"{best:.3f} s (best of 3); verdicts: "
          + ", ".join(f"{d.measure} {d.verdict}" for d in decisions))
    with tempfile.TemporaryDirectory() as tmp:
        path = work.write_store(Path(tmp))
        best_store = float("inf")
        for _ in range(3):
            db = open_store(path)
            t0 = time.perf_counter()
            stored = decide(open_study(db, "bench", None), "A", "B", TIMING_MEASURES)
            best_store = min(best_store, time.perf_counter() - t0)
            db.conn.close()
    same = [_rounded(d) for d in stored] == [_rounded(d) for d in decisions]
    print(f"verdict, 2 runs x {n} queries x {len(measures)} measures from the store "
          f"(decide(db, ...), whole call): {best_store:.3f} s (best of 3)   target: < 1 s   "
          f"{'same verdicts and intervals as from batches' if same else 'DIFFERENT from batches'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--unlabeled", type=float, default=0.5)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--big", type=int, default=10_000)
    parser.add_argument("--skip-simulation", action="store_true")
    args = parser.parse_args()
    work = Workload(args.queries, args.unlabeled)
    print(f"workload: {args.queries} queries x 2 runs x top 20, {args.unlabeled:.0%} of returned "
          "units unlabeled, runs overlap, A truly better by a small margin\n")
    intervals(work)
    if not args.skip_simulation:
        simulation(work, args.seeds)
    timing(args.big)


if __name__ == "__main__":
    main()
