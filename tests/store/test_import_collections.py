"""Documents and queries in the formats collections ship in: JSONL, TSV, CSV, TREC files.

Each import is all or nothing and names file:line of every error.
"""

import gzip
import json
from pathlib import Path

import pytest

from evalcore.contract.limits import ReadLimits
from evalcore.io.documents import DocumentFields, read_documents
from evalcore.io.errors import InputErrors
from evalcore.io.queries import QueryFields, read_queries
from evalcore.store.audit import audit_entries
from evalcore.store.corpus import get_document
from evalcore.store.imports.documents import import_documents
from evalcore.store.imports.queries import import_queries
from evalcore.store.information_needs import information_need
from evalcore.store.query_reads import query_texts
from evalcore.store.study_handle import open_study
from tests.store_fixtures import new_store, table_snapshot

TREC_DOCS = """<DOC>
<DOCNO> FT-1 </DOCNO>
<HEADLINE>Cats &amp; dogs</HEADLINE>
<TEXT>
Cats chase <b>mice</b>. <script>alert(1)</script>
</TEXT>
</DOC>
<doc><docno>FT-2</docno><text>Dogs bark.</text></doc>
"""

TOPICS = """<top>
<num> Number: 301
<title> cats

<desc> Description:
Documents about cats.

<narr> Narrative:
A relevant document mentions a cat. <i>Dogs</i> are not relevant.
</top>

<top>
<num> Number: 302 </num>
<title> dogs barking </title>
<desc> Description: Why dogs bark. </desc>
<narr> Narrative: Any barking. </narr>
</top>
"""


def _errors(fn, *args, **kwargs) -> str:
    with pytest.raises(InputErrors) as info:
        fn(*args, **kwargs)
    return str(info.value)


def test_trec_documents_strip_tags_and_keep_text_plain(tmp_path: Path) -> None:
    path = tmp_path / "ft.trec"
    path.write_text(TREC_DOCS)
    docs = read_documents(path).documents
    assert list(docs) == ["FT-1", "FT-2"]
    title, text = docs["FT-1"]
    assert title == ""
    assert "Cats & dogs" in text and "mice" in text and "alert(1)" in text
    assert "<" not in text and "FT-1" not in text  # tags and the DOCNO are gone
    assert docs["FT-2"][1] == "Dogs bark."


def test_trec_documents_gzip_and_folder(tmp_path: Path) -> None:
    folder = tmp_path / "col"
    (folder / "sub").mkdir(parents=True)
    (folder / "a.trec").write_text(TREC_DOCS)
    with gzip.open(folder / "sub" / "b.gz", "wt") as f:
        f.write("<DOC><DOCNO>LA-9</DOCNO><TEXT>Gzip text</TEXT></DOC>\n")
    (folder / "README").write_text("This collection holds documents.\n")
    (folder / ".hidden").write_text("<DOC>broken")
    docs = read_documents(folder)
    assert list(docs.documents) == ["FT-1", "FT-2", "LA-9"]
    assert docs.documents["LA-9"] == ("", "Gzip text")
    assert any("README" in w and "skipped" in w for w in docs.warnings)


def test_trec_documents_errors_name_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.trec"
    path.write_text(
        "<DOC><DOCNO>A</DOCNO>x</DOC>\n"
        "stray text\n"
        "<DOC><TEXT>no id</TEXT></DOC>\n"
        "<DOC><DOCNO>A</DOCNO>again</DOC>\n"
        "<DOC><DOCNO>B</DOCNO>unclosed\n"
        "<DOC><DOCNO>C</DOCNO>c</DOC>\n"
    )
    message = _errors(read_documents, path)
    assert f"{path}:2: text outside any <DOC>" in message
    assert f"{path}:3: DOCNO: the document has no <DOCNO>" in message
    assert f"{path}:4: DOCNO: document id \"A\" repeats {path}:1" in message
    assert f"{path}:6: DOC: a <DOC> inside the <DOC> of line 5" in message


def test_duplicate_id_across_folder_files_names_both(tmp_path: Path) -> None:
    (tmp_path / "a.trec").write_text("<DOC><DOCNO>X</DOCNO>one</DOC>\n")
    (tmp_path / "b.trec").write_text("\n<DOC><DOCNO>X</DOCNO>two</DOC>\n")
    message = _errors(read_documents, tmp_path)
    assert f"{tmp_path / 'b.trec'}:2: DOCNO: document id \"X\" repeats {tmp_path / 'a.trec'}:1" \
        in message


def test_gzip_bomb_and_broken_gzip_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "big.gz"
    path.write_bytes(gzip.compress(b"<DOC><DOCNO>A</DOCNO>" + b" " * 5000 + b"</DOC>"))
    small = ReadLimits(max_unpacked_bytes=1000)
    assert "unpacks to more than 1,000 bytes" in _errors(
        lambda p: read_documents(p, limits=small), path)
    broken = tmp_path / "broken.gz"
    broken.write_bytes(b"\x1f\x8b not gzip at all")
    assert "not readable gzip data" in _errors(read_documents, broken)


def test_jsonl_tsv_csv_documents_with_configured_fields(tmp_path: Path) -> None:
    jsonl = tmp_path / "corpus.jsonl"
    jsonl.write_text(json.dumps({"_id": "d1", "title": "T", "body": "text one"}) + "\n"
                     + json.dumps({"_id": "d2", "body": "text two"}) + "\n")
    fields = DocumentFields(id="_id", text="body")
    assert read_documents(jsonl, fields=fields).documents == {"d1": ("T", "text one"),
                                                              "d2": ("", "text two")}
    tsv = tmp_path / "collection.tsv"
    tsv.write_text("id\ttext\n1\tfirst passage\n2\tsecond, with comma\n")
    assert read_documents(tsv).documents == {"1": ("", "first passage"),
                                             "2": ("", "second, with comma")}
    csv_path = tmp_path / "docs.csv"
    csv_path.write_text('id,title,text\n1,"A, title","quoted ""text"""\n')
    assert read_documents(csv_path).documents == {"1": ("A, title", 'quoted "text"')}


def test_hostile_jsonl_documents(tmp_path: Path) -> None:
    path = tmp_path / "corpus.jsonl"
    path.write_text(
        '{"id": 1, "text": "number id"}\n'
        '{"id": "a", "text": "x", "text": "y"}\n'
        '{"id": "b", "text": NaN}\n'
        '{"id": "c", "text": ["list"]}\n'
        '{"id": "   "}\n'
        '[1, 2]\n'
        '{"id": "d", "text": "ok"}\n'
        '{"id": "d", "text": "again"}\n'
    )
    message = _errors(read_documents, path)
    for line, part in [(1, "id: must be a string, got 1"), (2, "appears twice"),
                       (3, "NaN is not a JSON value"), (4, "text: must be a string"),
                       (5, "id: must not be empty"), (6, "must be a JSON object"),
                       (8, 'document id "d" repeats line 7')]:
        assert f"{path}:{line}: " in message and part in message


def test_table_without_the_id_column_says_which_option(tmp_path: Path) -> None:
    path = tmp_path / "docs.tsv"
    path.write_text("docid\tbody\n1\tx\n")
    message = _errors(read_documents, path)
    assert "no column named 'id'" in message and "--id-field" in message


def test_import_documents_writes_owner_and_audit_and_is_all_or_nothing(tmp_path: Path, store_target) -> None:
    db = new_store(store_target)
    path = tmp_path / "ft.trec"
    path.write_text(TREC_DOCS)
    summary = import_documents(db, path, study_id="s", owner_org="acme")
    assert summary.documents == 2
    assert get_document(db, "c", "FT-1").owner_org == "acme"
    assert audit_entries(open_study(db, "s", None))[0].action == "import.documents"
    before = table_snapshot(db)
    bad = tmp_path / "bad.trec"
    bad.write_text("<DOC><DOCNO>Z</DOCNO>fine</DOC>\n<DOC>no id</DOC>\n")
    with pytest.raises(InputErrors):
        import_documents(db, bad, study_id="s")
    assert table_snapshot(db) == before
    again = import_documents(db, path, study_id="s")
    assert again.documents == 0  # unchanged documents are not rewritten


def test_trec_topics_read_the_information_need(tmp_path: Path) -> None:
    path = tmp_path / "topics.301-302"
    path.write_text(TOPICS)
    _, queries = read_queries(path, "trec")
    assert [(q.query_id, q.text) for q in queries] == [("301", "cats"), ("302", "dogs barking")]
    assert queries[0].description == "Documents about cats."
    assert queries[0].narrative == "A relevant document mentions a cat. Dogs are not relevant."
    assert (queries[1].description, queries[1].narrative) == ("Why dogs bark.", "Any barking.")


def test_trec_topics_errors(tmp_path: Path) -> None:
    path = tmp_path / "topics.txt"
    path.write_text(
        "<top>\n<num> Number: 1\n<title> a\n</top>\n"
        "<top>\n<title> no number\n</top>\n"
        "<top>\n<num> Number: 1\n<title> again\n</top>\n"
        "<top>\n<num> Number: 4\n</top>\n"
        "junk\n"
        "<top>\n<num> Number: 5\n<title> unclosed\n"
    )
    message = _errors(read_queries, path, "trec")
    assert f"{path}:5: num: the topic has no <num>" in message
    assert f"{path}:8: num: topic 1 repeats line 1" in message
    assert f"{path}:12: title: topic 4 has no <title> text" in message
    assert f"{path}:15: text outside any <top>" in message
    assert f"{path}:16: top: a <top> without its </top>" in message


def test_import_queries_with_query_map_and_fields(tmp_path: Path, store_target) -> None:
    db = new_store(store_target)
    path = tmp_path / "queries.jsonl"
    path.write_text(json.dumps({"qid": "1", "q": "what is x", "guide": "x only"}) + "\n"
                    + json.dumps({"qid": "2", "q": "what is y"}) + "\n")
    mapping = tmp_path / "map.txt"
    mapping.write_text("# file id -> qrels id\n1 101\n2,102\n")
    fields = QueryFields(id="qid", text="q", narrative="guide")
    import_queries(db, path, study_id="s", fields=fields, query_map=mapping)
    assert query_texts(open_study(db, "s", None)) == {"101": "what is x", "102": "what is y"}
    assert information_need(open_study(db, "s", None), "101").narrative == "x only"
    # a query the map does not cover: refused, naming the line
    mapping.write_text("1 101\n")
    message = _errors(import_queries, db, path, study_id="s", fields=fields, query_map=mapping)
    assert f"{path}:2: id: 1 query id(s) not in the query map map.txt: 2" in message
    mapping.write_text("1 101\n2 101\n")
    assert "101 is the target of line 1 too" in _errors(
        import_queries, db, path, study_id="s", fields=fields, query_map=mapping)


def test_reimport_without_need_keeps_the_stored_need(tmp_path: Path, store_target) -> None:
    db = new_store(store_target)
    topics = tmp_path / "t.trec"
    topics.write_text(TOPICS)
    import_queries(db, topics, study_id="s", fmt="trec")
    plain = tmp_path / "q.tsv"
    plain.write_text("id\ttext\n301\tcats and kittens\n")
    import_queries(db, plain, study_id="s")
    assert query_texts(open_study(db, "s", None))["301"] == "cats and kittens"
    assert information_need(open_study(db, "s", None), "301").description == "Documents about cats."


def test_cli_imports_and_need_set(tmp_path: Path, new_store_target) -> None:
    from click.testing import CliRunner

    from evalcore.cli import main

    runner = CliRunner()
    db = str(new_store_target("s.db"))
    assert runner.invoke(main, ["init", "--db", db, "--study", "s", "--corpus", "c"]).exit_code == 0
    assert runner.invoke(main, ["init", "--db", db, "--study", "s"]).exit_code == 2
    bad = tmp_path / "docs.jsonl"
    bad.write_text('{"id": "a", "text": "x"}\n{"id": 3}\n')
    result = runner.invoke(main, ["import", "documents", "--db", db, "--study", "s", str(bad)])
    assert result.exit_code == 2
    assert f"{bad}:2: id: must be a string, got 3" in result.output
    assert "nothing was written" in result.output
    topics = tmp_path / "topics.txt"
    topics.write_text(TOPICS)
    result = runner.invoke(main, ["import", "queries", "--db", db, "--study", "s", str(topics),
                                  "--format", "trec"])
    assert result.exit_code == 0, result.output
    result = runner.invoke(main, ["query", "need", "set", "--db", db, "--study", "s", "--query",
                                  "302", "--narrative", "Only barking dogs.", "--actor", "lead"])
    assert result.exit_code == 0, result.output
    shown = json.loads(runner.invoke(main, ["query", "need", "show", "--db", db, "--study", "s",
                                            "--query", "302"]).output)
    assert shown == {"description": "Why dogs bark.", "narrative": "Only barking dogs."}
    result = runner.invoke(main, ["query", "need", "set", "--db", db, "--study", "s", "--query",
                                  "999", "--narrative", "x"])
    assert result.exit_code == 2 and "no query '999' in study 's'" in result.output
    from evalcore.store.connection import open_store

    entry = audit_entries(open_study(open_store(new_store_target("s.db")), "s", None))[0]
    assert entry.action == "query.need.set" and entry.actor == "lead"
    assert entry.detail["old"]["narrative"] == "Any barking."
