"""Benchmark: evalcore's metric computer against pytrec_eval (trec_eval) on one workload.

Workload (seeded): 10,000 queries, 100 returned documents each (scores on a
coarse grid, so ties occur and are ordered as trec_eval orders them), about 20
graded labels per query (gains 0..4), cutoff k = 10, population complete.
Two variants:

* ``fully judged``: every document in the top 10 is labeled, plus ~10 more
  labels (some on deeper results, some on documents never returned);
* ``30% unlabeled``: the same, but each top-10 document is unlabeled with
  probability 0.3 (so ~30% of the measured returned documents have no label
  and most queries have blocked metrics, bounds and blocking IDs).

(a) In-process, from already-parsed data, best of ``--repeat`` runs:
    evalcore from ``list[Observation]`` (full report, and arrays only), from a
    packed ``ObservationBatch`` (arrays only, and full report); pytrec_eval
    ``RelevanceEvaluator`` construction + ``evaluate`` on dicts (P_10,
    recall_10, ndcg_cut_10, recip_rank, on the full 100-document run).
(b) Whole process from TREC files in a temp dir: ``evalcore evaluate`` with
    and without the trec_eval compatibility flags, and a Python script that
    parses the same files with ``pytrec_eval.parse_qrel`` / ``parse_run``,
    evaluates and writes JSON. Wall time and peak RSS of each subprocess
    (``/usr/bin/time``). Stdout of each goes to a file in the temp dir.

The garbage collector: evalcore's library never touches it (it is the
process owner's). The ``evalcore`` command pauses the cyclic collector around
every command, and so does this benchmark around each timed in-process call
(``--gc paused``, the default), because the calls build hundreds of thousands of
small objects with no cycles and the collector's full scans would otherwise
dominate. ``--gc on`` times the calls as a notebook user who leaves the
collector on gets them.

Run: ``python3 benchmarks/bench_evalcore.py [--queries N] [--repeat R] [--gc paused|on]``.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pytrec_eval

from evalcore.cli.process_setup import collector_paused as gc_paused
from evalcore.compute.batch import ObservationBatch
from evalcore.compute.evaluate import compute, evaluate, evaluate_batch
from evalcore.contract.evaluation_protocol import EvalProtocol
from evalcore.contract.observation import Label, Observation

K = 10
RETURNED = 100
LABELS = 20
GAIN_WEIGHTS = [0.40, 0.25, 0.15, 0.12, 0.08]  # gains 0..4
MEASURES = {f"P.{K}", f"recall.{K}", f"ndcg_cut.{K}", "recip_rank"}

Workload = tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]


def trec_order(run: dict[str, float]) -> list[str]:
    """trec_eval's ranking: score descending, ties by doc ID descending."""
    return [d for d, _ in sorted(run.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)]


def generate(n_queries: int, unlabeled_fraction: float, seed: int = 20261202) -> Workload:
    """qrels and run dicts for the workload described in the module docstring."""
    rng = random.Random(seed)
    gains = [0, 1, 2, 3, 4]
    qrels: dict[str, dict[str, int]] = {}
    runs: dict[str, dict[str, float]] = {}
    for qi in range(n_queries):
        q = f"q{qi:05d}"
        docs = [f"doc{j:06d}" for j in rng.sample(range(1_000_000), RETURNED + LABELS)]
        returned, unreturned = docs[:RETURNED], docs[RETURNED:]
        run = {d: round(rng.uniform(0, 50), 1) for d in returned}  # 0.1 grid: ties
        top = trec_order(run)[:K]
        labels: dict[str, int] = {}
        for d in top:
            if rng.random() >= unlabeled_fraction:
                labels[d] = rng.choices(gains, GAIN_WEIGHTS)[0]
        deeper = rng.sample(trec_order(run)[K:], 5)
        for d in deeper + unreturned[: LABELS - K - 5]:
            labels[d] = rng.choices(gains, GAIN_WEIGHTS)[0]
        labels[unreturned[-1]] = rng.randint(1, 4)  # every query has a relevant unit
        qrels[q] = labels
        runs[q] = run
    return qrels, runs


def to_observations(work: Workload) -> list[Observation]:
    qrels, runs = work
    return [
        Observation(
            query_id=q,
            k=K,
            returned_ids=trec_order(runs[q]),
            scores=sorted(runs[q].values(), reverse=True),
            labels=[Label(id=d, gain=g) for d, g in qrels[q].items()],
            population_complete=True,
        )
        for q in qrels
    ]


#: Pause the cyclic collector around each timed call (``--gc paused``), as the CLI does.
PAUSE_GC = True


def best_of(repeat: int, fn: Callable[[], object]) -> float:
    """Best wall time of ``repeat`` calls, each started after a full collection, with the
    collector paused unless ``--gc on`` (freeing the result is inside the timing)."""
    times = []
    for _ in range(repeat):
        gc.collect()
        with gc_paused() if PAUSE_GC else contextlib.nullcontext():
            t = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t)
    return min(times)


def in_process(name: str, work: Workload, repeat: int) -> None:
    qrels, runs = work
    observations = to_observations(work)
    batch = ObservationBatch.from_observations(observations)
    n = len(observations)
    deep = [o.model_copy(update={"k": RETURNED}) for o in observations]
    report = evaluate(observations)
    avail = sum(q.metrics["precision"].available for q in report.queries)
    print(f"\n== {name}: {n} queries x {RETURNED} returned, k={K}; precision available on {avail}")
    rows = [
        ("evalcore evaluate(list[Observation]) -> report", lambda: evaluate(observations)),
        (
            "evalcore list[Observation] -> arrays",
            lambda: compute(ObservationBatch.from_observations(observations)),
        ),
        (
            "evalcore pack only (from_observations)",
            lambda: ObservationBatch.from_observations(observations),
        ),
        (
            f"evalcore pack only, k={RETURNED} (every position measured)",
            lambda: ObservationBatch.from_observations(deep),
        ),
        ("evalcore ObservationBatch -> arrays", lambda: compute(batch)),
        ("evalcore ObservationBatch -> report", lambda: evaluate_batch(batch)),
        (
            "evalcore compat policy, list[Observation] -> report",
            lambda: evaluate(observations, EvalProtocol(unjudged_as_nonrelevant=True)),
        ),
        (
            "pytrec_eval RelevanceEvaluator + evaluate (dicts)",
            lambda: pytrec_eval.RelevanceEvaluator(qrels, MEASURES).evaluate(runs),
        ),
    ]
    results = {}
    for label, fn in rows:
        results[label] = best_of(repeat, fn)
    base = results["pytrec_eval RelevanceEvaluator + evaluate (dicts)"]
    print(
        f"{'(a) in-process, best of ' + str(repeat):<54} {'seconds':>8} {'queries/s':>11} {'vs pytrec':>9}"
    )
    for label, seconds in results.items():
        print(f"{label:<54} {seconds:>8.3f} {n / seconds:>11,.0f} {base / seconds:>8.2f}x")


def write_trec(work: Workload, directory: Path) -> tuple[Path, Path]:
    qrels, runs = work
    qrels_path, run_path = directory / "qrels.txt", directory / "run.txt"
    with qrels_path.open("w") as f:
        for q, labels in qrels.items():
            f.writelines(f"{q} 0 {d} {g}\n" for d, g in labels.items())
    with run_path.open("w") as f:
        for q, run in runs.items():
            f.writelines(
                f"{q} Q0 {d} {i} {run[d]} bench\n" for i, d in enumerate(trec_order(run), start=1)
            )
    return qrels_path, run_path


PYTREC_SCRIPT = """
import json, sys, pytrec_eval
with open(sys.argv[1]) as f:
    qrels = pytrec_eval.parse_qrel(f)
with open(sys.argv[2]) as f:
    run = pytrec_eval.parse_run(f)
k = sys.argv[3]
measures = {"P." + k, "recall." + k, "ndcg_cut." + k, "recip_rank"}
json.dump(pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run), sys.stdout)
"""


def timed_process(argv: list[str], stdout_path: Path) -> tuple[float, float, int]:
    """(wall seconds, peak RSS MiB, exit status) of one subprocess.

    Peak RSS comes from ``/usr/bin/time`` (a small process forks the command):
    Linux carries a parent's high-water RSS across fork + exec, so measuring a
    child of this large benchmark process directly would report our own size.
    """
    time_file = stdout_path.with_suffix(".time")
    timer = ["/usr/bin/time", "-f", "%M", "-o", str(time_file)]
    if not Path(timer[0]).exists():
        timer = []
    with stdout_path.open("wb") as out:
        t = time.perf_counter()
        proc = subprocess.run([*timer, *argv], stdout=out, stderr=subprocess.PIPE, check=False)
        wall = time.perf_counter() - t
    if proc.returncode != 0:
        print(f"   ! exit {proc.returncode}: {proc.stderr.decode(errors='replace').strip()[:300]}")
    rss_kib = float("nan")
    if timer:
        lines = time_file.read_text().split()
        rss_kib = float(lines[-1]) if lines else float("nan")
    return wall, rss_kib / 1024, proc.returncode


def whole_process(name: str, work: Workload, repeat: int) -> None:
    evalcore_cli = shutil.which("evalcore")
    with tempfile.TemporaryDirectory(prefix="bench_evalcore_") as tmp:
        d = Path(tmp)
        qrels_path, run_path = write_trec(work, d)
        script = d / "pytrec_eval_files.py"
        script.write_text(PYTREC_SCRIPT)
        base = [str(evalcore_cli)] if evalcore_cli else [sys.executable, "-m", "evalcore"]
        common = [
            *base,
            "evaluate",
            "--qrels",
            str(qrels_path),
            "--run",
            str(run_path),
            "--k",
            str(K),
        ]
        rows = [
            (
                "evalcore evaluate --complete --unjudged-as-nonrelevant",
                [*common, "--complete", "--unjudged-as-nonrelevant"],
            ),
            ("evalcore evaluate (no compat flags)", common),
            (
                "pytrec_eval: parse files + evaluate + json",
                [sys.executable, str(script), str(qrels_path), str(run_path), str(K)],
            ),
        ]
        size = run_path.stat().st_size / 2**20
        print(
            f"(b) whole process, TREC files (run {size:.0f} MiB), best of {repeat}: seconds, peak RSS"
        )
        for label, argv in rows:
            best = (float("inf"), 0.0, 0)
            for _ in range(repeat):
                wall, rss, status = timed_process(argv, d / "out.json")
                best = min(best, (wall, rss, status))
            wall, rss, status = best
            failed = "" if status == 0 else f"  (exit status {status})"
            print(f"{label:<54} {wall:>8.3f} {rss:>9.0f} MiB{failed}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--skip-files", action="store_true", help="only the in-process part")
    parser.add_argument("--gc", choices=["paused", "on"], default="paused",
                        help="the cyclic collector during the in-process timings")
    args = parser.parse_args()
    global PAUSE_GC
    PAUSE_GC = args.gc == "paused"
    print(f"in-process timings with the cyclic garbage collector {args.gc}")
    for name, fraction in (("fully judged", 0.0), ("30% unlabeled", 0.3)):
        work = generate(args.queries, fraction)
        in_process(name, work, args.repeat)
        if not args.skip_files:
            whole_process(name, work, args.repeat)


if __name__ == "__main__":
    main()
