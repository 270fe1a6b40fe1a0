"""Child-process bodies for the store reliability tests (spawned, so importable by name)."""

import time
from collections.abc import Iterator
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
