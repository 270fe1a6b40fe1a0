"""CSV exports are safe to open in a spreadsheet (OWASP CSV injection), and read back exactly."""

import csv
import io

import pytest
from hypothesis import given
from hypothesis import strategies as st
from report_builders import report_from
from store_fixtures import new_store

from evalcore.contract.evaluation_protocol import EvalProtocol
from evalcore.io.spreadsheet_cells import neutralise, restore
from evalcore.io.text_lines import decode_source
from evalcore.report.build import RunInput, build_report
from evalcore.report.csv_export import render_csv
from evalcore.store.exports import export_labels
from evalcore.store.imports import import_labels
from evalcore.store.labels import record_label
from evalcore.store.study_handle import open_study

#: Characters that make a spreadsheet evaluate a cell.
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
FORMULAS = ["=HYPERLINK(\"http://evil.example\",\"x\")", "+1+cmd|' /C calc'!A0", "-2+3",
            "@SUM(A1:A9)", "\t=1", "\r=1", "=1", "-", "+"]


@pytest.mark.parametrize("cell", FORMULAS)
def test_formula_cells_get_a_leading_quote(cell: str) -> None:
    assert neutralise(cell) == "'" + cell
    assert restore(neutralise(cell)) == cell


@pytest.mark.parametrize("cell", [-1.5, 3, 0.0, "-1.5", "+3", "-2e-05", ".5", "-0"])
def test_numbers_stay_numbers(cell) -> None:
    assert neutralise(cell) == cell


@pytest.mark.parametrize("cell", ["plain", "'quoted", "a=b", "", "q-1", "'"])
def test_other_text_is_left_alone(cell: str) -> None:
    assert neutralise(cell) == cell and restore(cell) == cell


def test_a_quoted_formula_keeps_its_quote_through_a_round_trip() -> None:
    assert neutralise("'=x") == "''=x" and restore("''=x") == "'=x"


@given(st.text(alphabet=st.sampled_from(["'", "=", "+", "-", "@", "\t", "1", ".", "e", "a"]),
               max_size=8))
def test_restore_inverts_neutralise(cell: str) -> None:
    assert restore(neutralise(cell)) == cell
    written = neutralise(cell)
    assert not (written.startswith(FORMULA_START) and written != cell)


def _cells(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text)))


def test_label_csv_export_is_neutralised_and_reads_back_exactly(tmp_path) -> None:
    db = new_store(tmp_path)
    record_label(db, study_id="s", query_id="-q1", unit_id=FORMULAS[0], gain=2,
                 annotator="@ann", note="+1 call me")
    out = io.StringIO()
    export_labels(open_study(db, "s", None), out, format="csv")
    rows = _cells(out.getvalue())
    assert rows[1][:4] == ["'-q1", "'" + FORMULAS[0], "2", "'@ann"]
    assert "'+1 call me" in rows[1]
    assert not any(c.startswith(FORMULA_START) for row in rows for c in row)
    (tmp_path / "b").mkdir()
    other = new_store(tmp_path / "b")
    import_labels(other, decode_source(out.getvalue().encode(), "x.csv"), study_id="s",
                  format="csv", keep_annotators=True)
    assert other.execute("SELECT query_id, unit_id, annotator, note FROM label_events"
                         ).fetchall() == [("-q1", FORMULAS[0], "@ann", "+1 call me")]


def test_report_csv_is_neutralised_and_keeps_numbers() -> None:
    evaluation = report_from({"=HYPERLINK(\"x\")": 0.5, "q2": 0.25})
    report = build_report({"@run": RunInput(evaluation=evaluation, corpus_fingerprint="fp")},
                          name="r", study_id="s", protocol=EvalProtocol(), created_by="lead",
                          reference_version=None, reference_hash=None)
    rows = _cells(render_csv(report))
    body = rows[1:]
    assert {r[0] for r in body} == {"'@run"}
    assert "'=HYPERLINK(\"x\")" in {r[2] for r in body}
    assert not any(c.startswith(FORMULA_START) for row in rows for c in row)
    assert any(c == "0.5" for row in body for c in row)
