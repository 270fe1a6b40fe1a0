"""What each process-wide setting would gain ``evalcore evaluate`` on TREC files, beside trec_eval.

    python benchmarks/bench_process_settings.py [--repeat 5] [--queries 1000 10000]
        [--before DIR]

For each size (queries x 100 returned, graded qrels with ~30% of the top 100
unjudged: ``bench_trec_files.write_workload``'s deep-run files), runs alternately,
``--repeat`` times: trec_eval C, ``evalcore evaluate --trec-eval`` as it is, and the
same command with one process-wide setting applied from outside the library:

* one BLAS thread (``OPENBLAS_NUM_THREADS=1``),
* glibc's heap thresholds raised (``MALLOC_MMAP_THRESHOLD_``, ``MALLOC_TRIM_THRESHOLD_``),
* the cyclic collector disabled for the whole command,
* the interpreter's last collection skipped (``gc.freeze`` at exit),

and with ``--before DIR`` the command from another checkout (e.g. ``git worktree`` of
an older commit), for a before/after figure in the same window. Prints the median wall
and CPU seconds and peak RSS of each, its gain over the plain command and the ratio
to trec_eval. A setting earns its place in the command line only with a gain a user
would notice. Asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

from bench_trec_files import deep_evalcore_argv, deep_trec_eval_argv, median_cost, write_workload
from trec_eval_anchor import ROOT, ChildCost, measure, trec_eval_binary

#: Runs the command line with the collector changed: ``{}`` is the ``gc`` call.
WRAPPED = "import gc, runpy; {}; runpy.run_module('evalcore', run_name='__main__', alter_sys=True)"
SETTINGS: dict[str, tuple[str | None, dict[str, str]]] = {
    "as it is": (None, {}),
    "OPENBLAS_NUM_THREADS=1": (None, {"OPENBLAS_NUM_THREADS": "1"}),
    "glibc heap thresholds": (None, {"MALLOC_MMAP_THRESHOLD_": str(64 << 20),
                                     "MALLOC_TRIM_THRESHOLD_": str(128 << 20)}),
    "collector disabled": ("gc.disable()", {}),
    "no last collection": ("import atexit; atexit.register(gc.freeze)", {}),
}


def _argv(qrels: Path, run: Path, gc_call: str | None) -> list[str]:
    argv = deep_evalcore_argv(qrels, run, trec_eval=True)
    if gc_call is None:
        return argv
    return [sys.executable, "-c", WRAPPED.format(gc_call), *argv[3:]]  # after "-m evalcore"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--queries", type=int, nargs="+", default=[1_000, 10_000])
    parser.add_argument("--before", type=Path, default=None,
                        help="another checkout whose evalcore to run beside this one")
    args = parser.parse_args()
    binary = trec_eval_binary()
    base = {k: v for k, v in os.environ.items()
            if k not in ("OPENBLAS_NUM_THREADS", "MALLOC_MMAP_THRESHOLD_",
                         "MALLOC_TRIM_THRESHOLD_")}
    print(f"load average before: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    with tempfile.TemporaryDirectory(prefix="bench_settings_") as tmp:
        for queries in args.queries:
            qrels, run, n_run, _ = write_workload(Path(tmp), queries=queries, depth=100,
                                                  judged_returned=100, unretrieved=8,
                                                  skip_every=1)
            print(f"\n{queries:,} x 100 ({n_run:,} run lines), evalcore evaluate --trec-eval:")
            commands: dict[str, tuple[list[str], dict[str, str]]] = {}
            if binary is not None:
                commands["trec_eval"] = (deep_trec_eval_argv(binary, qrels, run), base)
            if args.before is not None:
                commands["before (--before)"] = (
                    deep_evalcore_argv(qrels, run, trec_eval=True),
                    {**base, "PYTHONPATH": str(args.before.resolve())})
            for name, (gc_call, env) in SETTINGS.items():
                commands[name] = (_argv(qrels, run, gc_call),
                                  {**base, **env, "PYTHONPATH": str(ROOT)})
            costs: dict[str, list[ChildCost]] = {name: [] for name in commands}
            for _ in range(args.repeat):
                for name, (argv, env) in commands.items():  # alternately: the same load
                    costs[name].append(measure(argv, env=env))
            medians = {name: median_cost(c) for name, c in costs.items()}
            plain = medians["as it is"].wall_s
            anchor = medians.get("trec_eval")
            for name, cost in medians.items():
                gain = "" if name == "trec_eval" else f"  gain {1 - cost.wall_s / plain:+6.1%}"
                ratio = "" if anchor is None else f"  x{cost.wall_s / anchor.wall_s:.2f} trec_eval"
                print(f"  {name:24s} {cost}{gain}{ratio}")
            for path in (qrels, run):
                path.unlink()
    print(f"\nload average after: {' '.join(f'{x:.1f}' for x in os.getloadavg())} "
          f"(medians of {args.repeat}; the 1,000 x 100 target: at most 1.2x trec_eval)")


if __name__ == "__main__":
    main()
