"""A large run import while 4 processes label: failed writes, label latency, lock hold.

One process imports a TREC run of N lines (``evalcore.store.imports.run``: staged
chunks, each its own short write transaction, published by one small commit);
4 processes record labels in a loop until the import ends. Printed: the import
time, the longest write-lock hold of the import (each of its transactions,
timed inside the importing process), the labels written, failed label writes,
and label latency p50 / p99 / max.

    python benchmarks/bench_import_while_labeling.py            # 500,000 lines (quick)
    python benchmarks/bench_import_while_labeling.py --lines 5000000
"""

import argparse
import contextlib
import linecache
import multiprocessing
import statistics
import sys
import tempfile
import time
from pathlib import Path

LABELERS = 4


def _write_run(path: Path, lines: int) -> None:
    per_query = 100
    with path.open("w") as out:
        for i in range(lines):
            q, r = divmod(i, per_query)
            out.write(f"q{q} Q0 d{q}-{r} {r + 1} {per_query - r} big\n")


def _where() -> str:
    """The evalcore statement that opened the transaction being timed (function, file:line)."""
    frame = sys._getframe(2)
    while frame is not None:
        name = frame.f_code.co_filename
        if "evalcore" in name and not name.endswith(("transaction.py", "contextlib.py")):
            line = linecache.getline(name, frame.f_lineno).strip()
            return f"{frame.f_code.co_name} ({Path(name).name}:{frame.f_lineno}: {line})"
        frame = frame.f_back
    return "?"


def _import(db_path: str, run_file: str, started, done, holds) -> None:
    import evalcore.store.imports.run as run_import
    import evalcore.store.runs as runs
    import evalcore.store.staging as staging
    from evalcore.store.connection import open_store

    real = run_import.write_transaction
    timed_holds: list[tuple[float, float, float, str]] = []  # hold, body, commit, where
    checkpoints: list[float] = []

    @contextlib.contextmanager
    def timed(db):
        if db.conn.in_transaction:  # nested: part of the outer transaction's hold
            with real(db) as inner:
                yield inner
            return
        where = _where()
        t0 = t1 = None
        with real(db) as inner:
            t0 = time.perf_counter()  # BEGIN IMMEDIATE returned: the lock is held
            yield inner
            t1 = time.perf_counter()  # the statements are done; COMMIT follows
        t2 = time.perf_counter()  # COMMIT done: released
        timed_holds.append((t2 - t0, t1 - t0, t2 - t1, where))

    real_checkpoint = getattr(staging, "checkpoint", None)

    def timed_checkpoint(db):
        t0 = time.perf_counter()
        real_checkpoint(db)
        checkpoints.append(time.perf_counter() - t0)

    run_import.write_transaction = timed
    runs.write_transaction = timed
    staging.write_transaction = timed
    if real_checkpoint is not None:
        staging.checkpoint = timed_checkpoint
    db = open_store(db_path)
    started.set()
    t0 = time.perf_counter()
    run_import.import_run(db, run_file, study_id="s", k=100)
    holds.put((time.perf_counter() - t0, sorted(timed_holds, reverse=True)[:3], len(timed_holds),
               max(checkpoints, default=0.0), len(checkpoints)))
    done.set()


def _label(db_path: str, who: str, started, done, out) -> None:
    import sqlite3

    from evalcore.store.connection import open_store
    from evalcore.store.labels import record_label

    db = open_store(db_path)
    started.wait()
    times: list[float] = []
    failed = 0
    i = 0
    while not done.is_set():
        t0 = time.perf_counter()
        try:
            record_label(db, study_id="s", query_id=f"lq{i % 50}", unit_id=f"{who}-{i}",
                         gain=i % 5, annotator=who)
        except sqlite3.OperationalError:
            failed += 1
        times.append(time.perf_counter() - t0)
        i += 1
        time.sleep(0.01)  # an annotator's pace, faster than any person
    out.put((times, failed))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=500_000)
    args = parser.parse_args()
    from evalcore.store.connection import open_store
    from evalcore.store.studies import StudyIn
    from evalcore.store.study_setup import create_study

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        db_path = str(root / "store.sqlite")
        db = open_store(db_path)
        create_study(db, StudyIn(study_id="s", corpus_id="c"))
        db.conn.close()
        run_file = root / "big.run"
        _write_run(run_file, args.lines)
        ctx = multiprocessing.get_context("spawn")
        started, done = ctx.Event(), ctx.Event()
        holds, out = ctx.Queue(), ctx.Queue()
        labelers = [ctx.Process(target=_label, args=(db_path, f"ann{i}@acme.org", started, done,
                                                     out)) for i in range(LABELERS)]
        for p in labelers:
            p.start()
        importer = ctx.Process(target=_import, args=(db_path, str(run_file), started,
                                                     done, holds))
        importer.start()
        importer.join()
        if importer.exitcode != 0:
            done.set()
            sys.exit(f"the import failed (exit code {importer.exitcode})")
        seconds, longest, transactions, checkpoint_max, checkpoints = holds.get()
        results = [out.get() for _ in labelers]
        for p in labelers:
            p.join()
    times = sorted(t for ts, _ in results for t in ts)
    failed = sum(f for _, f in results)
    p99 = times[min(len(times) - 1, int(len(times) * 0.99))]
    hold, body, commit, where = longest[0]
    print(f"run import: {args.lines:,} lines in {seconds:.1f} s, {transactions} write "
          f"transactions")
    print(f"longest write-lock hold {hold * 1000:.0f} ms (target <= 250 ms): statements "
          f"{body * 1000:.0f} ms + COMMIT {commit * 1000:.0f} ms, in {where}")
    for hold, body, commit, where in longest[1:]:
        print(f"  next: {hold * 1000:.0f} ms (statements {body * 1000:.0f} + COMMIT "
              f"{commit * 1000:.0f}) in {where}")
    print(f"WAL checkpoints between chunks (no write lock held): {checkpoints}, longest "
          f"{checkpoint_max * 1000:.0f} ms")
    print(f"labels during the import: {len(times):,} by {LABELERS} processes, "
          f"failed writes {failed} (target 0)")
    print(f"label latency: p50 {statistics.median(times) * 1000:.1f} ms, "
          f"p99 {p99 * 1000:.1f} ms (target < 100 ms), max {times[-1] * 1000:.1f} ms")

if __name__ == "__main__":
    main()
