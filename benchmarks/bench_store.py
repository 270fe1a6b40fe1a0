"""Evidence-store benchmark: prints the figures of issue 3's targets.

    python benchmarks/bench_store.py [--queries 10000] [--depth 100] [--labels 100000]
                                     [--clicks 500] [--workdir DIR]

1. Import of a TREC run of queries x depth lines (default 1,000,000) with
   ``evalcore.store.imports.import_run``, in a fresh subprocess: wall time and
   peak resident memory (VmHWM) of that process.       target: < 15 s, < 1 GiB
2. Label-event write latency (``record_label``, one transaction per click)
   with two writer processes clicking at the same time, on the store holding
   that run and ``--labels`` label events: p50 / p99 / max.     target: p99 < 20 ms
3. ``observations_for_run`` of the whole run (queries x depth results)
   against the working reference, in a fresh process.          target: < 2 s
4. ``resolve_study`` of the whole study (for the record; no target).

3 and 4 run with the cyclic garbage collector paused, as the ``evalcore``
command and the app pause it in their processes (the library never does): they
build a million small objects with no cycles, and the collector's full scans
would otherwise dominate.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

from evalcore.store.study_handle import open_study


def _peak_rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def write_run(path: Path, queries: int, depth: int) -> int:
    rng = random.Random(7)
    with path.open("w") as out:
        for q in range(queries):
            lines = [
                f"q{q:05d} Q0 d{rng.randrange(2_000_000)} {r} {1000.0 - r * 0.5 - rng.random() * 0.1:.4f} bench\n"
                for r in range(1, depth + 1)
            ]
            out.writelines(lines)
    return queries * depth


def child_import(db_path: str, run_file: str, queue: multiprocessing.Queue) -> None:
    from evalcore.store.connection import open_store
    from evalcore.store.imports import import_run

    db = open_store(db_path)
    start, cpu = time.perf_counter(), time.process_time()
    summary = import_run(db, run_file, study_id="bench", k=10, name="bm25")
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    queue.put((elapsed, cpu, _peak_rss_mib(), summary.results))


def child_clicks(db_path: str, who: str, clicks: int, queries: int, start_at: float,
                 queue: multiprocessing.Queue) -> None:
    from evalcore.store.connection import open_store
    from evalcore.store.labels import record_label

    db = open_store(db_path)
    rng = random.Random(who)
    while time.time() < start_at:
        time.sleep(0.001)
    latencies = []
    for i in range(clicks):
        q = f"q{rng.randrange(queries):05d}"
        t0 = time.perf_counter()
        record_label(db, study_id="bench", query_id=q, unit_id=f"d{rng.randrange(2_000_000)}",
                     gain=rng.randrange(5), annotator=who)
        latencies.append((time.perf_counter() - t0) * 1000)
        time.sleep(rng.uniform(0.0, 0.004))  # an annotator clicking fast, two at once
        del i
    queue.put(latencies)


def child_observations(db_path: str, queue: multiprocessing.Queue) -> None:
    from evalcore.cli.process_setup import collector_paused as gc_paused
    from evalcore.store.connection import open_store
    from evalcore.store.observations import observations_for_run
    from evalcore.store.resolution import resolve_study

    db = open_store(db_path)
    with gc_paused():
        start, cpu = time.perf_counter(), time.process_time()
        observations = observations_for_run(open_study(db, "bench", None), "bm25")
        elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    n_results = sum(len(o.returned_ids) for o in observations)
    with gc_paused():
        start_r = time.perf_counter()
        units = sum(len(u) for u in resolve_study(open_study(db, "bench", None)).values())
        resolve_s = time.perf_counter() - start_r
    queue.put((elapsed, cpu, len(observations), n_results, units, resolve_s))


def seed_labels(db_path: Path, queries: int, n: int) -> None:
    from evalcore.io.clock import utc_now_iso
    from evalcore.store.connection import open_store
    from evalcore.store.transaction import write_transaction

    db = open_store(db_path)
    rng = random.Random(11)
    now = utc_now_iso()
    with write_transaction(db):
        db.conn.executemany(
            "INSERT INTO label_events (study_id, query_id, unit_id, kind, gain, annotator, "
            "created_at, note, source) VALUES ('bench', ?, ?, 'label', ?, ?, ?, '', 'bench')",
            ((f"q{i % queries:05d}", f"d{rng.randrange(2_000_000)}", rng.randrange(5),
              f"seed{i % 3}", now) for i in range(n)),
        )
        db.conn.executemany(
            "INSERT OR IGNORE INTO queries (study_id, query_id, text) VALUES ('bench', ?, '')",
            ((f"q{q:05d}",) for q in range(queries)),
        )
    db.conn.close()


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--labels", type=int, default=100_000)
    parser.add_argument("--clicks", type=int, default=500)
    parser.add_argument("--workdir", type=Path, default=None)
    args = parser.parse_args()
    ctx = multiprocessing.get_context("spawn")
    from evalcore.store.connection import open_store
    from evalcore.store.studies import StudyIn
    from evalcore.store.study_setup import create_study

    with tempfile.TemporaryDirectory(dir=args.workdir) as tmp:
        root = Path(tmp)
        db_path = root / "bench.db"
        db = open_store(db_path)
        create_study(db, StudyIn(study_id="bench", corpus_id="bench-corpus"))
        db.conn.close()
        run_file = root / "bench.run"
        n_lines = write_run(run_file, args.queries, args.depth)
        size_mib = run_file.stat().st_size / 2**20
        print(f"store benchmark: {args.queries} queries x {args.depth} results, "
              f"{args.labels} seeded labels, {args.clicks} clicks per writer")

        queue = ctx.Queue()
        proc = ctx.Process(target=child_import, args=(str(db_path), str(run_file), queue))
        proc.start()
        elapsed, cpu, rss, results = queue.get()
        proc.join()
        ok = elapsed < 15 and rss < 1024
        print(f"1. import TREC run: {n_lines} lines ({size_mib:.0f} MiB) -> {results} results in "
              f"{elapsed:.2f} s wall ({cpu:.2f} s CPU), peak RSS {rss:.0f} MiB   "
              f"[target < 15 s, < 1024 MiB: {'met' if ok else 'NOT met'}]")

        seed_labels(db_path, args.queries, args.labels)
        start_at = time.time() + 1.5
        writers = [ctx.Process(target=child_clicks, args=(str(db_path), w, args.clicks,
                                                          args.queries, start_at, queue))
                   for w in ("annotator-1", "annotator-2")]
        for w in writers:
            w.start()
        latencies = [x for _ in writers for x in queue.get()]
        for w in writers:
            w.join()
        p50, p99 = percentile(latencies, 50), percentile(latencies, 99)
        print(f"2. label write, 2 concurrent writers, {len(latencies)} clicks on a store of "
              f"{results} results + {args.labels} labels: p50 {p50:.2f} ms, p99 {p99:.2f} ms, "
              f"max {max(latencies):.2f} ms, mean {statistics.mean(latencies):.2f} ms   "
              f"[target p99 < 20 ms: {'met' if p99 < 20 else 'NOT met'}]")

        proc = ctx.Process(target=child_observations, args=(str(db_path), queue))
        proc.start()
        elapsed, cpu, n_obs, n_results, n_units, resolve_s = queue.get()
        proc.join()
        print(f"3. observations_for_run: {n_obs} observations, {n_results} results, working "
              f"reference of {args.labels + len(latencies)} label events in {elapsed:.2f} s wall "
              f"({cpu:.2f} s CPU)   [target < 2 s: {'met' if elapsed < 2 else 'NOT met'}]")
        print(f"4. resolve_study (every unit as a ResolvedLabel, with annotators): {n_units} "
              f"units from {args.labels + len(latencies)} label events of {args.queries} queries "
              f"in {resolve_s:.2f} s")
        print(f"   machine load average while measuring: {os.getloadavg()[0]:.1f} on "
              f"{os.cpu_count()} cores (wall times above CPU times mean waiting for a core)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
