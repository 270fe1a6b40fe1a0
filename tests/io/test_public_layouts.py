"""Files as public collections ship them import without editing (issue 34).

One test per layout, from small inline samples: MS MARCO-style queries (``qid<TAB>text``,
no header) and qrels (tab-separated TREC), a BEIR folder, TREC topics, SMART-converted
qrels (gains ``1.000000``), and compressed copies of each. The command line says how it
read them; a bad file still fails with ``file:line: field: message`` and writes nothing.
"""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
from pathlib import Path

import pytest
from cli_store import cli_store, run_cli
from store_fixtures import table_snapshot

from evalcore.store.connection import open_store

MSMARCO_QUERIES = (
    "1048578\tcost of endless pools/swim spa\n"
    "1048579\twhat is pcnt\n"
    "1048580\twhat is pcb \"printed circuit board\"\n"
)
MSMARCO_QRELS = "1048578\t0\t7187158\t1\n1048579\t0\t7187157\t1\n1048580\t0\t7187156\t1\n"
MSMARCO_COLLECTION = (
    "7187156\tA printed circuit board mechanically supports electronic components.\n"
    "7187157\tPCNT is a ticker symbol.\n"
    "7187158\tEndless pools cost between $20,000 and $50,000.\n"
)
TREC_TOPICS = """<top>
<num> Number: 301
<title> International Organized Crime
<desc> Description:
Identify organizations that participate in international criminal activity.
<narr> Narrative:
A relevant document must as a minimum identify the organization.
</top>

<top>
<num> Number: 302
<title> Poliomyelitis and Post-Polio
<desc> Description:
Is the disease of Poliomyelitis (polio) under control in the world?
<narr> Narrative:
Relevant documents should contain data or outbreaks of the polio disease.
</top>
"""
SMART_QRELS = ("301 0 FBIS3-10082 1.000000\n301 0 FBIS3-10169 0.000000\n"
               "302 0 FBIS3-10243 1.0\n302 0 FBIS3-10319 0\n")


@pytest.fixture
def store(tmp_path: Path) -> Path:
    return cli_store(tmp_path)


def _queries(db: Path) -> dict[str, str]:
    conn = open_store(db)
    try:
        return dict(conn.execute("SELECT query_id, text FROM queries WHERE study_id = 's'"))
    finally:
        conn.conn.close()


def _labels(db: Path) -> dict[tuple[str, str], int]:
    conn = open_store(db)
    try:
        return {(q, u): g for q, u, g in conn.execute(
            "SELECT query_id, unit_id, gain FROM label_events WHERE study_id = 's'")}
    finally:
        conn.conn.close()


def test_msmarco_queries_without_a_header(store: Path, tmp_path: Path) -> None:
    path = tmp_path / "queries.dev.small.tsv"
    path.write_text(MSMARCO_QUERIES)
    code, out = run_cli("import", "queries", "--db", str(store), "--study", "s", str(path))
    assert code == 0, out
    assert f"note: {path}: read as id<TAB>text without a header" in out
    assert _queries(store) == {"1048578": "cost of endless pools/swim spa",
                               "1048579": "what is pcnt",
                               "1048580": 'what is pcb "printed circuit board"'}


def test_msmarco_collection_and_qrels(store: Path, tmp_path: Path) -> None:
    collection = tmp_path / "collection.tsv"
    collection.write_text(MSMARCO_COLLECTION)
    code, out = run_cli("import", "documents", "--db", str(store), "--study", "s", str(collection))
    assert code == 0, out
    assert "read as id<TAB>text without a header" in out and "documents: 3" in out
    qrels = tmp_path / "qrels.dev.small.tsv"
    qrels.write_text(MSMARCO_QRELS)
    code, out = run_cli("import", "qrels", "--db", str(store), "--study", "s", str(qrels))
    assert code == 0, out
    assert _labels(store) == {("1048578", "7187158"): 1, ("1048579", "7187157"): 1,
                              ("1048580", "7187156"): 1}


def test_trec_topics_compressed(store: Path, tmp_path: Path) -> None:
    path = tmp_path / "topics.301-450"  # gzip content under a name without .gz
    path.write_bytes(gzip.compress(TREC_TOPICS.encode()))
    code, out = run_cli("import", "queries", "--db", str(store), "--study", "s", str(path),
                     "--format", "trec")
    assert code == 0, out
    assert f"note: {path}: gzip-compressed; decompressed while read" in out
    assert _queries(store) == {"301": "International Organized Crime",
                               "302": "Poliomyelitis and Post-Polio"}


def test_smart_converted_qrels(store: Path, tmp_path: Path) -> None:
    path = tmp_path / "qrels.301-350"
    path.write_text(SMART_QRELS)
    code, out = run_cli("import", "qrels", "--db", str(store), "--study", "s", str(path))
    assert code == 0, out
    assert ("gains written as decimals read as their integers: 1.000000 -> 1 (1 rows), "
            "0.000000 -> 0 (1 rows), 1.0 -> 1 (1 rows)") in out
    assert _labels(store) == {("301", "FBIS3-10082"): 1, ("301", "FBIS3-10169"): 0,
                              ("302", "FBIS3-10243"): 1, ("302", "FBIS3-10319"): 0}


def test_fractional_gains_are_refused_naming_the_gain_map(store: Path, tmp_path: Path) -> None:
    path = tmp_path / "graded.qrels"
    path.write_text("301 0 A 0.5\n301 0 B 1\n")
    before = table_snapshot(open_store(store))
    code, out = run_cli("import", "qrels", "--db", str(store), "--study", "s", str(path))
    assert code == 2
    assert f"{path}:1: gain: gain 0.5 is not an integer (map it with --gain-map '0.5:N'" in out
    assert table_snapshot(open_store(store)) == before
    code, out = run_cli("import", "qrels", "--db", str(store), "--study", "s", str(path),
                     "--gain-map", "0.5:1")
    assert code == 0, out
    assert _labels(store) == {("301", "A"): 1, ("301", "B"): 1}


def test_beir_folder_with_decimal_scores_and_a_compressed_corpus(store: Path,
                                                                 tmp_path: Path) -> None:
    root = tmp_path / "scifact"
    (root / "qrels").mkdir(parents=True)
    corpus = "".join(json.dumps({"_id": d, "title": "", "text": t}) + "\n"
                     for d, t in (("4983", "Microstructural development"), ("5836", "Induction")))
    (root / "corpus.jsonl").write_bytes(gzip.compress(corpus.encode()))  # gzip, plain name
    (root / "queries.jsonl").write_text(json.dumps({"_id": "1", "text": "0-dimensional"}) + "\n")
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n1\t4983\t1.0\n"
                                             "1\t5836\t0\n")
    code, out = run_cli("import", "beir", "--db", str(store), "--study", "s", str(root))
    assert code == 0, out
    assert "gains written as decimals read as their integers: 1.0 -> 1 (1 rows)" in out
    assert _labels(store) == {("1", "4983"): 1, ("1", "5836"): 0}


@pytest.mark.parametrize("compress", [gzip.compress, bz2.compress, lzma.compress],
                         ids=["gzip", "bzip2", "xz"])
def test_every_file_import_reads_compressed_files_by_content(store: Path, tmp_path: Path,
                                                             compress) -> None:
    docs = tmp_path / "corpus.jsonl.z"
    docs.write_bytes(compress(b'{"id": "d1", "text": "one"}\n{"id": "d2", "text": "two"}\n'))
    run = tmp_path / "run.txt"
    run.write_bytes(compress(b"q1 Q0 d1 1 2.0 bm25\nq1 Q0 d2 2 1.0 bm25\n"))
    labels = tmp_path / "labels.csv"
    labels.write_bytes(compress(b"query_id,unit_id,gain\nq1,d2,2\n"))
    steps = [
        ("documents", str(docs), "--format", "jsonl"),
        ("run", str(run), "--k", "2"),
        ("labels-csv", str(labels)),
    ]
    for kind, *rest in steps:
        code, out = run_cli("import", kind, "--db", str(store), "--study", "s", *rest)
        assert code == 0, (kind, out)
        assert "compressed; decompressed while read" in out
    assert _labels(store) == {("q1", "d2"): 2}


def test_a_plain_file_named_gz_is_read_as_plain(store: Path, tmp_path: Path) -> None:
    path = tmp_path / "qrels.gz"
    path.write_text("q1 0 d1 1\n")
    code, out = run_cli("import", "qrels", "--db", str(store), "--study", "s", str(path))
    assert code == 0, out
    assert "compressed" not in out


def test_evaluate_reads_compressed_trec_files(tmp_path: Path) -> None:
    qrels, run = tmp_path / "qrels.gz", tmp_path / "run.bz2"
    qrels.write_bytes(gzip.compress(b"q1 0 d1 1\nq1 0 d2 0\n"))
    run.write_bytes(bz2.compress(b"q1 Q0 d1 1 2.0 r\nq1 Q0 d2 2 1.0 r\n"))
    code, out = run_cli("evaluate", "--qrels", str(qrels), "--run", str(run), "-m", "P@2")
    assert code == 0, out
    assert json.loads(out)["aggregates"]["P@2"]["value"] == 0.5
