"""Child-process bodies for the store reliability tests (spawned, so importable by name)."""

import multiprocessing
import sys
import time
import types
from collections.abc import Callable, Iterator
from multiprocessing.process import BaseProcess
from pathlib import Path


def write_labels(db_path: str, annotator: str, n: int, start_flag: str) -> None:
    """Wait for the start flag, then record ``n`` label events, one transaction each."""
    from evalcore.store.connection import open_store
    from evalcore.store.labels import record_label

    db = open_store(db_path)
    while not Path(start_flag).exists():
        time.sleep(0.005)
    for i in range(n):
        record_label(db, study_id="s", query_id=f"q{i % 7}", unit_id=f"{annotator}-{i}",
                     gain=i % 5, annotator=annotator)


def import_then_hang(db_path: str, run_file: str, inside_flag: str) -> None:
    """Import a big run; once 50,000 rows are inside the transaction, signal and hang."""
    import evalcore.store.imports.run as run_import
    from evalcore.store.connection import open_store

    original = run_import._rows

    def slow_rows(run: object) -> Iterator[tuple]:
        for i, row in enumerate(original(run)):
            if i == 50_000:
                Path(inside_flag).write_text("inside the transaction")
                time.sleep(120)
            yield row

    run_import._rows = slow_rows
    db = open_store(db_path)
    run_import.import_run(db, run_file, study_id="s", k=10)


def start_worker(target: Callable[..., None], *args: str) -> BaseProcess:
    """Start ``target(*args)`` in a spawned process that runs no ``__main__`` script.

    A spawned child re-runs the parent's ``__main__`` (as ``__mp_main__``); after
    an AppTest that is the app script, which opens the app's default store. The
    child is started with a bare ``__main__`` in place, so it only imports this module.
    """
    saved = sys.modules["__main__"]
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        process = multiprocessing.get_context("spawn").Process(target=target, args=args)
        process.start()
    finally:
        sys.modules["__main__"] = saved
    return process


def report_main_module(out_file: str) -> None:
    """Write which script, if any, this child re-ran as its main module."""
    main = sys.modules.get("__mp_main__")
    Path(out_file).write_text(str(getattr(main, "__file__", None)))


def label_until(db_path: str, annotator: str, stop_flag: str, started_flag: str) -> None:
    """Record label events, one transaction each, until the stop flag appears."""
    from evalcore.store.connection import open_store
    from evalcore.store.labels import record_label

    db = open_store(db_path)
    i = 0
    while not Path(stop_flag).exists():
        record_label(db, study_id="s", query_id=f"q{i % 7}", unit_id=f"{annotator}-{i}",
                     gain=i % 5, annotator=annotator)
        i += 1
        if i == 20:
            Path(started_flag).write_text("labeling")
