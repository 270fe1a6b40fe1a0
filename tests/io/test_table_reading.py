"""TSV and CSV as people write them: with or without a header, quoted line breaks, a BOM.

The CSV reader is RFC 4180 (evalcore.io.csv_records): a quoted cell holds commas, quotes
and line breaks, and every error names the line its record starts on. A table without a
header is read as ``id, text`` when its first row names no column, and the reader says so.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evalcore.io.csv_records import csv_records
from evalcore.io.documents import DocumentFields, read_documents
from evalcore.io.errors import ErrorLog, InputErrors
from evalcore.io.label_rows import parse_labels
from evalcore.io.queries import read_queries
from evalcore.io.records import Layout
from evalcore.io.text_lines import decode_source


def _errors(fn, *args, **kwargs) -> str:
    with pytest.raises(InputErrors) as caught:
        fn(*args, **kwargs)
    return str(caught.value)


def _records(text: str) -> tuple[list[tuple[int, list[str]]], list[str]]:
    log = ErrorLog("f.csv")
    rows = list(csv_records(text, log))
    return rows, [str(e) for e in log.errors]


def test_quoted_line_breaks_quotes_and_commas() -> None:
    rows, errors = _records('a,b\n"one\ntwo","say ""hi"", twice"\n\n3,"x\n\ny"\n')
    assert errors == []
    assert rows == [(1, ["a", "b"]), (2, ["one\ntwo", 'say "hi", twice']), (5, ["3", "x\n\ny"])]


def test_errors_name_the_record_s_first_line_and_reading_goes_on() -> None:
    rows, errors = _records('a,b\n"x\ny"z,1\nok,2\nab"c,3\nfine,4\n"never closed,5\n')
    assert rows == [(1, ["a", "b"]), (4, ["ok", "2"]), (6, ["fine", "4"])]
    assert errors == [
        "f.csv:2: not valid CSV: text after a closing quote (column 3 of the record's line 2) "
        '(quote the whole cell and write a quote inside it twice: "say ""hi"" now")',
        "f.csv:5: not valid CSV: a quote inside an unquoted cell (column 3) (quote the whole "
        'cell and write a quote inside it twice: "say ""hi"" now")',
        "f.csv:7: not valid CSV: a quoted cell starting on this line is never closed (close the "
        "quote (a quote inside a quoted cell is written twice))",
    ]


@given(st.lists(st.lists(st.text(alphabet=st.characters(blacklist_categories=("Cs",),
                                                        blacklist_characters="\r\x00"),
                                 max_size=8), min_size=2, max_size=2), min_size=1, max_size=6))
def test_reads_back_what_python_s_csv_writer_writes(table: list[list[str]]) -> None:
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows(table)
    rows, errors = _records(buffer.getvalue())
    assert errors == []
    assert [cells for _, cells in rows] == table  # (two cells: no written line is blank)


def test_a_label_note_over_several_lines_and_a_bom(tmp_path: Path) -> None:
    data = '\ufeffquery_id,unit_id,gain,note\nq1,A,2,"first line\nsecond line"\nq1,B,x,\n'
    message = _errors(parse_labels, decode_source(data.encode(), "l.csv"), "csv",
                      default_annotator="a")
    assert message.startswith("l.csv:4: gain: must be an integer 0..4")
    rows = parse_labels(decode_source(data.replace("B,x", "B,1").encode(), "l.csv"), "csv",
                        default_annotator="a").rows
    assert [(r.line, r.note) for r in rows] == [(2, "first line\nsecond line"), (4, "")]


def test_a_large_quoted_cell_is_one_document(tmp_path: Path) -> None:
    """No 128 KiB field limit (Python's csv module has one, process-wide)."""
    path = tmp_path / "docs.csv"
    text = "word " * 100_000
    path.write_text(f'id,text\nd1,"{text}"\n')
    assert read_documents(path).documents["d1"] == ("", text)


@pytest.mark.parametrize(("suffix", "sep"), [(".tsv", "\t"), (".csv", ",")])
def test_headerless_queries_are_read_as_id_text_and_said(tmp_path: Path, suffix: str,
                                                         sep: str) -> None:
    path = tmp_path / f"queries{suffix}"
    path.write_text(f"1{sep}first query\n2{sep}second query\n")
    notes: list[str] = []
    name, queries = read_queries(path, notes=notes)
    assert [(q.line, q.query_id, q.text) for q in queries] == [(1, "1", "first query"),
                                                               (2, "2", "second query")]
    shown = "id<TAB>text" if sep == "\t" else "id,text"
    assert notes == [f"{path}: read as {shown} without a header (its first line names no "
                     "column 'id'; give --columns, or add a header line, to read it otherwise)"]


def test_a_header_of_other_names_is_not_read_as_data(tmp_path: Path) -> None:
    path = tmp_path / "queries.tsv"
    path.write_text("qid\tquery\n1\tfirst\n")
    message = _errors(read_queries, path)
    assert f"{path}:1: header: no column named 'id'" in message
    assert "--id-field" in message and "--no-header" in message


def test_a_first_row_of_another_width_keeps_the_header_error(tmp_path: Path) -> None:
    path = tmp_path / "queries.tsv"
    path.write_text("1\tfirst\textra\n")
    assert "no column named 'id'" in _errors(read_queries, path)


def test_no_header_and_columns(tmp_path: Path) -> None:
    path = tmp_path / "docs.tsv"
    path.write_text("id\thttp://x\tTitle\tBody text\n")  # a first cell that looks like a header
    docs = read_documents(path, layout=Layout.from_options(False, "id,-,title,text"))
    assert docs.documents == {"id": ("Title", "Body text")}
    assert "read as id<TAB>-<TAB>title<TAB>text without a header (as asked" in docs.notes[0]
    queries = tmp_path / "q.tsv"
    queries.write_text("text\tid\n")
    assert read_queries(queries, layout=Layout.from_options(True, None))[1][0].query_id == "text"
    message = _errors(read_documents, path, layout=Layout.from_options(False, "title,text"))
    assert "--columns names no column 'id'" in message
    with pytest.raises(ValueError, match="distinct column names"):
        Layout.from_options(False, "id,id")


def test_configured_fields_name_the_headerless_columns(tmp_path: Path) -> None:
    path = tmp_path / "corpus.tsv"
    path.write_text("d1\tsome text\n")
    docs = read_documents(path, fields=DocumentFields(id="_id", text="body"))
    assert docs.documents == {"d1": ("", "some text")}


def test_a_tsv_cell_keeps_its_quotes(tmp_path: Path) -> None:
    path = tmp_path / "q.tsv"
    path.write_text('id\ttext\n1\t"quoted" words\n')
    assert read_queries(path)[1][0].text == '"quoted" words'
