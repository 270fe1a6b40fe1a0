"""Automatic judgments in the store: imported apart from human labels, all or nothing,
lead-only, audited, staged until published, and never label events."""

from __future__ import annotations

import json
import socket
from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner

from evalcore.access.decisions import PermissionDenied
from evalcore.cli import main
from evalcore.io.errors import InputErrors
from evalcore.io.text_lines import SourceText
from evalcore.store import automatic_labels as store_auto
from evalcore.store.audit import audit_entries
from evalcore.store.automatic_labels import (
    automatic_labels,
    automatic_sources,
    write_automatic_import,
)
from evalcore.store.connection import open_store
from evalcore.store.corpus import DocumentIn, add_documents
from evalcore.store.imports.automatic_labels import import_automatic_labels
from evalcore.store.labels import record_label
from evalcore.store.study_handle import open_study
from tests.access_fixtures import ANNOTATOR, LEAD, team_store
from tests.store_fixtures import new_store, table_snapshot

QRELS = "q1 0 d1 3\nq1 0 d2 0\nq2 0 d3 1\n"


def _src(text: str, name: str = "judge.txt") -> SourceText:
    return SourceText(name, text)


def _label_events(db) -> int:
    return db.execute("SELECT count(*) FROM label_events").fetchone()[0]


@pytest.mark.parametrize(
    ("fmt", "text"),
    [
        ("qrels", QRELS),
        ("csv", "query_id,unit_id,gain\nq1,d1,3\nq1,d2,0\nq2,d3,1\n"),
        (
            "jsonl",
            "".join(
                json.dumps({"query_id": q, "unit_id": u, "gain": g}) + "\n"
                for q, u, g in [("q1", "d1", 3), ("q1", "d2", 0), ("q2", "d3", 1)]
            ),
        ),
    ],
)
def test_each_format_is_stored_apart_with_its_source(tmp_path: Path, fmt: str, text: str, store_target) -> None:
    db = new_store(store_target)
    record_label(db, study_id="s", query_id="q1", unit_id="d1", gain=1, annotator="alice")
    events = _label_events(db)
    summary = import_automatic_labels(
        db, _src(text), study_id="s", name="gpt-judge", format=fmt, actor="lena"
    )  # type: ignore[arg-type]
    assert summary.rows == 3 and summary.queries == 2
    assert _label_events(db) == events  # never a label event
    assert automatic_labels(open_study(db, "s", None)) == {
        "gpt-judge": {("q1", "d1"): 3, ("q1", "d2"): 0, ("q2", "d3"): 1}
    }
    (source,) = automatic_sources(open_study(db, "s", None))
    assert (source.source, source.n_labels, source.n_imports) == ("gpt-judge", 3, 1)
    assert (source.last_imported_by, source.last_file) == ("lena", "judge.txt")
    assert source.last_imported_at.endswith("Z")
    entry = [
        e for e in audit_entries(open_study(db, "s", None)) if e.action == "import.automatic-labels"
    ]
    assert len(entry) == 1 and entry[0].actor == "lena"
    assert entry[0].detail["source"] == "gpt-judge" and entry[0].detail["labels"] == 3


def test_a_later_import_of_the_source_replaces_only_its_units(tmp_path: Path, store_target) -> None:
    db = new_store(store_target)
    import_automatic_labels(db, _src(QRELS), study_id="s", name="j")
    import_automatic_labels(db, _src("q1 0 d1 0\nq3 0 d9 4\n"), study_id="s", name="j")
    import_automatic_labels(db, _src("q1 0 d1 2\n"), study_id="s", name="other")
    got = automatic_labels(open_study(db, "s", None))
    assert got["j"] == {("q1", "d1"): 0, ("q1", "d2"): 0, ("q2", "d3"): 1, ("q3", "d9"): 4}
    assert got["other"] == {("q1", "d1"): 2}
    assert automatic_labels(open_study(db, "s", None), ["q2"], sources=["j"]) == {
        "j": {("q2", "d3"): 1}
    }
    assert [s.n_imports for s in automatic_sources(open_study(db, "s", None))] == [2, 1]


@pytest.mark.parametrize(
    ("fmt", "text", "where"),
    [
        ("qrels", "q1 0 d1 3\nq1 0 d2 high\n", "judge.txt:2: gain"),
        ("qrels", "q1 0 d1 3\nq1 0 d1 1\n", "judge.txt:2: gain"),
        ("csv", "query_id,unit_id,gain\nq1,d1,3\nq1,d1,2\n", "judge.txt:3: gain"),
        ("csv", "query_id,unit_id,gain\nq1,d1,3\nq1,d2,9\n", "judge.txt:3: gain"),
        (
            "jsonl",
            '{"query_id": "q1", "unit_id": "d1", "gain": 2}\n'
            '{"query_id": "q1", "unit_id": "d1", "kind": "undo", "annotator": "x", '
            '"created_at": "2026-01-01T00:00:00Z"}\n',
            "judge.txt:2: kind",
        ),
    ],
)
def test_a_bad_file_names_file_line_and_field_and_writes_nothing(
    tmp_path: Path, fmt: str, text: str, where: str, store_target
) -> None:
    db = new_store(store_target)
    import_automatic_labels(db, _src(QRELS), study_id="s", name="j")
    before = table_snapshot(db)
    with pytest.raises(InputErrors) as caught:
        import_automatic_labels(db, _src(text), study_id="s", name="j", format=fmt)  # type: ignore[arg-type]
    assert where in str(caught.value), str(caught.value)
    assert table_snapshot(db) == before


def test_bad_source_names_and_unknown_units_are_refused(tmp_path: Path, store_target) -> None:
    db = new_store(store_target)
    with pytest.raises(ValueError, match="source name"):
        import_automatic_labels(db, _src(QRELS), study_id="s", name="has space")
    add_documents(
        db,
        "c",
        [DocumentIn(doc_id="d1", title="t", text="x", created_at=datetime(2026, 1, 1, tzinfo=UTC))],
    )
    with pytest.raises(InputErrors, match="not in corpus"):
        import_automatic_labels(db, _src(QRELS), study_id="s", name="j")
    assert automatic_labels(open_study(db, "s", None)) == {}
    import_automatic_labels(db, _src(QRELS), study_id="s", name="j", allow_unknown_ids=True)
    assert len(automatic_labels(open_study(db, "s", None))["j"]) == 3


def test_only_a_lead_imports_in_team_mode(tmp_path: Path, store_target) -> None:
    db, _ = team_store(store_target)
    before = table_snapshot(db)
    with pytest.raises(PermissionDenied):
        import_automatic_labels(db, _src("q1 0 a1 2\n"), study_id="s", name="j", actor=ANNOTATOR)
    assert table_snapshot(db) == before
    import_automatic_labels(db, _src("q1 0 a1 2\n"), study_id="s", name="j", actor=LEAD)
    assert automatic_labels(open_study(db, "s", ANNOTATOR)) == {"j": {("q1", "a1"): 2}}


def test_a_staged_import_is_invisible_and_a_failed_one_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, store_target
) -> None:
    db = new_store(store_target)
    before = table_snapshot(db)
    monkeypatch.setattr(store_auto, "CHUNK", 1)
    seen: list[dict] = []
    real = store_auto.authorize

    def publish_fails(*args, **kwargs):
        real(*args, **kwargs)
        seen.append(automatic_labels(open_study(db, "s", None)))
        if len(seen) == 2:  # the publishing transaction: every label written, none visible
            raise RuntimeError("disk full")

    monkeypatch.setattr(store_auto, "authorize", publish_fails)
    with pytest.raises(RuntimeError, match="disk full"):
        write_automatic_import(
            db,
            study_id="s",
            source="j",
            file="f",
            format="qrels",
            labels=[("q1", "d1", 1), ("q1", "d2", 2)],
            actor="lena",
        )
    assert seen == [{}, {}]
    assert db.execute("SELECT count(*) FROM automatic_labels").fetchone()[0] == 0
    assert table_snapshot(db) == before


def test_an_abandoned_staged_import_is_discarded_on_open(tmp_path: Path, store_target) -> None:
    db = new_store(store_target)
    before = table_snapshot(db)
    db.execute(
        "INSERT INTO automatic_imports (study_id, source, file, format, imported_by, "
        "imported_at, n_labels, staged_by) VALUES ('s', 'j', 'f', 'qrels', 'x', "
        "'2026-01-01T00:00:00Z', 1, ?)",
        [f"{socket.gethostname()}:999999999"],
    )
    import_id = db.execute("SELECT max(import_id) FROM automatic_imports").fetchone()[0]
    db.execute("INSERT INTO automatic_labels VALUES (?, 'q1', 'd1', 2)", [import_id])
    db.conn.commit()
    assert automatic_labels(open_study(db, "s", None)) == {}
    reopened = open_store(store_target)
    assert table_snapshot(reopened) == before


def test_cli_imports_automatic_labels_and_refuses_wrong_combinations(tmp_path: Path, store_target) -> None:
    db = new_store(store_target)
    path = tmp_path / "judge.qrels"
    path.write_text(QRELS)
    runner = CliRunner()
    base = ["import", "labels", "--db", str(store_target), "--study", "s", str(path)]
    ok = runner.invoke(main, [*base, "--automatic", "llm", "--format", "qrels"])
    assert ok.exit_code == 0, ok.output
    assert "automatic labels (llm, qrels; not evidence)" in ok.output
    assert automatic_labels(open_study(db, "s", None))["llm"][("q1", "d1")] == 3
    human = runner.invoke(main, [*base, "--format", "qrels"])
    assert human.exit_code == 2 and "import qrels" in human.output
    tool = runner.invoke(main, [*base, "--automatic", "llm", "--format", "quepid"])
    assert tool.exit_code == 2 and "automatic judgments are read from" in tool.output
    bad = tmp_path / "bad.qrels"
    bad.write_text("q1 0 d1 2\nq1 0 d2\n")
    failed = runner.invoke(main, [*base[:-1], str(bad), "--automatic", "x", "--format", "qrels"])
    assert failed.exit_code == 2 and "bad.qrels:2" in failed.output
    assert "Traceback" not in failed.output
    assert _label_events(db) == 0


def test_an_automatic_import_moves_the_store_marks(tmp_path: Path, store_target) -> None:
    """Caches keyed by the marks (the to-decide queue's tie-break) see a new import."""
    from evalcore.store.marks import store_marks

    db = new_store(store_target)
    before = store_marks(open_study(db, "s", None))
    import_automatic_labels(db, _src(QRELS), study_id="s", name="j")
    after = store_marks(open_study(db, "s", None))
    assert after != before and after.automatic_import > before.automatic_import
    assert (after.label_event, after.run_ids) == (before.label_event, before.run_ids)
