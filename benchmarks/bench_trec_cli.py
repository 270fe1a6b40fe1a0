"""TREC reading and ``evalcore evaluate`` end to end, against a pytrec_eval script.

    python benchmarks/bench_trec_cli.py [--queries 10000] [--depth 100] [--judged 20] [--repeat 3]

Writes a synthetic run (queries x depth lines, scores with ties, rows in
random order within each query) and qrels (queries x judged lines) to a
temporary directory, then prints:

* in-process phases: read_run, read_qrels (whole files as Python objects) and
  files_input (the same reader, files to packed batch), median of --repeat;
* whole processes: ``evalcore evaluate --qrels --run --k 10`` and a
  pytrec_eval script that parses the same files and evaluates P@10, nDCG@10,
  recall@10 and recip_rank, printing JSON (median wall and CPU seconds).

CPU seconds (user + sys of the child) are printed beside wall seconds because
wall time on a shared machine measures the neighbours too.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PYTREC_SCRIPT = """
import json, sys, pytrec_eval
with open(sys.argv[1]) as f: qrels = pytrec_eval.parse_qrel(f)
with open(sys.argv[2]) as f: run = pytrec_eval.parse_run(f)
ev = pytrec_eval.RelevanceEvaluator(qrels, {"P_10", "ndcg_cut_10", "recall_10", "recip_rank"})
json.dump(ev.evaluate(run), sys.stdout)
"""


def write_files(folder: Path, queries: int, depth: int, judged: int, seed: int = 7) -> tuple[Path, Path]:
    rng = random.Random(seed)
    run, qrels = folder / "run.txt", folder / "qrels.txt"
    with run.open("w") as f:
        for q in range(queries):
            docs = rng.sample(range(5_000_000), depth)
            for r, d in enumerate(docs, start=1):
                f.write(f"q{q} Q0 D{d} {r} {rng.randrange(10_000) / 1000} bench\n")
    with qrels.open("w") as f:
        for q in range(queries):
            for d in rng.sample(range(5_000_000), judged):
                f.write(f"q{q} 0 D{d} {rng.randint(0, 3)}\n")
    return qrels, run


def child_seconds(args: list[str]) -> tuple[float, float]:
    """(wall, cpu) seconds of one child process, stdout discarded."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(args, stdout=subprocess.DEVNULL, check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--queries", type=int, default=10_000)
    ap.add_argument("--depth", type=int, default=100)
    ap.add_argument("--judged", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=3)
    opts = ap.parse_args()

    from evalcore.cli.process_setup import collector_paused as gc_paused
    from evalcore.contract.evaluation_protocol import EvalProtocol
    from evalcore.io.trec import files_input, read_qrels, read_run

    with tempfile.TemporaryDirectory() as tmp:
        qrels, run = write_files(Path(tmp), opts.queries, opts.depth, opts.judged)
        n_run = opts.queries * opts.depth
        print(f"run lines: {n_run:,}  qrels lines: {opts.queries * opts.judged:,}")
        phases: dict[str, list[float]] = {"read_run": [], "read_qrels": [], "files_input": []}
        for _ in range(opts.repeat):
            with gc_paused():
                t0 = time.process_time()
                r = read_run(run)
                t1 = time.process_time()
                q = read_qrels(qrels)
                t2 = time.process_time()
                files_input(qrels, run, 10, complete=True, protocol=EvalProtocol())
                t3 = time.process_time()
            phases["read_run"].append(t1 - t0)
            phases["read_qrels"].append(t2 - t1)
            phases["files_input"].append(t3 - t2)
            del r, q
        for name, values in phases.items():
            print(f"{name:>19}: {statistics.median(values):.3f} s CPU (median of {opts.repeat})")
        print(f"tied score pairs in the run: {read_run(run).tied_score_pairs:,}")

        script = Path(tmp) / "pytrec_script.py"
        script.write_text(PYTREC_SCRIPT)
        commands = {
            "evalcore evaluate": [
                sys.executable, "-m", "evalcore", "evaluate",
                "--qrels", str(qrels), "--run", str(run), "--k", "10",
            ],
            "pytrec_eval script": [sys.executable, str(script), str(qrels), str(run)],
        }
        results: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
        for _ in range(opts.repeat):
            for name, args in commands.items():  # alternate, so both see the same load
                results[name].append(child_seconds(args))
        for name, values in results.items():
            wall = statistics.median(v[0] for v in values)
            cpu = statistics.median(v[1] for v in values)
            print(f"{name:>20}: {wall:.2f} s wall, {cpu:.2f} s CPU (median of {opts.repeat})")
        print(f"load average: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
