"""Query sets on a large study: what resolving a set costs beside the comparison it scopes.

A study of ``--queries`` queries x 2 runs x top 20 (the decided-comparisons workload of
``bench_decision.py``, imported with the store's own import functions) is compared on
P@10, nDCG@10 and AP@20 (``compare_pair``, what ``evalcore compare`` and the Compare page
read) over each kind of query set, and each figure is printed beside the anchor: the same
comparison over every query with no set named (ratios). Resolving reads the working
labels once more for ``judged``; a narrower set makes the comparison cheaper.

    python benchmarks/bench_query_sets.py [--queries 10000]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_decision import Workload  # noqa: E402

from evalcore.analysis.pair_comparison import compare_pair  # noqa: E402
from evalcore.analysis.query_set import resolve_stored_query_set  # noqa: E402
from evalcore.store.connection import open_store  # noqa: E402
from evalcore.store.study_handle import open_study

MEASURES = ["P@10", "nDCG@10", "AP@20"]


def _best(fn, repeat: int = 3) -> tuple[float, object]:
    best, value = float("inf"), None
    for _ in range(repeat):
        started = time.perf_counter()
        value = fn()
        best = min(best, time.perf_counter() - started)
    return best, value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--queries", type=int, default=10_000)
    args = parser.parse_args()
    work = Workload(args.queries, 0.5, seed=5)
    with tempfile.TemporaryDirectory() as tmp:
        path = work.write_store(Path(tmp))
        db = open_store(path)
        anchor, _ = _best(
            lambda: compare_pair(open_study(db, "bench", None), "A", "B", MEASURES, queue_limit=10)
        )
        print(f"{args.queries} queries x 2 runs x top 20, {', '.join(MEASURES)}")
        print(f"anchor: compare_pair over every query, no set named: {anchor:.3f} s (best of 3)")
        half = ",".join(work.qids[::2])
        for spec in ("all", "judged", "answered", half):
            resolve, resolved = _best(
                lambda spec=spec: resolve_stored_query_set(
                    open_study(db, "bench", None), ["A", "B"], spec
                )
            )
            scope = resolved.scope  # type: ignore[union-attr]
            compare, result = _best(
                lambda scope=scope: compare_pair(
                    open_study(db, "bench", None),
                    "A",
                    "B",
                    MEASURES,
                    queue_limit=10,
                    query_ids=scope,
                )
            )
            n = result.measures[0].decision.n_queries  # type: ignore[union-attr]
            name = spec if len(spec) < 20 else f"a list of {len(resolved.query_ids)} ids"  # type: ignore[union-attr]
            print(
                f"  {name:<22} {n:>6} queries: resolve {resolve:.3f} s "
                f"({resolve / anchor:.2f}x anchor), compare over the set {compare:.3f} s "
                f"({compare / anchor:.2f}x), together {(resolve + compare) / anchor:.2f}x"
            )
        db.conn.close()


if __name__ == "__main__":
    main()
