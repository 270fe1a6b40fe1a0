"""A large run import while 16 writers label, on SQLite and PostgreSQL: lost, doubled, latency.

One process imports a TREC run of N lines (``evalcore.store.imports.run``: staged
chunks, each its own short write transaction, published by one small commit);
meanwhile 4 processes (``--processes``), each like one app server with 4 writer
threads (``--writers-per-process``, each thread its own store connection; each saves
one untimed label first, as a running server has translated its statements), label
in a loop until the import ends, each label written as the annotate page writes
it (``retry_busy(label_as_shown(...))``), one every ``--every-ms`` per writer. Each writer labels items no
other writer labels, except one writer per process (``--shared-per-process``) that
labels the same two items as those of the other processes, from the same view of
them: only one of those concurrent saves may succeed (the others are told the item
changed), which tests that writes are serialised.

Afterwards the store is checked from its label events (each write's note names
it): every write a writer was told was saved is there exactly once, under the
event id it was given (lost, duplicated, wrong event id: target 0), no refused
write is there, and no two saves of a shared item were made from the same view.

Two paces (``--every-ms 10,250``, each measured on its own fresh store): 10 ms, a
stress pace no person reaches (1,600 writes/s offered by 16 writers), and 250 ms, an
annotator's pace that is still faster than people label: a judgement needs the
document read (seconds, even for a snippet), and the annotate page refuses a key
pressed while it reruns after the previous one, so one person sustains at most a few
labels a second; 250 ms (4 a second each, 64 a second for 16) bounds that from above.
The target is judged at both paces and both figures are printed.

Printed per engine and pace: the import time, the longest write-lock holds of the import
(each of its transactions, timed inside the importing process: the statement that
opened it, and how much of it was the statements and how much the COMMIT), on
SQLite the WAL checkpoints it ran between chunks, the labels written, failed label
writes, label latency p50 / p95 / p99 / max beside the target (p99 < 100 ms) with
their parts (waiting for the write lock, the statements inside it, the COMMIT; on
PostgreSQL, where statements travel in round trips: from the first try to the reply
carrying the lock, from that reply to the COMMIT sent, the COMMIT's round trip with
whatever was sent with it), the
check, and the load average (this 2-core machine is shared); first, the same
writers label for ``--control-s`` seconds with no import (what the machine itself
gives). Then the engines and paces side by side.

The engines (``--engines sqlite,postgres``): both when a PostgreSQL server is named
(``--postgres-url`` or ``RELEVANCE_LEDGER_BENCH_POSTGRES_URL``) and answers; the
benchmark creates a fresh database there (``--postgres-prefix``) and drops it after,
and asks for a ``CHECKPOINT`` before each measurement (a previous run's dirty pages,
written during the next import, made its chunks hold the lock for over 500 ms).

    python benchmarks/bench_import_while_labeling.py --quick   # 100,000 lines, 5 s control
    python benchmarks/bench_import_while_labeling.py           # 1,000,000 lines
    python benchmarks/bench_import_while_labeling.py --engines postgres \\
        --postgres-url 'postgresql://ledger@/postgres?host=/tmp/pgt'
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

sys.path.insert(0, str(Path(__file__).resolve().parent))
import postgres_scratch  # noqa: E402


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


def _writers(target: str, phase: str, process: int, threads: int, shared: int, every_s: float,
             ready, started, done, out) -> None:
    """One app server: ``threads`` writers, each a thread with its own store connection,
    labeling as the annotate page does until ``done``; puts the list of their records."""
    import threading

    from evalcore.store.connection import open_store

    dbs = [open_store(target) for _ in range(threads)]
    records: list[dict] = [{} for _ in range(threads)]
    workers = [threading.Thread(target=_write_labels, args=(
        dbs[t], phase, f"ann{process}-{t}@acme.org", t < shared, every_s, started, done,
        records[t]))
        for t in range(threads)]
    for w in workers:
        w.start()
    ready.put(process)
    for w in workers:
        w.join()
    for db in dbs:
        db.conn.close()
    out.put(records)


def _write_labels(db, phase: str, who: str, on_shared: bool, every_s: float, started, done,
                  record: dict) -> None:
    """Label as the annotate page does (``retry_busy(label_as_shown(...))``), every ``every_s``,
    timing each write and its parts: waiting for the write lock (from the first
    ``BEGIN IMMEDIATE`` / ``BEGIN`` tried to the lock held), the statements inside it, and
    the ``COMMIT``. Each write's note names it (``w:<phase>:<who>#<n>``), so the store can be
    checked afterwards for every write this writer was told was saved (``phase`` tells the
    control's writes from those during the import).

    A writer ``on_shared`` labels the two items every shared writer labels (``shared``
    query, units ``shared-0`` / ``shared-1``), with a pause of 0-5 ms between showing the
    item and saving it: writers of other processes save the same item from the same view,
    and only the first may succeed (the others are told the item changed)."""
    import random

    from evalcore.annotation.item_token import label_as_shown, show_item
    from evalcore.store import dialect
    from evalcore.store.labels import ItemChangedError
    from evalcore.store.study_handle import open_study
    from evalcore.store.transaction import retry_busy

    marks: list[tuple[float, str]] = []
    _trace(db, marks)
    times: list[float] = []
    parts: list[tuple[float, float, float]] = []  # lock wait, inside, commit
    saved: list[tuple[str, int, str, int]] = []  # note, event id, unit, the event it saw
    refused: list[str] = []  # notes of writes not saved (busy, changed, another error)
    failed = changed = 0
    errors: dict[str, int] = {}
    # One label first, untimed and unchecked (its note is not a write's): the process
    # translates each statement for its engine once, as an app server does when it starts.
    warm = show_item(open_study(db, "s", who), query_id="warm-up", unit_id=f"warm-{who}",
                     annotator=who)
    retry_busy(lambda: label_as_shown(db, warm, 0, on_screen=warm, note="warm-up"))
    started.wait()
    i = 0
    while not done.is_set():
        query, unit = (("shared", f"shared-{i % 2}") if on_shared
                       else (f"lq{i % 50}", f"{who}-{i}"))
        note = f"w:{phase}:{who}#{i}"
        token = show_item(open_study(db, "s", who), query_id=query, unit_id=unit,
                          annotator=who)
        if on_shared:
            time.sleep(random.uniform(0, 0.005))
        marks.clear()
        t0 = time.perf_counter()
        try:
            outcome = retry_busy(lambda t=token, g=i % 5, n=note: label_as_shown(
                db, t, g, on_screen=t, note=n))
        except ItemChangedError:
            changed += 1
            refused.append(note)
        except dialect.operational_errors() as error:
            if dialect.is_busy(error):
                failed += 1
            else:
                errors[type(error).__name__] = errors.get(type(error).__name__, 0) + 1
            refused.append(note)
        except Exception as error:  # reported, not hidden: an engine defect shows here
            errors[type(error).__name__] = errors.get(type(error).__name__, 0) + 1
            refused.append(note)
        else:
            saved.append((note, outcome.event.event_id, unit, token.seen_event))
        end = time.perf_counter()
        times.append(end - t0)
        parts.append(_parts(marks, end))
        i += 1
        time.sleep(every_s)
    record.update(times=times, parts=parts, saved=saved, refused=refused, failed=failed,
                  changed=changed, errors=errors)


def _trace(db, marks: list[tuple[float, str]]) -> None:
    """Record each statement's start (its first 12 characters) in ``marks``. On PostgreSQL
    the transaction control statements (sent as written) are marked, and the moments the
    client waits for the server: ``LOCKED`` when the statement asking for the write lock
    returned (sent alone), ``SYNCED`` when a batch's round trip returned (the lock is held
    once the first one after ``BEGIN`` did), ``COMMITTED`` when a COMMIT sent alone
    returned, ``EXIT`` / ``EXITED`` around the last round trip of a batch (its COMMIT)."""
    from evalcore.store import dialect

    if not dialect.is_postgres(db):
        db.conn.set_trace_callback(lambda sql: marks.append((time.perf_counter(), sql[:12])))
        return
    import psycopg
    from psycopg.pq import PipelineStatus

    raw, conn = db.conn.raw, db.conn
    raw_execute, conn_execute = raw.execute, conn.execute
    _PIPELINE_MARKS[id(raw)] = marks
    if not _PIPELINE_MARKS.get("patched"):
        _PIPELINE_MARKS["patched"] = True
        sync, exit_ = psycopg.Pipeline.sync, psycopg.Pipeline.__exit__

        def timed_sync(self):
            result = sync(self)
            _PIPELINE_MARKS.get(id(self._conn), []).append((time.perf_counter(), "SYNCED"))
            return result

        def timed_exit(self, *exc):
            mine = _PIPELINE_MARKS.get(id(self._conn), [])
            mine.append((time.perf_counter(), "EXIT"))
            try:
                return exit_(self, *exc)
            finally:
                mine.append((time.perf_counter(), "EXITED"))

        psycopg.Pipeline.sync, psycopg.Pipeline.__exit__ = timed_sync, timed_exit

    def control(sql, *args, **kwargs):
        marks.append((time.perf_counter(), sql[:12]))
        result = raw_execute(sql, *args, **kwargs)
        if raw.info.pipeline_status == PipelineStatus.OFF:  # sent alone: it returned
            if "pg_advisory_xact_lock" in sql:
                marks.append((time.perf_counter(), "LOCKED"))
            elif sql.startswith("COMMIT"):
                marks.append((time.perf_counter(), "COMMITTED"))
        return result

    def statement(sql, *args, **kwargs):
        if not sql.lstrip().upper().startswith(("BEGIN", "COMMIT", "ROLLBACK", "SAVEPOINT",
                                                "RELEASE", "SET")):
            marks.append((time.perf_counter(), sql.lstrip()[:12]))
        return conn_execute(sql, *args, **kwargs)

    raw.execute = control
    conn.execute = statement


#: id of a psycopg connection -> the marks of its writer (the pipeline's round trips)
_PIPELINE_MARKS: dict = {}


def _parts(marks: list[tuple[float, str]], end: float) -> tuple[float, float, float]:
    """(lock wait, inside, commit) of one label write from its statements' start times."""
    begins = [t for t, sql in marks if sql.startswith(("BEGIN IMMED", "BEGIN;")) or sql == "BEGIN"]
    if not begins:
        return (0.0, 0.0, 0.0)
    last = begins[-1]
    commit = next((t for t, sql in marks if sql.startswith("COMMIT") and t > last), end)
    locked = next((t for t, sql in marks if sql in ("LOCKED", "SYNCED") and t > last), None)
    if locked is None:  # SQLite: the lock is held once BEGIN IMMEDIATE returned
        locked = next((t for t, sql in marks if t > last
                       and not sql.startswith(("BEGIN", "PRAGMA"))), commit)
        resumed = next((t for t, sql in marks if t > commit and sql != "COMMIT"), end)
        return (locked - begins[0], commit - locked, resumed - commit)
    sent = next((t for t, sql in marks if sql == "EXIT" and t >= commit), commit)
    committed = next((t for t, sql in marks if sql in ("EXITED", "COMMITTED") and t >= sent), end)
    return (locked - begins[0], sent - locked, committed - sent)


def _verify(target: str, records: list[dict]) -> dict[str, int]:
    """Every write a writer was told was saved is in the store exactly once (under the
    event id it was given), no refused write is there, and no two saved writes of a
    shared item were made from the same view of it."""
    from evalcore.store.connection import open_store

    db = open_store(target)
    stored: dict[str, list[int]] = {}
    for note, event_id in db.execute(
            "SELECT note, event_id FROM label_events WHERE note LIKE 'w:%'").fetchall():
        stored.setdefault(note, []).append(event_id)
    db.conn.close()
    saved = [s for r in records for s in r["saved"]]
    views: dict[tuple[str, int], int] = {}
    for _, _, unit, seen in saved:
        if unit.startswith("shared-"):
            views[(unit, seen)] = views.get((unit, seen), 0) + 1
    return {
        "saved": len(saved),
        "lost": sum(1 for note, _, _, _ in saved if note not in stored),
        "duplicated": sum(len(ids) - 1 for ids in stored.values() if len(ids) > 1),
        "wrong event id": sum(1 for note, event_id, _, _ in saved
                              if note in stored and stored[note] != [event_id]),
        "refused but stored": sum(1 for r in records for note in r["refused"] if note in stored),
        "two saves from one view": sum(n - 1 for n in views.values() if n > 1),
        "shared saves": sum(1 for *_, unit, _ in saved if unit.startswith("shared-")),
    }


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


def _writer_processes(ctx, target: str, phase: str, args, every_s: float, started, done,
                      out) -> list:
    """The writing processes, started and ready (every store connection open) on return."""
    ready = ctx.Queue()
    processes = [ctx.Process(target=_writers, args=(
        target, phase, p, args.writers_per_process, args.shared_per_process, every_s, ready,
        started, done, out)) for p in range(args.processes)]
    for p in processes:
        p.start()
    for _ in processes:
        ready.get()
    return processes


def _collect(processes: list, out) -> list[dict]:
    records = [r for _ in processes for r in out.get()]
    for p in processes:
        p.join()
    return records


def _latency(records: list[dict]) -> dict:
    """count, failed, refused as changed, other errors, p50/p95/p99/max, and the parts."""
    times = sorted(t for r in records for t in r["times"])
    parts = [p for r in records for p in r["parts"]]
    said = ", ".join(
        f"{name} p50 {_quantile([p[n] for p in parts], 0.5) * 1000:.1f} / p99 "
        f"{_quantile([p[n] for p in parts], 0.99) * 1000:.1f} ms"
        for n, name in enumerate(("lock wait", "inside the lock", "COMMIT")))
    errors: dict[str, int] = {}
    for r in records:
        for name, n in r["errors"].items():
            errors[name] = errors.get(name, 0) + n
    held = [inside + commit for _, inside, commit in parts]  # the lock held, as the writer saw
    return {"count": len(times), "failed": sum(r["failed"] for r in records),
            "changed": sum(r["changed"] for r in records), "errors": errors,
            "held p50": _quantile(held, 0.5), "held p99": _quantile(held, 0.99),
            "wait p99": _quantile([p[0] for p in parts], 0.99),
            "p50": statistics.median(times), "p95": _quantile(times, 0.95),
            "p99": _quantile(times, 0.99), "max": times[-1], "parts": said}


def _measure(engine: str, target: str, run_file: Path, args, first: Path | None,
             every_s: float) -> dict:
    """Both phases on one store (the control, then the import while labeling), checked."""
    from evalcore.store.connection import open_store
    from evalcore.store.studies import StudyIn
    from evalcore.store.study_setup import create_study

    result: dict = {"load before": os.getloadavg()[0]}
    db = open_store(target)
    create_study(db, StudyIn(study_id="s", corpus_id="c"))
    if first is not None:
        from evalcore.store.imports.beir import import_beir

        import_beir(db, first, study_id="s")
    db.conn.close()
    ctx = multiprocessing.get_context("spawn")
    records: list[dict] = []
    if args.control_s > 0:
        started, done, out = ctx.Event(), ctx.Event(), ctx.Queue()
        processes = _writer_processes(ctx, target, "control", args, every_s, started, done,
                                      out)
        started.set()
        time.sleep(args.control_s)
        done.set()
        control = _collect(processes, out)
        result["control"] = _latency(control)
        records += control
    started, done = ctx.Event(), ctx.Event()
    holds, out = ctx.Queue(), ctx.Queue()
    processes = _writer_processes(ctx, target, "import", args, every_s, started, done, out)
    importer = ctx.Process(target=_import, args=(target, str(run_file), started, done, holds))
    importer.start()
    importer.join()
    if importer.exitcode != 0:
        done.set()
        _collect(processes, out)
        sys.exit(f"{engine}: the import failed (exit code {importer.exitcode})")
    (result["import s"], result["longest"], result["transactions"], result["hold p99"],
     result["over target"], result["checkpoint max"], result["checkpoints"],
     result["phases"]) = holds.get()
    during = _collect(processes, out)
    result["during"] = _latency(during)
    result["check"] = _verify(target, records + during)
    result["load after"] = os.getloadavg()[0]
    return result


def _report(engine: str, r: dict, args, writers: int) -> None:
    print(f"== {engine}: a label every {r['every ms']:g} ms per writer ==")
    print(f"machine load average: {r['load before']:.1f} before, {r['load after']:.1f} after "
          f"({os.cpu_count()} CPUs)")
    if "control" in r:
        c = r["control"]
        print(f"labels with no import ({args.control_s:g} s): {c['count']:,}, failed "
              f"{c['failed']}, p50 {c['p50'] * 1000:.1f} ms, p95 {c['p95'] * 1000:.1f} ms, "
              f"p99 {c['p99'] * 1000:.1f} ms, max {c['max'] * 1000:.1f} ms")
        print(f"  parts: {c['parts']}")
    what = (f"BEIR import: {args.beir:,} documents"
            + (" (every one replacing a stored one)" if args.replace else "")) if args.beir else (
        f"run import: {args.lines:,} lines")
    print(f"{what} in {r['import s']:.1f} s, {r['transactions']} write "
          f"transactions; holds p99 {r['hold p99'] * 1000:.0f} ms, {r['over target']} over "
          "250 ms")
    hold, body, commit, where = r["longest"][0]
    print(f"longest write-lock hold {hold * 1000:.0f} ms (target <= 250 ms): statements "
          f"{body * 1000:.0f} ms + COMMIT {commit * 1000:.0f} ms, in {where}")
    for hold, body, commit, where in r["longest"][1:]:
        print(f"  next: {hold * 1000:.0f} ms (statements {body * 1000:.0f} + COMMIT "
              f"{commit * 1000:.0f}) in {where}")
    print("longest hold by phase: " + ", ".join(
        f"{name} {hold * 1000:.0f} ms ({count} transactions)"
        for name, (hold, count) in r["phases"].items()))
    if engine == "sqlite":
        print(f"WAL checkpoints between chunks (no write lock held): {r['checkpoints']}, "
              f"longest {r['checkpoint max'] * 1000:.0f} ms")
    d, check = r["during"], r["check"]
    print(f"labels during the import: {d['count']:,} by {writers} writers "
          f"({args.processes} processes x {args.writers_per_process} threads), failed writes "
          f"{d['failed']} (target 0), other errors {d['errors'] or 0}, refused as changed "
          f"(shared items, expected) {d['changed']}")
    print(f"label latency: p50 {d['p50'] * 1000:.1f} ms, p95 {d['p95'] * 1000:.1f} ms, p99 "
          f"{d['p99'] * 1000:.1f} ms (target < 100 ms), max {d['max'] * 1000:.1f} ms")
    print(f"  parts: {d['parts']}")
    print("store check (both phases): " + ", ".join(f"{k} {v:,}" for k, v in check.items())
          + " (targets: lost 0, duplicated 0, wrong event id 0, refused but stored 0, "
            "two saves from one view 0)")


def _summary(results: dict[str, dict]) -> None:
    """The figures of every engine and pace side by side."""
    engines = list(results)
    rows = [
        ("run import (s)", lambda r: f"{r['import s']:.1f}", ""),
        ("labels saved (both phases)", lambda r: f"{r['check']['saved']:,}", ""),
        ("lost", lambda r: f"{r['check']['lost']}", "0"),
        ("duplicated", lambda r: f"{r['check']['duplicated']}", "0"),
        ("refused but stored", lambda r: f"{r['check']['refused but stored']}", "0"),
        ("two saves from one view", lambda r: f"{r['check']['two saves from one view']}", "0"),
        ("failed writes (during)", lambda r: f"{r['during']['failed']}", "0"),
        ("other errors (during)", lambda r: f"{sum(r['during']['errors'].values())}", "0"),
        ("label p50 ms", lambda r: f"{r['during']['p50'] * 1000:.1f}", ""),
        ("label p95 ms", lambda r: f"{r['during']['p95'] * 1000:.1f}", ""),
        ("label p99 ms", lambda r: f"{r['during']['p99'] * 1000:.1f}", "< 100 (PostgreSQL)"),
        ("label max ms", lambda r: f"{r['during']['max'] * 1000:.1f}", ""),
        ("p99 < 100 ms?", lambda r: "met" if r["during"]["p99"] < 0.1 else "missed", ""),
        ("label lock wait p99 ms", lambda r: f"{r['during']['wait p99'] * 1000:.1f}", ""),
        ("label lock held p50 ms", lambda r: f"{r['during']['held p50'] * 1000:.2f}", ""),
        ("label lock held p99 ms", lambda r: f"{r['during']['held p99'] * 1000:.1f}", ""),
        ("import longest hold ms", lambda r: f"{r['longest'][0][0] * 1000:.0f}", "<= 250"),
        ("load average after", lambda r: f"{r['load after']:.1f}", ""),
    ]
    print("== side by side ==")
    print(f"{'':28}" + "".join(f"{e:>16}" for e in engines) + "   target")
    for name, cell, target in rows:
        print(f"{name:28}" + "".join(f"{cell(results[e]):>16}" for e in engines) + f"   {target}")


def _engines(args) -> list[tuple[str, str | None]]:
    """The engines to measure, with the PostgreSQL server's URL."""
    url = postgres_scratch.server_url(args.postgres_url)
    asked = args.engines.split(",") if args.engines else None
    unknown = set(asked or ()) - {"sqlite", "postgres"}
    if unknown:
        sys.exit(f"--engines: unknown {', '.join(sorted(unknown))} (sqlite, postgres)")
    why = "no server named (--postgres-url or " + postgres_scratch.URL_ENV + ")" if not url \
        else postgres_scratch.reachable(url)
    if asked is None:
        if why:
            print(f"PostgreSQL not measured: {why}")
        asked = ["sqlite"] + ([] if why else ["postgres"])
    elif "postgres" in asked and why:
        sys.exit(f"--engines postgres: the server cannot be used: {why}")
    return [(e, url if e == "postgres" else None) for e in asked]


def _checkpoint(url: str) -> None:
    """A CHECKPOINT before each PostgreSQL measurement: the pages a previous one dirtied are
    written now, not during this one's import (where they stall its statements while it
    holds the write lock). The server's own checkpoints during the import still count."""
    import psycopg

    try:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("CHECKPOINT")
    except psycopg.Error as error:
        print(f"no CHECKPOINT before the measurement ({error}): a previous run's pages may "
              "be written during this one")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--quick", action="store_true",
                        help="100,000 lines and a 5 s control (unless given)")
    parser.add_argument("--beir", type=int, default=0, metavar="N",
                        help="import a BEIR corpus of N documents instead of a run")
    parser.add_argument("--replace", action="store_true",
                        help="with --beir: import the corpus once first (no one labeling), then "
                             "time importing it again with other text (every document replaced)")
    parser.add_argument("--control-s", type=float, default=None,
                        help="first, label this long with no import (the machine's own figure; "
                             "default 15, 5 with --quick)")
    postgres_scratch.add_engine_options(parser)
    parser.add_argument("--processes", type=int, default=4, help="writing processes")
    parser.add_argument("--writers-per-process", type=int, default=4,
                        help="writer threads per process, each with its own connection")
    parser.add_argument("--shared-per-process", type=int, default=1,
                        help="of them, how many label the shared items (the same items "
                             "every process labels)")
    parser.add_argument("--every-ms", default="10,250",
                        help="each writer's pace, a label every so many ms; several, comma "
                             "separated, are measured one after the other (default 10,250: "
                             "the stress pace and an annotator's, see above)")
    args = parser.parse_args()
    try:
        paces = [float(ms) for ms in args.every_ms.split(",")]
    except ValueError:
        sys.exit(f"--every-ms {args.every_ms!r}: give milliseconds, e.g. 10,250")
    if not paces or any(ms < 0 for ms in paces):
        sys.exit(f"--every-ms {args.every_ms!r}: give milliseconds >= 0, e.g. 10,250")
    if args.quick and "--lines" not in sys.argv:
        args.lines = 100_000
    if args.control_s is None:
        args.control_s = 5.0 if args.quick else 15.0
    engines = _engines(args)
    writers = args.processes * args.writers_per_process
    results: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        first = None
        if args.beir:
            run_file = root / "beir"
            if args.replace:
                first = root / "first"
                _write_beir(first, args.beir)
            _write_beir(run_file, args.beir, "other words replacing every stored document text")
        else:
            run_file = root / "big.run"
            _write_run(run_file, args.lines)
        for engine, url in engines:
            for ms in paces:
                name = f"{engine} {ms:g} ms"
                if engine == "sqlite":
                    results[name] = _measure(engine, str(root / f"store-{ms:g}.sqlite"),
                                             run_file, args, first, ms / 1000)
                else:
                    _checkpoint(url)
                    with postgres_scratch.scratch_database(url, args.postgres_prefix) as target:
                        results[name] = _measure(engine, target, run_file, args, first,
                                                 ms / 1000)
                results[name]["every ms"] = ms
                _report(engine, results[name], args, writers)
    if len(results) > 1:
        _summary(results)


if __name__ == "__main__":
    main()
