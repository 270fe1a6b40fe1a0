"""TREC numbers parse as trec_eval's atof/atol read them, and nothing more; errors carry file:line."""

from datetime import UTC, datetime

import pytest
from store_fixtures import new_store

from evalcore.io.errors import InputErrors
from evalcore.io.text_lines import decode_source
from evalcore.io.trec import parse_qrels, parse_run
from evalcore.store.corpus import DocumentIn, add_documents
from evalcore.store.imports import import_labels, import_observations, import_qrels, import_run


def _run(score: str):
    return parse_run(decode_source(f"q1 Q0 a 1 2 t\nq1 Q0 b 2 {score} t\n".encode(), "run.txt"))


@pytest.mark.parametrize("score", ["1.5", "-1.5", "+3", ".5", "5.", "2e-3", "1E+2", "0", "-0"])
def test_scores_trec_eval_reads_are_accepted(score: str) -> None:
    assert _run(score).n_rows == 2


@pytest.mark.parametrize("score", ["1_000", "١٢٣", "１２", "inf", "-Infinity", "nan", "1e999",
                                   "0x1p3", "1.5abc", "--1", "e5"])
def test_scores_beyond_trec_eval_are_refused_with_file_and_line(score: str) -> None:
    with pytest.raises(InputErrors) as caught:
        _run(score)
    assert str(caught.value).startswith(f"run.txt:2: score: must be a finite number, got '{score}'")


def test_non_ascii_digits_get_a_hint() -> None:
    with pytest.raises(InputErrors, match="ASCII digits, no '_'"):
        _run("1_000")


@pytest.mark.parametrize("gain", ["1_0", "١", "2.5", "0x1", "1e0", "9" * 5000])
def test_qrels_gains_are_plain_integers(gain: str) -> None:
    with pytest.raises(InputErrors) as caught:
        parse_qrels(decode_source(f"q1 0 a 1\nq1 0 b {gain}\n".encode(), "qrels.txt"))
    message = str(caught.value)
    assert message.startswith("qrels.txt:2: gain: ") and len(message) < 300


@pytest.fixture
def db(tmp_path):
    store = new_store(tmp_path)
    when = datetime(2026, 1, 1, tzinfo=UTC)
    add_documents(store, "c", [DocumentIn(doc_id=d, text="x", created_at=when) for d in "ab"])
    return store


@pytest.mark.parametrize(("importer", "name", "text", "line"), [
    (import_qrels, "q.txt", "q1 0 a 1\n# c\nq1 0 zz 1\n", 3),
    (import_run, "r.txt", "q1 Q0 a 1 2 t\n\nq1 Q0 zz 2 1 t\n", 3),
    (import_labels, "l.csv", "query_id,unit_id,gain\nq1,a,1\nq1,zz,1\n", 3),
    (import_observations, "o.jsonl",
     '{"query_id": "q1", "k": 1, "returned_ids": ["a"], "labels": [], '
     '"population_complete": false}\n'
     '{"query_id": "q2", "k": 1, "returned_ids": ["zz"], "labels": [], '
     '"population_complete": false}\n', 2),
])
def test_unknown_id_errors_carry_file_and_line(db, importer, name, text, line) -> None:
    options = {"k": 10} if importer is import_run else {}
    if importer is import_labels:
        options = {"format": "csv"}
    with pytest.raises(InputErrors) as caught:
        importer(db, decode_source(text.encode(), name), study_id="s", **options)
    assert str(caught.value).startswith(f"{name}:{line}: 1 ")
    assert "zz" in str(caught.value)
