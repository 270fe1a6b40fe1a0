"""What authorisation costs: record_label in local mode vs team mode, and scoped reads.

Prints per-call times (median of 3 runs of N calls) for record_label without
members (local single-user mode) and with a team (authorize() inside the
transaction), and for readable_document / displayable_text in a team corpus.

    python benchmarks/bench_access.py [N]
"""

import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from evalcore.store.connection import open_store
from evalcore.store.corpus import DocumentIn, add_documents
from evalcore.store.labels import record_label
from evalcore.store.members import add_member
from evalcore.store.scoping import displayable_text, readable_document
from evalcore.store.studies import StudyIn
from evalcore.store.study_handle import open_study
from evalcore.store.study_setup import create_study


def _store(root: Path, team: bool):
    db = open_store(root / f"{'team' if team else 'local'}.sqlite")
    create_study(db, StudyIn(study_id="s", corpus_id="c", org_id="acme"))
    add_documents(db, "c", [DocumentIn(doc_id=f"d{i}", title=f"t{i}", text=f"text {i}",
                                       owner_org="acme" if i % 2 else "globex",
                                       created_at=datetime(2026, 1, 1, tzinfo=UTC))
                            for i in range(1000)])
    if team:
        add_member(db, study_id="s", user="lead@acme.org", role="lead", actor="lead@acme.org")
        add_member(db, study_id="s", user="ann@acme.org", role="annotator",
                   actor="lead@acme.org")
    return db


def _time(fn, n: int) -> float:
    runs = []
    for _ in range(3):
        started = time.perf_counter()
        for i in range(n):
            fn(i)
        runs.append((time.perf_counter() - started) / n)
    return statistics.median(runs)


def main(n: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        local, team = _store(root, False), _store(root, True)
        for name, db in (("local mode", local), ("team mode", team)):
            per = _time(lambda i, db=db: record_label(
                db, study_id="s", query_id=f"q{i % 50}", unit_id=f"d{i % 1000}", gain=i % 3,
                annotator="ann@acme.org"), n)
            print(f"record_label, {name}: {per * 1e6:8.1f} us/label")
        per = _time(lambda i: readable_document(team, "ann@acme.org", "c", f"d{i % 1000}"), n)
        print(f"readable_document, team corpus: {per * 1e6:8.1f} us/call")
        handle = open_study(team, "s", "ann@acme.org")
        per = _time(lambda i: displayable_text(handle, unit_id=f"d{i % 1000}"), n)
        print(f"displayable_text, team study: {per * 1e6:8.1f} us/call")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1000)
