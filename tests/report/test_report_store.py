"""Reports through the store: generated from stored runs, saved immutable, and the CLI."""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from store_fixtures import new_store

from evalcore.analysis.compare import ComparisonSettings
from evalcore.cli import main
from evalcore.report.from_store import report_from_store
from evalcore.report.stored import canonical_json, load_report, report_hash, save_report
from evalcore.store.completeness import mark_complete
from evalcore.store.dialect import database_errors
from evalcore.store.labels import record_label
from evalcore.store.references import freeze_reference
from evalcore.store.reports import (
    ReportIntegrityError,
    ReportNotFoundError,
    find_report,
    list_reports,
)
from evalcore.store.runs import add_run
from evalcore.store.studies import QueryIn
from evalcore.store.study_handle import open_study
from evalcore.store.study_setup import add_queries

XSS = "<script>alert(1)</script>"
FP = "sha256:" + "a" * 64
OTHER = "sha256:" + "b" * 64
QUERIES = ["q1", "q2", "q3", XSS]


@pytest.fixture
def store(tmp_path: Path, store_target):
    db = new_store(store_target, study_id="s", corpus_id="c", name="Demo study")
    add_queries(db, "s", [QueryIn(query_id=q, text=f"text of {q}") for q in QUERIES])
    for query in QUERIES:
        for unit, gain in (("d1", 2), ("d2", 0), ("d3", 1)):
            record_label(db, study_id="s", query_id=query, unit_id=unit, gain=gain,
                         annotator="annotator-alice", note="private-note" if unit == "d1" else "")
        mark_complete(db, study_id="s", query_id=query, actor="lead")
    record_label(db, study_id="s", query_id="q1", unit_id="d1", gain=2, annotator="annotator-bob")
    freeze_reference(db, study_id="s", name="v1", actor="lead-lena")
    # A label after the freeze: the v1 report must not see it.
    record_label(db, study_id="s", query_id="q2", unit_id="dX", gain=4, annotator="annotator-bob")
    rankings = {
        "A": ["d1", "d3", "d2"],
        "B": ["d2", "d1", "d3"],
        "C": ["d1", "d2", "d3"],
        "U": ["d9", "d1", "d2"],  # d9 is unlabeled: P@3 unavailable
    }
    for run, units in rankings.items():
        add_run(
            db, study_id="s", name=run, source="imported", k=3,
            results=[(q, r + 1, u, 10.0 - r) for q in QUERIES for r, u in enumerate(units)],
            corpus_fingerprint=OTHER if run == "C" else FP,
        )
    return db


def test_report_from_store_pins_reference_and_marks_not_comparable(store) -> None:
    report = report_from_store(open_study(store, "s", "lead-lena"), runs=["A", "B", "C", "U"], created_by="lead-lena", reference="v1", settings=ComparisonSettings(permutations=200))
    assert report.reference_version == "v1" and report.reference_hash.startswith("sha256:")
    assert report.corpus_fingerprint == FP and report.study_name == "Demo study"
    assert [r.comparable for r in report.runs] == [True, True, False, True]
    assert report.comparison is not None and report.comparison.runs == ["A", "B", "U"]
    # The label recorded after freezing v1 is not in the report.
    q2 = next(q for q in report.run("A").evaluation.queries if q.query_id == "q2")
    assert q2.metrics["recall"].value == pytest.approx(1.0)
    u = report.run("U").evaluation.aggregates["precision"]
    assert not u.available and u.n_missing == 4
    item = report.comparison.comparison("precision", "U", "A")
    assert item.n_paired == 0 and "4 unlabeled_returned in run U" in item.summary
    assert report.internal is not None
    assert report.internal.annotators["q1"] == ["annotator-alice", "annotator-bob"]
    assert report.internal.reference_created_by == "lead-lena"
    assert {n.note for n in report.internal.notes} == {"private-note"}
    assert report.query_texts[XSS] == f"text of {XSS}"


def test_working_labels_report_warns_it_is_not_pinned(store) -> None:
    report = report_from_store(open_study(store, "s", "x"), runs=["A", "B"], created_by="x", settings=ComparisonSettings(permutations=100))
    assert report.reference_version is None
    assert report.warnings[0].startswith("Not pinned to a frozen reference version")


def test_unknown_names_raise_lookup_errors_listing_what_exists(store) -> None:
    with pytest.raises(LookupError, match="runs in this study: A, B, C, U"):
        report_from_store(open_study(store, "s", "x"), runs=["A", "nope"], created_by="x")
    with pytest.raises(LookupError, match="frozen versions: v1"):
        report_from_store(open_study(store, "s", "x"), runs=["A"], created_by="x", reference="v9")


def test_saved_report_round_trips_and_is_immutable(store) -> None:
    report = report_from_store(open_study(store, "s", "lead"), runs=["A", "B"], created_by="lead", reference="v1", name="r1", settings=ComparisonSettings(permutations=100))
    row = save_report(store, report)
    assert row.content_hash == report_hash(report)
    assert load_report(open_study(store, "s", "lead"), row.report_id) == report
    assert report_hash(load_report(open_study(store, "s", "lead"), row.report_id)) == row.content_hash
    assert find_report(open_study(store, "s", None), "r1").report_id == row.report_id
    assert [r.name for r in list_reports(open_study(store, "s", None))] == ["r1"]
    with pytest.raises(database_errors(), match="immutable"):
        store.execute("UPDATE reports SET body_json = '{}' WHERE report_id = ?", [row.report_id])
    with pytest.raises(database_errors(), match="immutable"):
        store.execute("DELETE FROM reports WHERE report_id = ?", [row.report_id])
    with pytest.raises(ValueError, match="already exists"):
        save_report(store, report)
    assert len(list_reports(open_study(store, "s", None))) == 1
    with pytest.raises(ReportNotFoundError, match="stored reports: r1"):
        find_report(open_study(store, "s", None), "r2")


def test_a_report_id_of_another_study_is_not_found_through_this_study(store) -> None:
    report = report_from_store(open_study(store, "s", "lead"), runs=["A"], created_by="lead",
                               reference="v1", name="r1",
                               settings=ComparisonSettings(permutations=100))
    row = save_report(store, report)
    from evalcore.store.studies import StudyIn
    from evalcore.store.study_setup import create_study

    create_study(store, StudyIn(study_id="t", corpus_id="c"))
    with pytest.raises(ReportNotFoundError, match="in study 't'"):
        load_report(open_study(store, "t", None), row.report_id)
    assert load_report(open_study(store, "s", None), row.report_id) == report


def test_tampered_body_is_refused_on_load(store) -> None:
    report = report_from_store(open_study(store, "s", "lead"), runs=["A"], created_by="lead", reference="v1", name="r1", settings=ComparisonSettings(permutations=100))
    body = canonical_json(report).replace('"lead"', '"mallory"')
    store.execute(
        "INSERT INTO reports (study_id, name, reference_version, created_at, created_by, "
        "evalcore_version, body_json, content_hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        ["s", "forged", "v1", report.created_at, "mallory", "0", body, report_hash(report)],
    )
    forged = find_report(open_study(store, "s", None), "forged")
    with pytest.raises(ReportIntegrityError, match="does not match its content hash"):
        load_report(open_study(store, "s", None), forged.report_id)


def _cli(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_cli_generates_stores_and_exports_html(store, tmp_path: Path, store_target) -> None:
    db_path = store_target
    out = tmp_path / "out" / "report.html"
    out.parent.mkdir()  # --out never creates folders (tests/architecture/test_file_permissions.py)
    result = _cli("report", "--db", str(db_path), "--study", "s", "--runs", "A,B,C",
                  "--reference", "v1", "--out", str(out), "--name", "weekly",
                  "--permutations", "100", "--by", "lead-lena")
    assert result.exit_code == 0, result.output
    assert "not comparable: C" in result.output and "HTML written" in result.output
    html = out.read_text(encoding="utf-8")
    assert "Plotly.newPlot(" in html and XSS not in html
    assert "annotator-alice" not in html and "private-note" not in html
    assert "not comparable" in html
    stored = find_report(open_study(store, "s", None), "weekly")
    assert stored.created_by == "lead-lena" and stored.reference_version == "v1"
    # Re-export the stored report as JSON with internal data.
    again = tmp_path / "again.json"
    result = _cli("report", "--db", str(db_path), "--study", "s", "--stored", "weekly",
                  "--out", str(again), "--include-internal")
    assert result.exit_code == 0, result.output
    body = json.loads(again.read_text(encoding="utf-8"))
    assert body["internal"]["reference_created_by"] == "lead-lena"
    assert body["runs"][0]["evaluation"]["aggregates"]["precision"]["status"] == "available"
    csv_out = tmp_path / "q.csv"
    result = _cli("report", "--db", str(db_path), "--study", "s", "--stored", "weekly",
                  "--out", str(csv_out))
    assert result.exit_code == 0 and csv_out.read_text().startswith("run,comparable,query_id")


def test_cli_accepts_a_run_whose_comparability_is_not_verified(store, tmp_path: Path, store_target) -> None:
    add_run(store, study_id="s", name="N", source="imported", k=3,
            results=[(q, r + 1, u, 10.0 - r) for q in QUERIES
                     for r, u in enumerate(["d3", "d1", "d2"])])  # no fingerprint recorded
    db_path = str(store_target)
    out = tmp_path / "r.json"
    result = _cli("report", "--db", db_path, "--study", "s", "--runs", "A,N", "--reference", "v1",
                  "--out", str(out), "--name", "plain", "--permutations", "100", "--by", "lead")
    assert result.exit_code == 0, result.output
    assert "comparability not verified: N: the run records no corpus fingerprint" in result.output
    assert "--accept-unverified N to compare it" in result.output
    assert "different corpus" not in result.output
    assert json.loads(out.read_text())["comparison"] is None
    result = _cli("report", "--db", db_path, "--study", "s", "--runs", "A,N", "--reference", "v1",
                  "--out", str(out), "--name", "accepted", "--permutations", "100", "--by", "lead",
                  "--accept-unverified", "N")
    assert result.exit_code == 0, result.output
    assert "accepted without verification: N" in result.output
    body = json.loads(out.read_text())
    assert body["runs"][1]["accepted_unverified"] is True and body["comparison"] is not None
    study = open_study(store, "s", None)
    stored = load_report(study, find_report(study, "accepted").report_id)
    assert stored.run("N").accepted_unverified  # recorded in the stored report
    bad = _cli("report", "--db", db_path, "--study", "s", "--runs", "A,N", "--out", str(out),
               "--accept-unverified", "Q", "--by", "lead")
    assert bad.exit_code == 2 and "cannot accept 'Q'" in bad.output


def test_cli_without_reference_warns_that_the_report_is_not_pinned(store, tmp_path: Path, store_target) -> None:
    out = tmp_path / "r.json"
    result = CliRunner().invoke(
        main, ["report", "--db", str(store_target), "--study", "s", "--runs", "A,B",
               "--out", str(out), "--permutations", "50"],
    )
    assert result.exit_code == 0, result.output
    assert "warning: Not pinned to a frozen reference version" in result.output
    assert json.loads(out.read_text())["reference_version"] is None


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--runs", "A,nope", "--reference", "v1"], "no run 'nope'"),
        (["--runs", "A", "--reference", "v7"], "no reference version 'v7'"),
        ([], "--runs is required"),
        (["--stored", "missing"], "no report 'missing'"),
    ],
)
def test_cli_bad_input_exits_2_with_a_message_and_writes_nothing(
    store, tmp_path: Path, args: list[str], message: str, store_target
) -> None:
    out = tmp_path / "r.html"
    result = CliRunner().invoke(
        main, ["report", "--db", str(store_target), "--study", "s", "--out", str(out),
               *args],
    )
    assert result.exit_code == 2
    assert message in result.output
    assert not out.exists()
    assert list_reports(open_study(store, "s", None)) == []


# A store file that does not exist; a PostgreSQL URL names a database the server checks.
@pytest.mark.sqlite_only
def test_cli_refuses_a_missing_store(tmp_path: Path, new_store_target) -> None:
    result = CliRunner().invoke(
        main, ["report", "--db", str(new_store_target("none.db")), "--study", "s", "--runs", "A",
               "--out", str(tmp_path / "r.html")],
    )
    assert result.exit_code == 2 and "no store at" in result.output
    assert not (new_store_target("none.db")).exists()


def test_cli_refuses_a_missing_postgres_database(tmp_path: Path, postgres_cluster) -> None:
    """The engine-neutral side of the test above: a URL naming no database is refused with
    the server's word and what to check, and nothing is written."""
    result = CliRunner().invoke(
        main, ["report", "--db", postgres_cluster.url("no_such_store"), "--study", "s",
               "--runs", "A", "--out", str(tmp_path / "r.html")],
    )
    assert result.exit_code == 2, result.output
    assert 'database "no_such_store" does not exist' in result.output
    assert "check the --db URL" in result.output and "Traceback" not in result.output
    assert not (tmp_path / "r.html").exists()
