"""Whole-process evaluation from TREC files: ``evalcore evaluate`` beside trec_eval.

    python3 benchmarks/bench_trec_files.py [--repeat 3] [--skip-large]

Workload (issue 16), generated on the fly in a temporary directory:

* **main**: 10,000 queries x 100 returned = 1,000,000 run lines; qrels judge
  every returned document and 8 unretrieved ones per query = 1,080,000 lines
  (gains 0..3, most 0). Measures P@10, nDCG@10, R@10, RR:
  ``evalcore evaluate --k 10 --complete --unjudged-as-nonrelevant`` and
  ``trec_eval -c -q -m P.10 -m ndcg_cut.10 -m recall.10 -m recip_rank``, run
  alternately ``--repeat`` times; medians of wall time and peak RSS, each
  child's own (``os.wait4``).
* **large**: 100,000 queries x 1,000 returned = 100,000,000 run lines (~3 GB),
  qrels judging the top 10 and 2 unretrieved documents per query; evalcore
  only: it must complete with a peak RSS under 4 GiB; its time is reported.
  It is killed past ``--rss-cap-mb`` (default 6 GiB) so the machine survives.

* **deep runs** (``--deep``, on by default): 10,000 queries x 100 and x 1,000 returned,
  graded qrels judging 70% of the top 100 of each ranking (so ~30% of what the
  measures read is unjudged) and 8 unretrieved documents per query; measures
  P@10, nDCG@10, R@100 and RR@100 (trec_eval ``-c -q -m P.10 -m ndcg_cut.10 -m
  recall.100 -m recip_rank``). Three commands, run alternately: ``evalcore
  evaluate --trec-eval`` (the numbers trec_eval prints), ``evalcore evaluate`` with
  the honest default (unjudged documents unknown: values unavailable with bounds)
  and trec_eval C.

Targets: evalcore at most 1/3 of trec_eval's wall time and at most 1.5x its
peak RSS (main); completes under 4 GiB (large); deep runs: ``--trec-eval`` at most
0.5x trec_eval's wall time and 1.5x its peak RSS at both depths, and the honest
default at most 1.15x the ``--trec-eval`` time. trec_eval is built from
``../shared/tools/trec_eval-src.tar.gz`` (:mod:`trec_eval_anchor`); when it
cannot be built the benchmark says why and still measures evalcore.
Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
from pathlib import Path

import trec_eval_anchor
from trec_eval_anchor import ROOT, ChildCost, measure, trec_eval_binary

GAIN_PATTERNS = 64
#: What the evaluate command imports before it reads a byte (the floor of its wall time).
#: (JSON from TREC files: written from the arrays, evalcore.api.report_text; no pydantic.)
STARTUP = [sys.executable, "-c", "import evalcore.cli.evaluate, evalcore.api.report_text"]
#: The floor's parts: what each library on the path costs on its own to import, and the
#: environment it is imported with (the command line starts numpy's BLAS with one thread:
#: evalcore.cli.process_setup; numpy's default, one OpenBLAS thread per core, for comparison).
STARTUP_PARTS = {
    "python": ("pass", {}),
    "numpy, one BLAS thread (as evalcore starts it)": (
        "import numpy",
        {"OPENBLAS_NUM_THREADS": "1"},
    ),
    "numpy, OpenBLAS's default threads": ("import numpy", {}),
    "contract models (pydantic)": ("import evalcore.contract.results", {}),
    "pydantic": ("import pydantic", {}),
    "click": ("import click", {}),
}


def write_workload(
    folder: Path,
    *,
    queries: int,
    depth: int,
    judged_returned: int,
    unretrieved: int,
    seed: int = 16,
    skip_every: int = 0,
) -> tuple[Path, Path, int, int]:
    """Write run and qrels files; return their paths and line counts. The first
    ``judged_returned`` ranks are judged, except every ``skip_every``-th of a query's
    pattern (0: none skipped) left unjudged."""
    rng = random.Random(seed)
    # Rank r's doc is D<q>x<r>: a line is a per-query prefix + a per-rank suffix.
    rests = [f"{r} {r} {depth - r}.{r % 7} bench\n" for r in range(1, depth + 1)]
    run_lines = 0
    run = folder / "run.txt"
    with run.open("w") as f:
        for q in range(queries):
            prefix = f"q{q} Q0 D{q}x"
            f.write(prefix + prefix.join(rests))
            run_lines += depth
    patterns = [rng.choices((0, 0, 0, 1, 2, 3), k=judged_returned) for _ in range(GAIN_PATTERNS)]
    skips = [
        {r for r in range(1, judged_returned + 1) if skip_every and rng.random() < 0.3}
        for _ in range(GAIN_PATTERNS)
    ]
    qrels_lines = 0
    qrels = folder / "qrels.txt"
    with qrels.open("w") as f:
        for q in range(queries):
            pattern = rng.randrange(GAIN_PATTERNS)
            gains, skipped = patterns[pattern], skips[pattern]
            lines = [
                f"q{q} 0 D{q}x{r} {g}\n" for r, g in enumerate(gains, start=1) if r not in skipped
            ]
            lines += [f"q{q} 0 D{q}y{j} {1 + j % 3}\n" for j in range(unretrieved)]
            f.write("".join(lines))
            qrels_lines += len(lines)
    return qrels, run, run_lines, qrels_lines


def evalcore_argv(qrels: Path, run: Path) -> list[str]:
    return [
        sys.executable,
        "-m",
        "evalcore",
        "evaluate",
        "--qrels",
        str(qrels),
        "--run",
        str(run),
        "--k",
        "10",
        "--complete",
        "--unjudged-as-nonrelevant",
    ]


def trec_eval_argv(binary: Path, qrels: Path, run: Path) -> list[str]:
    return [
        str(binary),
        "-c",
        "-q",
        "-m",
        "P.10",
        "-m",
        "ndcg_cut.10",
        "-m",
        "recall.10",
        "-m",
        "recip_rank",
        str(qrels),
        str(run),
    ]


DEEP_MEASURES = ["P@10", "nDCG@10", "R@100", "RR@100"]


def deep_evalcore_argv(qrels: Path, run: Path, *, trec_eval: bool) -> list[str]:
    argv = [sys.executable, "-m", "evalcore", "evaluate", "--qrels", str(qrels), "--run", str(run)]
    for m in DEEP_MEASURES:
        argv += ["-m", m]
    return argv + (["--trec-eval", "--trec-eval-all-queries"] if trec_eval else [])


def deep_trec_eval_argv(binary: Path, qrels: Path, run: Path) -> list[str]:
    return [
        str(binary),
        "-c",
        "-q",
        "-m",
        "P.10",
        "-m",
        "ndcg_cut.10",
        "-m",
        "recall.100",
        "-m",
        "recip_rank",
        str(qrels),
        str(run),
    ]


def deep_runs(folder: Path, binary: Path | None, env: dict[str, str], repeat: int) -> None:
    """The deep-run figures (module docstring), side by side, at 100 and 1,000 per query."""
    for depth in (100, 1_000):
        qrels, run, n_run, n_qrels = write_workload(
            folder, queries=10_000, depth=depth, judged_returned=100, unretrieved=8, skip_every=1
        )
        print(
            f"deep runs, 10,000 x {depth:,}: {n_run:,} run lines, {n_qrels:,} qrels lines "
            f"(graded, ~30% of the top 100 unjudged; {', '.join(DEEP_MEASURES)})"
        )
        costs: dict[str, list[ChildCost]] = {"compat": [], "honest": [], "trec_eval": []}
        # one untimed run of each first: evalcore's modules compiled to their bytecode cache
        # (as an installed package has them), both programs and files in the page cache
        measure(deep_evalcore_argv(qrels, run, trec_eval=True), env=env)
        measure(deep_evalcore_argv(qrels, run, trec_eval=False), env=env)
        if binary is not None:
            measure(deep_trec_eval_argv(binary, qrels, run))
        for _ in range(repeat):
            costs["compat"].append(measure(deep_evalcore_argv(qrels, run, trec_eval=True), env=env))
            costs["honest"].append(
                measure(deep_evalcore_argv(qrels, run, trec_eval=False), env=env)
            )
            if binary is not None:
                costs["trec_eval"].append(measure(deep_trec_eval_argv(binary, qrels, run)))
        compat, honest = median_cost(costs["compat"]), median_cost(costs["honest"])
        print(f"  evalcore evaluate --trec-eval: {compat} (median of {repeat})")
        print(f"  evalcore evaluate (honest default): {honest}")
        print(f"  honest / --trec-eval wall: {honest.wall_s / compat.wall_s:.2f}  [target <= 1.15]")
        if costs["trec_eval"]:
            anchor = median_cost(costs["trec_eval"])
            print(f"  trec_eval: {anchor}")
            print(
                f"  --trec-eval / trec_eval: wall {compat.wall_s / anchor.wall_s:.2f} "
                f"[target <= 0.5], CPU {compat.cpu_s / anchor.cpu_s:.2f}, peak RSS "
                f"{compat.peak_rss_mb / anchor.peak_rss_mb:.2f} [target <= 1.5]"
            )
            print(
                f"  honest / trec_eval: wall {honest.wall_s / anchor.wall_s:.2f}, peak RSS "
                f"{honest.peak_rss_mb / anchor.peak_rss_mb:.2f}"
            )
        for path in (qrels, run):
            path.unlink()


def median_cost(costs: list[ChildCost]) -> ChildCost:
    return ChildCost(
        wall_s=statistics.median(c.wall_s for c in costs),
        cpu_s=statistics.median(c.cpu_s for c in costs),
        peak_rss_mb=statistics.median(c.peak_rss_mb for c in costs),
        returncode=max(c.returncode for c in costs),
    )


def load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--skip-large", action="store_true", help="skip the 100,000 x 1,000 run (writes ~3.6 GB)"
    )
    parser.add_argument(
        "--only-deep",
        action="store_true",
        help="only the deep-run figures (10,000 x 100 and x 1,000)",
    )
    parser.add_argument(
        "--rss-cap-mb",
        type=float,
        default=6144,
        help="kill the large evaluation past this resident memory (shared machines)",
    )
    args = parser.parse_args()
    # evalcore runs as a user's installation runs it: with its bytecode cache (a machine
    # that sets PYTHONDONTWRITEBYTECODE would have every run compile it from source)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(ROOT)
    print(f"load average before: {load()} ({os.cpu_count()} CPUs)")
    print("evalcore runs with its bytecode cache (PYTHONDONTWRITEBYTECODE unset for it)")
    binary = trec_eval_binary()
    if binary is None:
        print(f"trec_eval: not built ({trec_eval_anchor.unavailable}); measuring evalcore alone")
    else:
        print(f"trec_eval: built from {trec_eval_anchor.TARBALL}")

    with tempfile.TemporaryDirectory(prefix="bench_trec_files_") as tmp:
        folder = Path(tmp)
        deep_runs(folder, binary, env, args.repeat)
        if args.only_deep:
            print(f"load average after: {load()}")
            return
        qrels, run, n_run, n_qrels = write_workload(
            folder, queries=10_000, depth=100, judged_returned=100, unretrieved=8
        )
        print(
            f"main workload: {n_run:,} run lines, {n_qrels:,} qrels lines (P@10, nDCG@10, R@10, RR)"
        )
        ours: list[ChildCost] = []
        theirs: list[ChildCost] = []
        for _ in range(args.repeat):
            ours.append(measure(evalcore_argv(qrels, run), env=env))
            if binary is not None:
                theirs.append(measure(trec_eval_argv(binary, qrels, run)))
        mine = median_cost(ours)
        floor = median_cost([measure(STARTUP, env=env) for _ in range(args.repeat)])
        print(f"  start-up alone (python and the evaluate command's imports): {floor}")
        plain = {k: v for k, v in env.items() if k != "OPENBLAS_NUM_THREADS"}
        for part, (code, extra) in STARTUP_PARTS.items():
            cost = median_cost(
                [
                    measure([sys.executable, "-c", code], env={**plain, **extra})
                    for _ in range(args.repeat)
                ]
            )
            print(f"    {part}, imported alone: {cost}")
        print(
            f"  evalcore evaluate --complete --unjudged-as-nonrelevant: {mine} "
            f"(median of {args.repeat})"
        )
        if theirs:
            anchor = median_cost(theirs)
            print(f"  trec_eval: {anchor} (median of {args.repeat})")
            print(
                f"  wall time ratio evalcore / trec_eval: {mine.wall_s / anchor.wall_s:.2f}  "
                f"[target <= 0.33]"
            )
            print(
                f"  CPU time ratio evalcore / trec_eval: {mine.cpu_s / anchor.cpu_s:.2f}  "
                "(the wall ratio is the target; CPU is less disturbed by a loaded machine)"
            )
            print(
                f"  peak RSS ratio evalcore / trec_eval: "
                f"{mine.peak_rss_mb / anchor.peak_rss_mb:.2f}  [target <= 1.5]"
            )
        for path in (qrels, run):
            path.unlink()

        if args.skip_large:
            print("large workload: skipped (--skip-large)")
        else:
            qrels, run, n_run, n_qrels = write_workload(
                folder, queries=100_000, depth=1_000, judged_returned=10, unretrieved=2
            )
            size_gb = run.stat().st_size / 1e9
            print(
                f"large workload: {n_run:,} run lines ({size_gb:.1f} GB), {n_qrels:,} qrels lines"
            )
            big = measure(evalcore_argv(qrels, run), env=env, rss_cap_mb=args.rss_cap_mb)
            done = (
                "completes"
                if big.returncode == 0
                else f"FAILED: killed past the {args.rss_cap_mb:.0f} MB cap"
                if big.over_cap
                else f"FAILED (exit {big.returncode})"
            )
            print(f"  evalcore evaluate: {done}; {big}  [target: completes, peak RSS < 4096 MB]")
    print(f"load average after: {load()}")


if __name__ == "__main__":
    main()
