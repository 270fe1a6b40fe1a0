"""Round trip of a whole study: ``export study`` -> ``import study`` -> ``export study``.

Builds a team study of N queries (default 10,000) with 100 results per query in
one run, 10 label events per query, every query complete and one frozen
reference, over a corpus of N * 10 documents (every tenth owned by a second
organisation, which the lead belongs to as well); then prints the archive size,
the export and import times, the longest write transaction of the import (each
timed inside this process) and whether the second export's members equal the
first's (all but manifest.json and audit.jsonl). Last, side by side on the same
store: the export by a lead of the first organisation only (every result's score
checked against what they may read, the other organisation's documents and
scores left out) against the lead's, and a signed export and verified read
against unsigned ones.

    python benchmarks/bench_study_archive.py [--queries 10000]
"""

import argparse
import contextlib
import os
import tempfile
import time
import zipfile
from datetime import UTC, datetime
from pathlib import Path

LEAD = "lena@acme.org"
LEO = "leo@acme.org"  # a lead of the study in acme only


def _build(path: Path, queries: int) -> None:
    from evalcore.store.connection import open_store
    from evalcore.store.corpus import DocumentIn, add_documents
    from evalcore.store.imports.common import mark_queries_complete
    from evalcore.store.members import add_member
    from evalcore.store.references import freeze_reference
    from evalcore.store.runs import add_run
    from evalcore.store.studies import QueryIn, StudyIn, create_organisation
    from evalcore.store.study_setup import add_queries, create_study
    from evalcore.store.transaction import write_transaction

    db = open_store(path)
    create_study(db, StudyIn(study_id="big", corpus_id="c", org_id="acme"))
    add_member(db, study_id="big", user=LEAD, role="lead", actor=LEAD)
    add_member(db, study_id="big", user=LEO, role="lead", actor=LEAD)
    create_organisation(db, "globex", actor=LEAD)
    when = datetime(2025, 1, 1, tzinfo=UTC)
    add_documents(db, "c", (DocumentIn(doc_id=f"d{i}", title=f"title {i}", text=f"text of {i}",
                                       owner_org="globex" if i % 10 == 9 else "acme",
                                       created_at=when)
                            for i in range(queries * 10)), actor=LEAD)
    add_queries(db, "big", [QueryIn(query_id=f"q{q}", text=f"query {q}") for q in range(queries)],
                actor=LEAD)
    add_run(db, study_id="big", name="r1", source="imported", k=100, actor=LEAD,
            results=((f"q{q}", r + 1, f"d{(q * 7 + r) % (queries * 10)}", 100.0 - r)
                     for q in range(queries) for r in range(100)))
    with write_transaction(db):
        db.conn.executemany(
            "INSERT INTO label_events (study_id, query_id, unit_id, kind, gain, annotator, "
            "created_at, note, source) VALUES ('big', ?, ?, 'label', ?, ?, "
            "'2025-02-01T00:00:00Z', '', 'app')",
            ((f"q{q}", f"d{(q * 7 + r) % (queries * 10)}", r % 3, LEAD)
             for q in range(queries) for r in range(10)))
        mark_queries_complete(db, study_id="big", query_ids=[f"q{q}" for q in range(queries)],
                              actor=LEAD, reason="bench")
    freeze_reference(db, study_id="big", name="v1", actor=LEAD)
    db.conn.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=10_000)
    args = parser.parse_args()
    import evalcore.store.study_archive as archive_module
    from evalcore.store.connection import open_store

    holds: list[float] = []
    real = archive_module.write_transaction

    @contextlib.contextmanager
    def timed(db):  # type: ignore[no-untyped-def]
        started = time.perf_counter()
        with real(db) as inner:
            yield inner
        holds.append(time.perf_counter() - started)

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        t0 = time.perf_counter()
        _build(folder / "source.sqlite", args.queries)
        print(f"built {args.queries:,} queries in {time.perf_counter() - t0:.1f} s "
              f"(load {os.getloadavg()[0]:.1f})")
        db = open_store(folder / "source.sqlite")
        first = archive_module.export_study(db, "big", folder / "a.zip", actor=LEAD)
        db.conn.close()
        print(f"export: {first.bytes / 2**20:.1f} MiB archive in {first.seconds:.1f} s "
              f"({first.rows['results.jsonl']:,} results, {first.rows['label_events.jsonl']:,} "
              f"label events, {first.rows['documents.jsonl']:,} documents)")
        target = open_store(folder / "target.sqlite")
        archive_module.write_transaction = timed
        started = time.perf_counter()
        with tempfile.TemporaryDirectory() as work:
            opened = archive_module.read_archive(folder / "a.zip", Path(work))
            checked = time.perf_counter() - started
            archive_module.import_study(target, opened, actor=LEAD)
        archive_module.write_transaction = real
        print(f"import: {time.perf_counter() - started:.1f} s (unpack and check {checked:.1f} s), "
              f"{len(holds):,} write transactions, longest {max(holds) * 1000:.0f} ms, "
              f"final (history) {holds[-1] * 1000:.0f} ms")
        second = archive_module.export_study(target, "big", folder / "b.zip", actor=LEAD)
        with zipfile.ZipFile(folder / "a.zip") as a, zipfile.ZipFile(folder / "b.zip") as b:
            differ = sorted(n for n in a.namelist() if a.read(n) != b.read(n))
        print(f"second export {second.seconds:.1f} s; members that differ: {differ}")
        _redaction_and_signing(folder, archive_module, open_store)


def _redaction_and_signing(folder: Path, archive_module, open_store) -> None:  # type: ignore[no-untyped-def]
    """The lead's export against an acme-only lead's, and signed against unsigned, on the
    same store in the same run (ratios; machines are noisy)."""
    db = open_store(folder / "source.sqlite")
    key = b"k" * 32
    times: dict[str, float] = {}
    for name, actor, signing_key in (("lead", LEAD, None), ("acme-only lead", LEO, None),
                                     ("lead, signed", LEAD, key)):
        started = time.perf_counter()
        summary = archive_module.export_study(db, "big", folder / f"{name}.zip", actor=actor,
                                              signing_key=signing_key)
        times[name] = time.perf_counter() - started
        print(f"export by {name}: {times[name]:.1f} s, {summary.rows['documents.jsonl']:,} "
              f"documents, withheld: {summary.withheld or 'nothing'}")
    db.conn.close()
    print(f"ratio acme-only / lead: {times['acme-only lead'] / times['lead']:.2f}; "
          f"signed / unsigned: {times['lead, signed'] / times['lead']:.2f}")
    for name, signing_key in (("lead", None), ("lead, signed", key)):
        started = time.perf_counter()
        with tempfile.TemporaryDirectory() as work:
            opened = archive_module.read_archive(folder / f"{name}.zip", Path(work),
                                                 signing_key=signing_key)
        times[f"read {name}"] = time.perf_counter() - started
        print(f"read and check {name}: {times[f'read {name}']:.1f} s ({opened.origin.note[:40]})")
    print(f"ratio verified / unverified read: "
          f"{times['read lead, signed'] / times['read lead']:.2f}")


if __name__ == "__main__":
    main()
