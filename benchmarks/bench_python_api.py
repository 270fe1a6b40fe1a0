"""The Python API in process, side by side with pytrec_eval, ir_measures and ranx in one run.

Workload (seeded): 10,000 queries x 100 scored documents (scores on a grid of
0.001, so some ties), graded qrels (gains 0..3) judging about 70% of the
returned documents plus 20 documents per query never returned (so ~30% of
what is measured is unjudged). Four measures: P@10, nDCG@10, R@100 and RR@100
(pytrec_eval ``P_10 ndcg_cut_10 recall_100 recip_rank``; the same in
ir_measures and ranx).

Every variant is timed from the inputs in memory to the aggregates a user reads:

* ``pytrec_eval``: ``RelevanceEvaluator(qrels, measures)`` built and ``evaluate(run)``
  (the anchor: every ratio is to it);
* ``evalcore dicts``: ``evalcore.evaluate(qrels, run, measures)`` from the nested dicts,
  honest (the default: unjudged documents are unknown, values unavailable with bounds)
  and ``trec_eval=True``; ``.aggregates`` read;
* ``evalcore DataFrames`` / ``pyarrow Tables``: the same from columns
  ``query_id, doc_id, relevance`` / ``query_id, doc_id, score``;
* ``evalcore prepared``: ``evalcore.Qrels(qrels)`` built once (its time printed apart),
  then ``qrels.evaluate(run, measures)`` per run -- the loop over many runs;
* ``ir_measures``: ``ir_measures.calc_aggregate``; ``ranx``: ``Qrels``, ``Run`` and
  ``evaluate`` (its numba functions compiled by one untimed call first).

A peer that is not installed is skipped with the reason printed (they are benchmark
tools, never evalcore's dependencies: ``pip install ir_measures ranx``). Each figure is
the median of ``--repeat`` rounds; in each round every variant runs once, in turn, so a
busy machine slows them alike. The cyclic garbage collector is left on, as a notebook
user has it (``--gc paused`` pauses it around each call, as the ``evalcore`` command does).

Targets (issue "speed where researchers wait"): dicts at most 1.0x pytrec_eval;
DataFrames and prepared qrels at most 1/3x. Each is judged on wall time and on CPU time
(this process's; on a shared machine wall time also counts the waits for a core).

Memory that grows with what is measured: ``--memory`` adds the peak traced allocation
(``tracemalloc``: Python objects and numpy arrays) of one prepared-qrels evaluation for
measures reading the top 10 positions only and for measures reading every position
(``R@depth``, ``RR@depth``), on the same run.

Run: ``python benchmarks/bench_python_api.py [--queries N] [--depth D] [--repeat R]``.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import statistics
import time
from collections.abc import Callable, Iterator

import numpy as np

import evalcore

MEASURES = ["P@10", "nDCG@10", "R@100", "RR@100"]
PYTREC = {"P_10", "ndcg_cut_10", "recall_100", "recip_rank"}


def generate(n_queries: int, depth: int, seed: int = 20261206) -> tuple[dict, dict]:
    """(qrels, run) as nested dicts (see the module docstring)."""
    rng = np.random.default_rng(seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(n_queries):
        qid = f"q{q}"
        docs = [f"d{x}" for x in rng.choice(5_000_000, depth + 20, replace=False).tolist()]
        scores = np.round(rng.random(depth) * 100, 3).tolist()
        run[qid] = dict(zip(docs[:depth], scores, strict=True))
        judged = [*(rng.random(depth) >= 0.3).tolist(), *[True] * 20]
        gains = rng.integers(0, 4, depth + 20).tolist()
        qrels[qid] = {d: g for d, g, j in zip(docs, gains, judged, strict=True) if j}
    return qrels, run


def frames(qrels: dict, run: dict) -> tuple:
    import pandas as pd

    def frame(mapping: dict, column: str) -> pd.DataFrame:
        return pd.DataFrame(
            {
                "query_id": [q for q, docs in mapping.items() for _ in docs],
                "doc_id": [d for docs in mapping.values() for d in docs],
                column: [v for docs in mapping.values() for v in docs.values()],
            }
        )

    return frame(qrels, "relevance"), frame(run, "score")


@contextlib.contextmanager
def gc_mode(paused: bool) -> Iterator[None]:
    was = gc.isenabled()
    if paused:
        gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def variants(qrels: dict, run: dict, notes: list[str]) -> dict[str, Callable[[], object]]:
    """Name -> a call from the inputs in memory to aggregates (peers skipped with a reason)."""
    out: dict[str, Callable[[], object]] = {}
    try:
        import pytrec_eval

        out["pytrec_eval (build + evaluate)"] = lambda: pytrec_eval.RelevanceEvaluator(
            qrels, PYTREC
        ).evaluate(run)
    except ImportError as exc:
        notes.append(f"pytrec_eval skipped: {exc}")
    out["evalcore dicts, honest"] = lambda: (
        evalcore.evaluate(qrels, run, measures=MEASURES).aggregates
    )
    out["evalcore dicts, trec_eval=True"] = lambda: (
        evalcore.evaluate(qrels, run, measures=MEASURES, trec_eval=True).aggregates
    )
    try:
        qframe, rframe = frames(qrels, run)
        out["evalcore DataFrames, honest"] = lambda: (
            evalcore.evaluate(qframe, rframe, measures=MEASURES).aggregates
        )
        try:
            import pyarrow as pa

            qtable, rtable = pa.Table.from_pandas(qframe), pa.Table.from_pandas(rframe)
            out["evalcore pyarrow Tables, honest"] = lambda: (
                evalcore.evaluate(qtable, rtable, measures=MEASURES).aggregates
            )
        except ImportError as exc:
            notes.append(f"pyarrow Tables skipped: {exc}")
    except ImportError as exc:
        notes.append(f"DataFrames skipped: {exc}")
    t = time.perf_counter()
    prepared = evalcore.Qrels(qrels)
    notes.append(f"evalcore.Qrels(qrels) prepared once in {time.perf_counter() - t:.3f} s")
    out["evalcore prepared Qrels, honest"] = lambda: (
        prepared.evaluate(run, measures=MEASURES).aggregates
    )
    out["evalcore prepared Qrels, trec_eval=True"] = lambda: (
        prepared.evaluate(run, measures=MEASURES, trec_eval=True).aggregates
    )
    try:
        import ir_measures
        from ir_measures import RR, P, R, nDCG

        chosen = [P @ 10, nDCG @ 10, R @ 100, RR]
        out["ir_measures calc_aggregate"] = lambda: ir_measures.calc_aggregate(chosen, qrels, run)
    except ImportError as exc:
        notes.append(f"ir_measures skipped: {exc}")
    try:
        import ranx

        metrics = ["precision@10", "ndcg@10", "recall@100", "mrr"]
        ranx.evaluate(ranx.Qrels({"q": {"d": 1}}), ranx.Run({"q": {"d": 1.0}}), metrics)  # jit

        def with_ranx() -> object:
            return ranx.evaluate(ranx.Qrels(qrels), ranx.Run(run), metrics)

        out["ranx (Qrels + Run + evaluate)"] = with_ranx
    except ImportError as exc:
        notes.append(f"ranx skipped: {exc}")
    return out


TARGETS = {
    "evalcore dicts, honest": 1.0,
    "evalcore dicts, trec_eval=True": 1.0,
    "evalcore DataFrames, honest": 1 / 3,
    "evalcore pyarrow Tables, honest": 1 / 3,
    "evalcore prepared Qrels, honest": 1 / 3,
    "evalcore prepared Qrels, trec_eval=True": 1 / 3,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--gc", choices=["on", "paused"], default="on")
    parser.add_argument("--memory", action="store_true", help="add peak traced memory")
    args = parser.parse_args()

    qrels, run = generate(args.queries, args.depth)
    notes: list[str] = []
    calls = variants(qrels, run, notes)
    for call in calls.values():  # warm: imports, first-use caches
        call()
    times: dict[str, list[float]] = {name: [] for name in calls}
    cpu: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(args.repeat):
        for name, call in calls.items():
            gc.collect()
            with gc_mode(args.gc == "paused"):
                t, c = time.perf_counter(), time.process_time()
                call()
                times[name].append(time.perf_counter() - t)
                cpu[name].append(time.process_time() - c)
    medians = {name: statistics.median(ts) for name, ts in times.items()}
    cpu_medians = {name: statistics.median(ts) for name, ts in cpu.items()}
    anchor = medians.get("pytrec_eval (build + evaluate)")
    cpu_anchor = cpu_medians.get("pytrec_eval (build + evaluate)")
    print(
        f"{args.queries} queries x {args.depth} docs, graded qrels, ~30% of the returned "
        f"unjudged; measures {', '.join(MEASURES)}; median of {args.repeat}; gc {args.gc}"
    )
    print(
        f"{'':<44} {'wall s':>7} {'vs pytrec':>10} {'CPU s':>7} {'vs pytrec':>10} "
        f"{'target':>8} {'met (wall)':>10} {'met (CPU)':>9}"
    )
    for name, seconds in medians.items():
        ratio = seconds / anchor if anchor else float("nan")
        cpu_ratio = cpu_medians[name] / cpu_anchor if cpu_anchor else float("nan")
        target = TARGETS.get(name)
        shown = "" if target is None else f"<={target:.2f}x"
        met = "" if target is None or not anchor else ("yes" if ratio <= target else "NO")
        cpu_met = (
            "" if target is None or not cpu_anchor else ("yes" if cpu_ratio <= target else "NO")
        )
        print(
            f"{name:<44} {seconds:>7.3f} {ratio:>9.2f}x {cpu_medians[name]:>7.3f} "
            f"{cpu_ratio:>9.2f}x {shown:>8} {met:>10} {cpu_met:>9}"
        )
    print("(CPU: this process's CPU time, less disturbed than wall time on a shared machine)")
    for note in notes:
        print(f"note: {note}")
    if args.memory:
        memory(qrels, run, args.depth)


def memory(qrels: dict, run: dict, depth: int) -> None:
    """Peak traced allocation of one prepared-qrels evaluation per measure set."""
    import tracemalloc

    prepared = evalcore.Qrels(qrels)
    deep = ["P@10", "nDCG@10", f"R@{depth}", f"RR@{depth}"]
    sets = {"P@10, nDCG@10": ["P@10", "nDCG@10"], ", ".join(deep): deep}
    for label, measures in sets.items():
        _ = prepared.evaluate(run, measures=measures).aggregates
        gc.collect()
        tracemalloc.start()
        _ = prepared.evaluate(run, measures=measures).aggregates
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        print(f"memory: prepared Qrels, measures {label}: peak {peak / 2**20:.1f} MiB traced")


if __name__ == "__main__":
    main()
