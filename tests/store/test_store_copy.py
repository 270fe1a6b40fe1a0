"""A whole store copied between SQLite and PostgreSQL (``evalcore migrate-store``).

The demo study plus everything else a store holds (a frozen reference, a stored report,
drafts, a sample with a non-response, automatic imports, audit rows, a run with NULL and
awkward float scores) goes SQLite -> PostgreSQL -> SQLite: every table's rows (with their
keys and rowids) come back equal, the study archive exported from the SQLite source and
from the PostgreSQL copy is byte-identical, and evaluating and comparing the runs gives
the same output on both. A target holding rows is refused; a failure or Ctrl-C mid-copy
leaves the target without a row and its triggers as they were.

The PostgreSQL tests take their databases from the session's throwaway cluster
(``postgres_cluster``, tests/conftest.py: skipped, or failed under
RELEVANCE_LEDGER_REQUIRE_POSTGRES=1, without PostgreSQL); the SQLite -> SQLite tests
always run.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner
from postgres_cluster import Cluster

from evalcore.cli import main
from evalcore.demo.study import DEMO_STUDY_ID, build_demo
from evalcore.estimation.stored import draw_stored_sample
from evalcore.report.from_store import report_from_store
from evalcore.report.stored import save_report
from evalcore.store import dialect, store_copy
from evalcore.store.automatic_labels import write_automatic_import
from evalcore.store.connection import open_store
from evalcore.store.corpus import DocumentIn, add_documents
from evalcore.store.drafts import save_draft
from evalcore.store.labels import record_label
from evalcore.store.references import freeze_reference
from evalcore.store.runs import add_run
from evalcore.store.samples import record_nonresponse
from evalcore.store.store_copy import StoreCopyFailed, StoreCopyRefused, copy_store
from evalcore.store.study_handle import open_study
from evalcore.store.transaction import read_snapshot

LEAD = "demo"
RUNS = ("bm25-plain", "bm25-title-boost")
#: Scores a float column must keep to the last bit (and a NULL).
ODD_SCORES = (0.1 + 0.2, 1e-300, -0.0, 123456789.123456789, None, 2.0 ** 60 + 0.5, -7.25e-9)


# -- stores ---------------------------------------------------------------------------


@pytest.fixture
def pg_url(postgres_cluster: Cluster) -> Iterator[str]:
    """A fresh, empty database of the session's throwaway cluster, for this test alone."""
    with postgres_cluster.fresh_database(prefix="copy") as url:
        yield url


def _build(path: Path) -> None:
    """The demo study and one of everything else a store holds."""
    db = open_store(path)
    build_demo(db)
    add_documents(db, "northwind-kb", [DocumentIn(
        doc_id="kb-odd", title="tab\tnew\nline ü 𝄞 'quote' \\ back", text="",
        owner_org=None, created_at=datetime(2025, 1, 1, 12, 30, tzinfo=UTC))], actor=LEAD)
    add_run(db, study_id=DEMO_STUDY_ID, name="odd-scores", source="imported", k=len(ODD_SCORES),
            actor=LEAD, results=[("q01", rank, f"kb-{rank:04d}", score)
                                 for rank, score in enumerate(ODD_SCORES, start=1)])
    record_label(db, study_id=DEMO_STUDY_ID, query_id="q01", unit_id="kb-odd", gain=2,
                 annotator="carol", note="copied as is")
    freeze_reference(db, study_id=DEMO_STUDY_ID, name="v1", actor=LEAD)
    save_report(db, report_from_store(open_study(db, DEMO_STUDY_ID, LEAD), runs=list(RUNS),
                                      created_by=LEAD, name="rep1", reference="v1"))
    save_draft(db, study_id=DEMO_STUDY_ID, query_id="q03", unit_id="kb-0007", annotator="bob",
               note="half-way", skipped=True)
    view = draw_stored_sample(db, study_id=DEMO_STUDY_ID, name="smp", candidate=RUNS[1],
                              baseline=RUNS[0], measures=["P@10"], size=5, seed=3, actor=LEAD)
    first = view.units()[0]
    record_nonresponse(db, study_id=DEMO_STUDY_ID, name="smp", query_id=first.query_id,
                       unit_id=first.unit_id, kind="cant_judge", annotator="alice")
    write_automatic_import(db, study_id=DEMO_STUDY_ID, source="llm", file="llm.jsonl",
                           format="jsonl", labels=[("q01", "kb-0002", 3), ("q02", "kb-0005", 0)],
                           actor=LEAD)
    db.conn.close()


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("copy") / "source.sqlite"
    _build(path)
    return path


def _rows(target: str | Path) -> dict[str, list[tuple]]:
    """Every copied table's rows (their columns by name, rowid among them), sorted."""
    db = open_store(target)
    try:
        out = {}
        with read_snapshot(db):
            for table in set(dialect.tables_in_dependency_order(db)) - store_copy.NOT_COPIED:
                columns = sorted(dialect.copy_columns(db, table))
                out[table] = sorted(
                    (row for rows in dialect.read_rows(db, table, columns, 1000) for row in rows),
                    key=repr)
        return out
    finally:
        db.conn.close()


def _empty(target: str | Path) -> dict[str, int]:
    """Tables of ``target`` holding rows (none for an empty store, its identity aside)."""
    db = open_store(target)
    try:
        return {t: dialect.count_rows(db, t) for t in dialect.tables_in_dependency_order(db)
                if t not in store_copy.NOT_COPIED and dialect.has_rows(db, t)}
    finally:
        db.conn.close()


def _cli(*args: object) -> tuple[int, str]:
    result = CliRunner().invoke(main, [str(a) for a in args])
    return result.exit_code, result.output + (result.stderr if result.stderr_bytes else "")


def _float_bits(rows: list[tuple]) -> list[str]:
    return [v.hex() if isinstance(v, float) else repr(v) for row in rows for v in row]


# -- SQLite -> SQLite (no server needed) -------------------------------------------------


def test_a_sqlite_copy_keeps_every_row_key_and_float_but_not_the_store_identity(
        source: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy.sqlite"
    seen: list[str] = []
    summary = copy_store(source, copy, batch=64, on_table=lambda t: seen.append(t.table))
    assert seen == [t.table for t in summary.tables] and "label_events" in seen
    assert seen.index("studies") < seen.index("label_events")
    assert seen.index("samples") < seen.index("sample_units")
    assert seen.index("reference_versions") < seen.index("reference_seals")
    original, copied = _rows(source), _rows(copy)
    assert copied == original
    assert _float_bits(copied["results"]) == _float_bits(original["results"])
    assert summary.rows == sum(len(rows) for rows in original.values())
    db = open_store(copy)
    try:
        # another store to the caches: its own identity, not the source's
        ids = [db.execute("SELECT store_id FROM store_identity").fetchall()]
        other = open_store(source)
        ids.append(other.execute("SELECT store_id FROM store_identity").fetchall())
        other.conn.close()
        assert len(ids[0]) == len(ids[1]) == 1 and ids[0] != ids[1]
        # the insert triggers are back: a new label gets its unit code
        record_label(db, study_id=DEMO_STUDY_ID, query_id="q01", unit_id="kb-brand-new", gain=1,
                     annotator="alice")
        code = db.execute("SELECT unit_code FROM label_events WHERE unit_id = 'kb-brand-new'"
                          ).fetchone()[0]
        assert code is not None
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            db.execute("UPDATE label_events SET gain = 0")
    finally:
        db.conn.close()


def test_a_target_holding_rows_is_refused_and_left_as_it_was(source: Path, tmp_path: Path) -> None:
    target = tmp_path / "busy.sqlite"
    copy_store(source, target)
    before = _rows(target)
    code, text = _cli("migrate-store", "--from", source, "--to", target)
    assert code == 1, text
    assert "is not empty: audit_log" in text and "nothing was written" in text
    assert "Traceback" not in text
    assert _rows(target) == before
    with pytest.raises(StoreCopyRefused, match="same store"):
        copy_store(source, source)


def test_a_store_just_created_with_init_is_an_empty_target(source: Path, tmp_path: Path) -> None:
    target = tmp_path / "inited.sqlite"
    code, text = _cli("init", "--db", target)
    assert code == 0, text
    code, text = _cli("migrate-store", "--from", source, "--to", target)
    assert code == 0, text
    assert "  label_events: " in text and "every table verified" in text
    assert _rows(target) == _rows(source)


def test_a_store_newer_than_this_evalcore_is_refused_on_either_side(source: Path, tmp_path: Path) -> None:
    newer = tmp_path / "newer.sqlite"
    newer.write_bytes(source.read_bytes())
    conn = sqlite3.connect(newer)
    conn.execute("PRAGMA user_version = 999")
    conn.close()
    target = tmp_path / "never.sqlite"
    code, text = _cli("migrate-store", "--from", newer, "--to", target)
    assert code == 1, text
    assert f"cannot open --from {newer}" in text and "schema version 999" in text
    assert "upgrade relevance-ledger" in text and "Traceback" not in text
    assert not target.exists()
    code, text = _cli("migrate-store", "--from", source, "--to", newer)
    assert code == 1 and f"cannot open --to {newer}" in text, text


def _failing_after(rows_before_failure: int, error: BaseException
                   ) -> Callable[..., Iterator[list[tuple]]]:
    """``dialect.read_rows`` that raises ``error`` once ``rows_before_failure`` rows of the
    documents table went by (earlier tables copy whole)."""
    real = dialect.read_rows

    def read_rows(db: object, table: str, columns: list[str], batch: int) -> Iterator[list[tuple]]:
        sent = 0
        for rows in real(db, table, columns, batch):
            if table == "documents" and sent >= rows_before_failure:
                raise error
            sent += len(rows)
            yield rows
    return read_rows


@pytest.mark.parametrize("error", [RuntimeError("disk trouble"), KeyboardInterrupt()])
def test_a_failure_mid_copy_leaves_an_inited_sqlite_target_empty(
        source: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        error: BaseException) -> None:
    target = tmp_path / "target.sqlite"
    open_store(target).conn.close()
    triggers = dialect.insert_triggers(open_store(target))
    monkeypatch.setattr(dialect, "read_rows", _failing_after(100, error))
    with pytest.raises(type(error)):
        copy_store(source, target, batch=50)
    monkeypatch.undo()
    assert _empty(target) == {}
    assert dialect.insert_triggers(open_store(target)) == triggers
    copy_store(source, target)  # and it can be copied into afterwards
    assert _rows(target) == _rows(source)


def test_a_failure_into_a_new_file_leaves_no_file(source: Path, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "new.sqlite"
    monkeypatch.setattr(dialect, "read_rows", _failing_after(0, RuntimeError("boom")))
    with pytest.raises(RuntimeError):
        copy_store(source, target)
    assert not target.exists()


def test_a_checksum_mismatch_names_the_table_and_commits_nothing(
        source: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "target.sqlite"
    open_store(target).conn.close()
    real = dialect.write_rows

    def altering(db: object, table: str, columns: list[str], batches: object) -> None:
        if table != "queries":
            return real(db, table, columns, batches)
        text = columns.index("text")
        return real(db, table, columns, ([r[:text] + ("tampered",) + r[text + 1:] for r in rows]
                                         for rows in batches))
    monkeypatch.setattr(dialect, "write_rows", altering)
    with pytest.raises(StoreCopyFailed, match="table queries did not copy exactly"):
        copy_store(source, target)
    assert _empty(target) == {}


def test_the_checksum_ignores_order_and_sees_types_duplicates_and_float_bits() -> None:
    rows = [(1, "a", None, b"\x00"), (2, "b", 0.5, b"")]
    assert store_copy.row_checksum(rows) == store_copy.row_checksum(rows[::-1])
    assert store_copy.row_checksum(rows) != store_copy.row_checksum(rows + rows[:1])
    assert store_copy.row_checksum([(1,)]) != store_copy.row_checksum([("1",)])
    assert store_copy.row_checksum([(1,)]) != store_copy.row_checksum([(1.0,)])
    assert store_copy.row_checksum([(0.0,)]) != store_copy.row_checksum([(-0.0,)])
    assert store_copy.row_checksum([("ab", "c")]) != store_copy.row_checksum([("a", "bc")])


# -- through PostgreSQL -------------------------------------------------------------------


@pytest.fixture(scope="module")
def round_trip(source: Path, tmp_path_factory: pytest.TempPathFactory,
               postgres_cluster: Cluster) -> Iterator[tuple[str, Path]]:
    """The source copied to a PostgreSQL database, and that copied back to a SQLite file."""
    back = tmp_path_factory.mktemp("back") / "back.sqlite"
    with postgres_cluster.fresh_database(prefix="copy") as url:
        code, text = _cli("migrate-store", "--from", source, "--to", url)
        assert code == 0, text
        code, text = _cli("migrate-store", "--from", url, "--to", back)
        assert code == 0, text
        yield url, back


def test_sqlite_to_postgresql_and_back_keeps_every_row(source: Path,
                                                       round_trip: tuple[str, Path]) -> None:
    url, back = round_trip
    original = _rows(source)
    on_postgres = _rows(url)
    assert on_postgres == original
    assert _float_bits(on_postgres["results"]) == _float_bits(original["results"])
    assert _rows(back) == original


def test_the_postgresql_copy_takes_new_rows_after_the_copied_keys(
        round_trip: tuple[str, Path], pg_url: str) -> None:
    import psycopg

    url, _ = round_trip
    copy_store(url, pg_url)  # PostgreSQL -> PostgreSQL
    db = open_store(pg_url)
    try:
        assert dialect.disabled_triggers(db) == []
        largest = db.execute("SELECT max(event_id) FROM label_events").fetchone()[0]
        record_label(db, study_id=DEMO_STUDY_ID, query_id="q01", unit_id="kb-new-on-pg",
                     gain=1, annotator="alice")
        event_id, code = db.execute(
            "SELECT event_id, unit_code FROM label_events WHERE unit_id = 'kb-new-on-pg'"
        ).fetchone()
        assert event_id == largest + 1 and code is not None
        generation = db.execute("SELECT generation FROM corpus_generations").fetchone()[0]
        add_documents(db, "northwind-kb", [DocumentIn(
            doc_id="kb-pg", title="t", text="x", owner_org=None,
            created_at=datetime(2025, 1, 1, tzinfo=UTC))], actor=LEAD)
        assert db.execute("SELECT generation FROM corpus_generations").fetchone()[0] > generation
        with pytest.raises(psycopg.IntegrityError, match="append-only"):
            db.execute("UPDATE label_events SET gain = 0")
    finally:
        db.conn.close()


def test_the_study_archive_is_byte_identical_from_either_side(
        source: Path, round_trip: tuple[str, Path], tmp_path: Path, pg_url: str,
        monkeypatch: pytest.MonkeyPatch) -> None:
    from evalcore.store import study_archive

    monkeypatch.setattr(study_archive, "utc_now_iso", lambda: "2026-12-06T12:00:00Z")
    url, back = round_trip
    archives = {}
    for name, where in (("sqlite", source), ("postgresql", url), ("back", back)):
        # each export from a copy of the side (an export writes its audit row)
        scratch = pg_url if name == "postgresql" else tmp_path / f"{name}-scratch.sqlite"
        copy_store(where, scratch)
        out = tmp_path / f"{name}.zip"
        code, text = _cli("export", "study", "--db", scratch, "--study", DEMO_STUDY_ID,
                          "--out", out, "--actor", LEAD)
        assert code == 0, text
        archives[name] = out.read_bytes()
    assert archives["postgresql"] == archives["sqlite"]
    assert archives["back"] == archives["sqlite"]


def _compare(where: str | Path, reference: str | None, sample: str | None = None) -> str:
    """What ``evalcore compare --format json`` computes (its bottom line, decisions, queues,
    paired tests and the sample's estimate), as JSON."""
    from evalcore.analysis.decision import stored_pair
    from evalcore.analysis.pair_comparison import measure_verdicts
    from evalcore.analysis.query_set import QuerySetSpec, resolve_stored_query_set
    from evalcore.contract.measures import parse_measure
    from evalcore.estimation.stored import estimate_json, estimate_stored

    db = open_store(where)
    try:
        handle = open_study(db, DEMO_STUDY_ID, LEAD)
        measures = [parse_measure(m) for m in ("P@10", "nDCG@10")]
        query_set = resolve_stored_query_set(handle, list(RUNS), QuerySetSpec.parse("all"), reference)
        evaluated = stored_pair(handle, RUNS[1], RUNS[0], measures, reference,
                                query_ids=query_set.scope)
        parts = [query_set.record().model_dump_json(), *evaluated.notes()]
        for item in measure_verdicts(evaluated.pair, RUNS[1], RUNS[0], queue_limit=5):
            parts += [item.decision.model_dump_json(), item.paired.model_dump_json(),
                      item.queue.model_dump_json() if item.queue else ""]
        if sample is not None:
            estimates = estimate_stored(handle, sample, candidate=RUNS[1], baseline=RUNS[0],
                                        measures=["P@10"], level=0.95,
                                        query_ids=evaluated.pair.query_ids, automatic=None)
            parts += [json.dumps(estimate_json(e), sort_keys=True)
                      for e in estimates.by_measure().values()]
        return "\n".join(parts)
    finally:
        db.conn.close()


def test_evaluate_and_compare_say_the_same_on_either_side(
        source: Path, round_trip: tuple[str, Path]) -> None:
    from evalcore.api.report_text import report_text
    from evalcore.cli.store_source import store_source
    from evalcore.compute.evaluate import compute
    from evalcore.contract.evaluation_protocol import EvalProtocol
    from evalcore.contract.measures import parse_measure

    url, _ = round_trip
    outputs: dict[str, list[str]] = {}
    measures = tuple(parse_measure(m) for m in ("nDCG@5", "P@5", "RR@5", "Judged@5"))
    for name, where in (("sqlite", source), ("postgresql", url)):
        texts = []
        for reference in (None, "v1"):
            for run in (*RUNS, "odd-scores"):
                protocol = EvalProtocol()
                loaded = store_source(where, DEMO_STUDY_ID, run, reference, protocol, measures,
                                      actor=LEAD)
                result = compute(loaded.batch, protocol, measures)
                texts.append(report_text(result, loaded.diagnostics.tied_score_pairs,
                                         loaded.diagnostics.notes))
            texts.append(_compare(where, reference))
        texts.append(_compare(where, None, sample="smp"))
        outputs[name] = texts
    assert all(outputs["sqlite"]) and outputs["postgresql"] == outputs["sqlite"]


def test_a_postgresql_target_holding_rows_is_refused(source: Path, pg_url: str) -> None:
    copy_store(source, pg_url)
    code, text = _cli("migrate-store", "--from", source, "--to", pg_url)
    assert code == 1, text
    assert "is not empty" in text and "Traceback" not in text


@pytest.mark.parametrize("error", [RuntimeError("network down"), KeyboardInterrupt()])
def test_a_failure_mid_copy_leaves_the_postgresql_target_empty(
        source: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch, error: BaseException) -> None:
    db = open_store(pg_url)
    triggers = dialect.insert_triggers(db)
    db.conn.close()
    monkeypatch.setattr(dialect, "read_rows", _failing_after(100, error))
    with pytest.raises(type(error)):
        copy_store(source, pg_url, batch=50)
    monkeypatch.undo()
    assert _empty(pg_url) == {}
    db = open_store(pg_url)
    try:
        assert dialect.insert_triggers(db) == triggers and dialect.disabled_triggers(db) == []
    finally:
        db.conn.close()


def test_a_value_postgresql_cannot_hold_fails_naming_the_table(tmp_path: Path,
                                                               pg_url: str) -> None:
    nul = tmp_path / "nul.sqlite"
    db = open_store(nul)
    build_demo(db)
    db.execute("INSERT INTO organisations (org_id, name) VALUES (?, ?)", ["zz", "nul \x00 in"])
    db.conn.close()
    code, text = _cli("migrate-store", "--from", nul, "--to", pg_url)
    assert code == 1, text
    assert "copying table organisations failed" in text and "Traceback" not in text
    assert _empty(pg_url) == {}


def test_rows_travel_in_bounded_batches(source: Path, tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    sizes: dict[str, list[int]] = {}
    real = dialect.write_rows

    def watched(db: object, table: str, columns: list[str], batches: Iterator[list[tuple]]) -> None:
        assert not isinstance(batches, (list, tuple))  # a stream, not the table

        def noted() -> Iterator[list[tuple]]:
            for rows in batches:
                sizes.setdefault(table, []).append(len(rows))
                yield rows
        real(db, table, columns, noted())
    monkeypatch.setattr(dialect, "write_rows", watched)
    monkeypatch.setattr(dialect, "BATCH_BYTES", 4_000)  # a packed ranking of 10 is ~350 B
    copy_store(source, tmp_path / "copy.sqlite", batch=40)
    assert max(max(s) for s in sizes.values()) <= 40
    assert sum(sizes["results"]) > 500 and max(sizes["results"]) == 40
    assert max(sizes["run_rankings"][1:]) <= 12  # wide rows: fewer per batch


def test_sqlites_truth_values_and_unnamed_subqueries_translate_to_postgresql() -> None:
    # what the archive export and the visibility rule write, which PostgreSQL refused
    assert dialect.to_postgres("SELECT a FROM t WHERE x = ? AND 1") == (
        "SELECT a FROM t WHERE x = %s AND TRUE")
    assert dialect.to_postgres("SELECT a FROM t WHERE (o IS NULL AND ?) OR NOT 0") == (
        "SELECT a FROM t WHERE (o IS NULL AND (CAST(%s AS BIGINT) <> 0)) OR NOT FALSE")
    assert dialect.to_postgres("SELECT a FROM (SELECT a FROM t) JOIN (SELECT b FROM u) ON 1") == (
        "SELECT a FROM (SELECT a FROM t) AS subquery_0 JOIN (SELECT b FROM u) AS subquery_1 "
        "ON TRUE")
    assert dialect.to_postgres("SELECT 1 AS one, a + 1 FROM t WHERE a = 1 LIMIT 1") == (
        "SELECT 1 AS one, a + 1 FROM t WHERE a = 1 LIMIT 1")
