"""A large run import while 4 processes label: failed writes, label latency, lock hold.

One process imports a TREC run of N lines (``evalcore.store.imports.run``: staged
chunks, each its own short write transaction, published by one small commit);
4 processes label in a loop until the import ends, each label written as the
annotate page writes it (``retry_busy(label_as_shown(...))``, every 10 ms). Printed: the import
time, the longest write-lock holds of the import (each of its transactions,
timed inside the importing process: the statement that opened it, and how much
of it was the statements and how much the COMMIT), the WAL checkpoints it ran
between chunks, the labels written, failed label writes, and label latency
p50 / p95 / p99 / max beside their targets, with their parts (waiting for the
write lock, the statements inside it, the COMMIT); first, the same 4 processes label for
``--control-s`` seconds with no import (what the machine itself gives), and
the load average is printed (this 2-core machine is shared).

    python benchmarks/bench_import_while_labeling.py            # 500,000 lines (quick)
    python benchmarks/bench_import_while_labeling.py --lines 5000000
    python benchmarks/bench_import_while_labeling.py --beir 200000   # a BEIR corpus instead
    python benchmarks/bench_import_while_labeling.py --beir 200000 --replace  # re-imported

With ``--beir N`` the import is a BEIR folder of N documents (about 60 words
each; ``evalcore.store.imports.beir``: documents staged in paced chunks,
published by one small statement in the final transaction). With ``--replace``
every document replaces a stored one: the new texts are staged beside the old
ones, all switched by that statement, and the old rows are then deleted in paced
chunks (``remove_superseded``); the longest hold of each phase is printed
(``write_staged``: staging, ``import_beir``: the publishing commit,
``remove_superseded``: the removal).
"""

import argparse
import contextlib
import linecache
import multiprocessing
import os
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


def _write_beir(root: Path, documents: int, words: str = "") -> None:
    import json

    (root / "qrels").mkdir(parents=True)
    words = (words or "retrieval evaluation relevance judged pooled corpus annotator label").split()
    with (root / "corpus.jsonl").open("w") as out:
        for i in range(documents):
            text = " ".join(words[(i + j) % len(words)] for j in range(60))
            out.write(json.dumps({"_id": f"d{i}", "title": f"Document {i}", "text": text}) + "\n")
    (root / "queries.jsonl").write_text('{"_id": "q1", "text": "relevance"}\n')
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")


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
    import evalcore.store.document_imports as document_imports
    import evalcore.store.imports.beir as beir_import
    import evalcore.store.imports.run as run_import
    import evalcore.store.runs as runs
    import evalcore.store.staged_documents as staged_documents
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

    import evalcore.store.document_replacements as document_replacements

    for module in (run_import, runs, staging, beir_import, staged_documents, document_imports,
                   document_replacements):
        module.write_transaction = timed
    if real_checkpoint is not None:
        staging.checkpoint = timed_checkpoint
    db = open_store(db_path)
    started.set()
    t0 = time.perf_counter()
    if Path(run_file).is_dir():
        beir_import.import_beir(db, run_file, study_id="s")
    else:
        run_import.import_run(db, run_file, study_id="s", k=100)
    ranked = sorted(timed_holds, reverse=True)
    phases: dict[str, tuple[float, int]] = {}  # the function that opened them: longest, count
    for hold, _, _, where in ranked:
        longest, count = phases.get(where.split(" ")[0], (hold, 0))
        phases[where.split(" ")[0]] = (longest, count + 1)
    holds.put((time.perf_counter() - t0, ranked[:3], len(ranked),
               ranked[len(ranked) // 100][0], sum(1 for h in ranked if h[0] > 0.25),
               max(checkpoints, default=0.0), len(checkpoints), phases))
    done.set()


def _label(db_path: str, who: str, ready, started, done, out) -> None:
    """Label as the annotate page does (``retry_busy(label_as_shown(...))``), timing each write
    and its parts: waiting for the write lock (from the first ``BEGIN IMMEDIATE`` tried to the
    first statement after it), the statements inside it, and the ``COMMIT``."""
    import sqlite3

    from evalcore.annotation.item_token import label_as_shown, show_item
    from evalcore.store.connection import open_store
    from evalcore.store.study_handle import open_study
    from evalcore.store.transaction import retry_busy

    db = open_store(db_path)
    marks: list[tuple[float, str]] = []
    db.conn.set_trace_callback(lambda sql: marks.append((time.perf_counter(), sql[:12])))
    ready.put(who)
    started.wait()
    times: list[float] = []
    parts: list[tuple[float, float, float]] = []  # lock wait, inside, commit
    failed = 0
    i = 0
    while not done.is_set():
        token = show_item(open_study(db, "s", who), query_id=f"lq{i % 50}",
                          unit_id=f"{who}-{i}", annotator=who)
        marks.clear()
        t0 = time.perf_counter()
        try:
            retry_busy(lambda t=token, g=i % 5: label_as_shown(db, t, g, on_screen=t))
        except sqlite3.OperationalError:
            failed += 1
        end = time.perf_counter()
        times.append(end - t0)
        parts.append(_parts(marks, end))
        i += 1
        time.sleep(0.01)  # an annotator's pace, faster than any person
    out.put((times, failed, parts))


def _parts(marks: list[tuple[float, str]], end: float) -> tuple[float, float, float]:
    """(lock wait, inside, commit) of one label write from its statements' start times."""
    begins = [t for t, sql in marks if sql.startswith("BEGIN IMMED")]
    if not begins:
        return (0.0, 0.0, 0.0)
    after = [t for t, sql in marks if t > begins[-1] and not sql.startswith(("BEGIN", "PRAGMA"))]
    commit = next((t for t, sql in marks if sql.startswith("COMMIT") and t > begins[-1]), end)
    resumed = next((t for t, _ in marks if t > commit), end)
    locked = after[0] if after else commit
    return (locked - begins[0], commit - locked, resumed - commit)


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))]


def _percentiles(results: list[tuple]) -> tuple[int, int, float, float, float, float, str]:
    """count, failed, p50, p95, p99, max, and the parts (lock wait, inside, commit) p50/p99."""
    times = sorted(t for ts, *_ in results for t in ts)
    parts = [p for *_, ps in results for p in ps]
    said = ", ".join(
        f"{name} p50 {_quantile([p[n] for p in parts], 0.5) * 1000:.1f} / p99 "
        f"{_quantile([p[n] for p in parts], 0.99) * 1000:.1f} ms"
        for n, name in enumerate(("lock wait", "inside the lock", "COMMIT")))
    return (len(times), sum(r[1] for r in results), statistics.median(times),
            _quantile(times, 0.95), _quantile(times, 0.99), times[-1], said)


def _labelers(ctx, db_path: str, started, done, out) -> list:
    """The labeling processes, started and ready (their store open) when this returns."""
    ready = ctx.Queue()
    labelers = [ctx.Process(target=_label, args=(db_path, f"ann{i}@acme.org", ready, started,
                                                 done, out)) for i in range(LABELERS)]
    for p in labelers:
        p.start()
    for _ in labelers:
        ready.get()
    return labelers


def _collect(labelers: list, out) -> list[tuple]:
    results = [out.get() for _ in labelers]
    for p in labelers:
        p.join()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=500_000)
    parser.add_argument("--beir", type=int, default=0, metavar="N",
                        help="import a BEIR corpus of N documents instead of a run")
    parser.add_argument("--replace", action="store_true",
                        help="with --beir: import the corpus once first (no one labeling), then "
                             "time importing it again with other text (every document replaced)")
    parser.add_argument("--control-s", type=float, default=15.0,
                        help="first, label this long with no import (the machine's own figure)")
    args = parser.parse_args()
    from evalcore.store.connection import open_store
    from evalcore.store.studies import StudyIn
    from evalcore.store.study_setup import create_study

    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        db_path = str(root / "store.sqlite")
        db = open_store(db_path)
        create_study(db, StudyIn(study_id="s", corpus_id="c"))
        db.conn.close()
        if args.beir:
            run_file = root / "beir"
            if args.replace:
                _write_beir(root / "first", args.beir)
                from evalcore.store.imports.beir import import_beir

                db = open_store(db_path)
                import_beir(db, root / "first", study_id="s")
                db.conn.close()
            _write_beir(run_file, args.beir, "other words replacing every stored document text")
        else:
            run_file = root / "big.run"
            _write_run(run_file, args.lines)
        ctx = multiprocessing.get_context("spawn")
        control = None
        if args.control_s > 0:
            started, done, out = ctx.Event(), ctx.Event(), ctx.Queue()
            labelers = _labelers(ctx, db_path, started, done, out)
            started.set()
            time.sleep(args.control_s)
            done.set()
            control = _percentiles(_collect(labelers, out))
        started, done = ctx.Event(), ctx.Event()
        holds, out = ctx.Queue(), ctx.Queue()
        labelers = _labelers(ctx, db_path, started, done, out)
        importer = ctx.Process(target=_import, args=(db_path, str(run_file), started,
                                                     done, holds))
        importer.start()
        importer.join()
        if importer.exitcode != 0:
            done.set()
            sys.exit(f"the import failed (exit code {importer.exitcode})")
        (seconds, longest, transactions, hold_p99, over_target, checkpoint_max,
         checkpoints, phases) = holds.get()
        results = _collect(labelers, out)
    count, failed, p50, p95, p99, worst, parts = _percentiles(results)
    hold, body, commit, where = longest[0]
    print(f"machine load average: {load_before:.1f} before, {os.getloadavg()[0]:.1f} after "
          f"({os.cpu_count()} CPUs)")
    if control is not None:
        c_count, c_failed, c_p50, c_p95, c_p99, c_worst, c_parts = control
        print(f"labels with no import ({args.control_s:g} s): {c_count:,}, failed {c_failed}, "
              f"p50 {c_p50 * 1000:.1f} ms, p95 {c_p95 * 1000:.1f} ms, p99 {c_p99 * 1000:.1f} ms, "
              f"max {c_worst * 1000:.1f} ms")
        print(f"  parts: {c_parts}")
    what = (f"BEIR import: {args.beir:,} documents"
            + (" (every one replacing a stored one)" if args.replace else "")) if args.beir else (
        f"run import: {args.lines:,} lines")
    print(f"{what} in {seconds:.1f} s, {transactions} write "
          f"transactions; holds p99 {hold_p99 * 1000:.0f} ms, {over_target} over 250 ms")
    print(f"longest write-lock hold {hold * 1000:.0f} ms (target <= 250 ms): statements "
          f"{body * 1000:.0f} ms + COMMIT {commit * 1000:.0f} ms, in {where}")
    for hold, body, commit, where in longest[1:]:
        print(f"  next: {hold * 1000:.0f} ms (statements {body * 1000:.0f} + COMMIT "
              f"{commit * 1000:.0f}) in {where}")
    print("longest hold by phase: " + ", ".join(
        f"{name} {hold * 1000:.0f} ms ({count} transactions)"
        for name, (hold, count) in phases.items()))
    print(f"WAL checkpoints between chunks (no write lock held): {checkpoints}, longest "
          f"{checkpoint_max * 1000:.0f} ms")
    print(f"labels during the import: {count:,} by {LABELERS} processes, "
          f"failed writes {failed} (target 0)")
    print(f"label latency: p50 {p50 * 1000:.1f} ms, p95 {p95 * 1000:.1f} ms, p99 "
          f"{p99 * 1000:.1f} ms (target < 100 ms), max {worst * 1000:.1f} ms")
    print(f"  parts: {parts}")


if __name__ == "__main__":
    main()
