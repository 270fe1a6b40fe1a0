"""Hostile input at every entry point: a clear message or inert text, never partial data.

Entry points: the upload importer behind the Data page (qrels, run, label CSV,
label JSONL, observation JSONL, BEIR zip) with their file names, the corpus
search box, label notes and annotator names, query text and document text.
Payloads: HTML/JS, markdown injection, FTS5 syntax, path traversal, NUL bytes,
invalid UTF-8 and 50 MB uploads.

Every case must *hold*: either it is refused with a message naming the file or
field (and the store is byte-for-byte as before: table snapshots), or it is
stored exactly as given and renders as inert literal text (the escaped
markdown, rendered by a CommonMark renderer, holds no tag but ``p``/``br``/
``strong``, and no link or image). :data:`CASES` is the table of cases tried;
the count is printed by :func:`test_case_count` (run with ``-s``).
"""

import csv
import html
import io
import json
import re
import tomllib
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest
from markdown_it import MarkdownIt
from store_fixtures import new_store, table_snapshot

from app.components.safe_text import escape_markdown, highlight_terms
from evalcore.io.errors import InputErrors
from evalcore.retrieval.search import search_corpus
from evalcore.store.corpus import DocumentIn, add_documents, get_document
from evalcore.store.imports.uploads import MAX_UPLOAD_MB, display_name, import_upload
from evalcore.store.labels import label_history, record_label
from evalcore.store.query_reads import query_texts
from evalcore.store.studies import QueryIn
from evalcore.store.study_handle import open_study
from evalcore.store.study_setup import add_queries

REPO = Path(__file__).resolve().parents[2]
MIB = 1024 * 1024

#: name -> a hostile text
PAYLOADS: dict[str, str] = {
    "script tag": "<script>alert(1)</script>",
    "img onerror": '<img src=x onerror="alert(1)">',
    "html block": "<div><iframe src=//evil.example></iframe></div>",
    "markdown link": "[click me](javascript:alert(1))",
    "markdown image": "![pixel](http://evil.example/p.png)",
    "markdown heading": "# Heading\n## Sub",
    "autolink": "www.evil.example and http://evil.example/x and a@b.example",
    "fts5 syntax": '"unbalanced AND NEAR(a b) col:x * ^prefix OR -neg (((',
    "path traversal": "../../etc/passwd",
    "nul byte": "before\x00after",
    "control chars": "bell\x07 esc\x1b[31m red \u202e rtl",
}

_MD = MarkdownIt("gfm-like")
_TAG = re.compile(r"<[^>]+>")
_ALLOWED_TAGS = {"p", "br", "strong"}


def _render(markdown: str) -> str:
    markdown = re.sub(r":orange-background\[(\*\*[^\]]*\*\*)\]", r"\1", markdown)
    return _MD.render(markdown)


def assert_inert(text: str) -> None:
    """``text``, escaped as the pages escape it, renders as literal text and nothing else."""
    for markdown in (escape_markdown(text), highlight_terms(text, "alert evil click heading")):
        rendered = _render(markdown)
        tags = {t.split()[0].strip("</>") for t in _TAG.findall(rendered)}
        assert tags <= _ALLOWED_TAGS, (text, rendered)
        visible = html.unescape(_TAG.sub("", rendered)).replace("\u2060", "")
        for word in re.findall(r"[A-Za-z]{3,}", text):
            assert word in visible, (word, rendered)


def assert_refused_cleanly(error: Exception, where: str) -> None:
    message = str(error)
    assert message.strip(), "a refusal must say why"
    assert where in message, (where, message)


@dataclass(frozen=True)
class Case:
    entry: str
    payload: str
    run: Callable  # (db, tmp_path) -> None; asserts that the case holds


CASES: list[Case] = []


def case(entry: str, payload: str) -> Callable[[Callable], Callable]:
    def register(fn: Callable) -> Callable:
        CASES.append(Case(entry, payload, fn))
        return fn

    return register


def stored_or_refused(db, store_it: Callable[[], None], read_back: Callable[[], str | None],
                      text: str, where: str) -> str:
    """Either the text is stored verbatim and renders inert, or refused with nothing written."""
    before = table_snapshot(db)
    try:
        store_it()
    except (ValueError, InputErrors) as error:
        assert_refused_cleanly(error, where)
        assert table_snapshot(db) == before, "a refused input must leave nothing behind"
        return "refused"
    assert read_back() == text, "stored text must be exactly what was given"
    assert_inert(text)
    return "stored"


# --- text at the library entry points behind the pages --------------------------------------

for _name, _text in PAYLOADS.items():

    @case("query text", _name)
    def _query(db, tmp, text=_text) -> None:
        stored_or_refused(
            db,
            lambda: add_queries(db, "s", [QueryIn(query_id="q1", text=text)]),
            lambda: query_texts(open_study(db, "s", None)).get("q1"),
            text,
            "q1",
        )

    @case("document title and text", _name)
    def _document(db, tmp, text=_text) -> None:
        doc = DocumentIn(doc_id="d1", title=text, text=text, owner_org="acme",
                         created_at=datetime(2026, 1, 1, tzinfo=UTC))
        stored_or_refused(db, lambda: add_documents(db, "c", [doc]),
                          lambda: (get_document(db, "c", "d1") or doc).text, text, "d1")

    @case("label note", _name)
    def _note(db, tmp, text=_text) -> None:
        stored_or_refused(
            db,
            lambda: record_label(
                db, study_id="s", query_id="q1", unit_id="d1", gain=1, annotator="ann", note=text
            ),
            lambda: label_history(open_study(db, "s", None), "q1")[-1].note,
            text,
            "note",
        )

    @case("annotator name", _name)
    def _annotator(db, tmp, text=_text) -> None:
        stored_or_refused(
            db,
            lambda: record_label(
                db, study_id="s", query_id="q1", unit_id="d1", gain=1, annotator=text
            ),
            lambda: label_history(open_study(db, "s", None), "q1")[-1].annotator,
            text,
            "annotator",
        )

    @case("corpus search box", _name)
    def _search(db, tmp, text=_text) -> None:
        add_documents(db, "c", [DocumentIn(doc_id="d1", title="alert", text="heading evil etc",
                                           created_at=datetime(2026, 1, 1, tzinfo=UTC))])
        before = table_snapshot(db)
        hits = search_corpus(db, "c", text, limit=10, viewer=None)  # never raises, never FTS5 syntax
        assert isinstance(hits, list) and table_snapshot(db) == before
        assert_inert(text)

    @case("upload: label CSV note", _name)
    def _csv_note(db, tmp, text=_text) -> None:
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(["query_id", "unit_id", "gain", "annotator", "note"])
        writer.writerow(["q1", "d1", "1", "ann", text])
        data = buffer.getvalue().encode("utf-8")
        stored_or_refused(
            db,
            lambda: import_upload(db, "labels-csv", data, "labels.csv", study_id="s", actor="ann"),
            lambda: label_history(open_study(db, "s", None), "q1")[-1].note,
            text,
            "labels.csv",
        )

    @case("upload: label JSONL note", _name)
    def _jsonl_note(db, tmp, text=_text) -> None:
        line = json.dumps({"query_id": "q1", "unit_id": "d1", "gain": 1, "annotator": "ann",
                           "note": text})
        stored_or_refused(
            db,
            lambda: import_upload(
                db, "labels-jsonl", line.encode(), "labels.jsonl", study_id="s", actor="ann"
            ),
            lambda: label_history(open_study(db, "s", None), "q1")[-1].note,
            text,
            "labels.jsonl",
        )

    @case("upload: qrels document id", _name)
    def _qrels_id(db, tmp, text=_text) -> None:
        data = f"q1 0 {text} 1\n".encode()
        stored_or_refused(
            db,
            lambda: import_upload(db, "qrels", data, "judged.qrels", study_id="s", actor="ann"),
            lambda: label_history(open_study(db, "s", None), "q1")[-1].unit_id,
            text,
            "judged.qrels",
        )

    @case("upload: run query id", _name)
    def _run_id(db, tmp, text=_text) -> None:
        data = f"{text} Q0 d1 1 2.5 tag\n".encode()
        stored_or_refused(
            db, lambda: import_upload(db, "run", data, "run.txt", study_id="s", actor="ann", k=10),
            lambda: db.execute("SELECT query_id FROM results").fetchone()[0], text, "run.txt")

    @case("upload: file name", _name)
    def _file_name(db, tmp, text=_text) -> None:
        name = display_name(text)
        assert "/" not in name and "\\" not in name and "\x00" not in name and ".." != name
        assert not any(ord(c) < 32 for c in name)
        before = table_snapshot(db)
        with pytest.raises(InputErrors) as info:
            import_upload(db, "qrels", b"not a qrels line\n", text, study_id="s", actor="ann")
        assert str(info.value).startswith(name), "errors name the sanitised file"
        assert table_snapshot(db) == before


# --- file names that try to escape ----------------------------------------------------------

for _label, _filename in {
    "relative traversal": "../../etc/passwd",
    "absolute path": "/etc/passwd",
    "windows traversal": "..\\..\\windows\\win.ini",
    "NUL in name": "ok.qrels\x00.sh",
    "very long name": "a" * 10_000 + ".qrels",
    "empty name": "",
}.items():

    @case("upload: file name", _label)
    def _traversal_name(db, tmp, filename=_filename) -> None:
        name = display_name(filename)
        assert name and len(name) <= 120 and "/" not in name and "\x00" not in name
        summary = import_upload(db, "qrels", b"q1 0 d1 1\n", filename, study_id="s", actor="ann")
        assert summary.source == name
        assert not (tmp / "etc").exists() and not Path("/etc/passwd.qrels").exists()


# --- BEIR zips that try to write outside their folder --------------------------------------


def _zip(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


_BEIR_OK = {
    "corpus.jsonl": b'{"_id": "d1", "title": "<script>alert(1)</script>", "text": "[x](javascript:y)"}\n',
    "queries.jsonl": b'{"_id": "q1", "text": "# heading <img src=x onerror=alert(1)>"}\n',
    "qrels/test.tsv": b"query-id\tcorpus-id\tscore\nq1\td1\t1\n",
}
for _label, _member in {
    "zip slip ..": "../../evil.txt",
    "zip absolute": "/tmp/evil.txt",
    "zip drive letter": "C:/evil.txt",
    "zip backslash traversal": "..\\..\\evil.txt",
}.items():

    @case("upload: BEIR zip member", _label)
    def _zip_slip(db, tmp, member=_member) -> None:
        before = table_snapshot(db)
        with pytest.raises(InputErrors) as info:
            import_upload(db, "beir", _zip({**_BEIR_OK, member: b"x"}), "beir.zip",
                          study_id="s", actor="ann")
        assert "unsafe path" in str(info.value)
        assert table_snapshot(db) == before
        assert not Path("/tmp/evil.txt").exists() and not (tmp.parent / "evil.txt").exists()


@case("upload: BEIR zip", "hostile titles and query text")
def _beir_hostile_text(db, tmp) -> None:
    import_upload(db, "beir", _zip(_BEIR_OK), "beir.zip", study_id="s", actor="ann")
    doc = get_document(db, "c", "d1")
    assert doc.title == "<script>alert(1)</script>" and doc.text == "[x](javascript:y)"
    for text in (doc.title, doc.text, query_texts(open_study(db, "s", None))["q1"]):
        assert_inert(text)


@case("upload: BEIR zip", "not a zip")
def _not_a_zip(db, tmp) -> None:
    before = table_snapshot(db)
    with pytest.raises(InputErrors, match="not a zip file"):
        import_upload(db, "beir", b"PK\x03\x04 garbage", "beir.zip", study_id="s", actor="ann")
    assert table_snapshot(db) == before


# --- invalid UTF-8 and NUL bytes in every upload format -------------------------------------

_GOOD_LINES = {
    "qrels": b"q1 0 d1 1\n",
    "run": b"q1 Q0 d1 1 2.0 tag\n",
    "labels-csv": b"query_id,unit_id,gain\nq1,d1,1\n",
    "labels-jsonl": b'{"query_id": "q1", "unit_id": "d1", "gain": 1}\n',
    "observations": b'{"query_id": "q1", "returned_ids": ["d1"], "k": 1, "labels": {"d1": 1}}\n',
}
for _kind, _good in _GOOD_LINES.items():
    for _label, _bad in {
        "invalid UTF-8": b"q\xff\xfe1 0 d\xc3\x28 1\n",
        "NUL bytes": b"q1\x00 0 d1\x00 1\n",
        "lone surrogate bytes": b"\xed\xa0\x80\n",
    }.items():

        @case(f"upload: {_kind}", _label)
        def _bad_bytes(db, tmp, kind=_kind, good=_good, bad=_bad) -> None:
            before = table_snapshot(db)
            with pytest.raises(InputErrors) as info:
                import_upload(db, kind, good + bad, "upload.txt", study_id="s", actor="ann",
                              k=10)
            assert str(info.value).startswith("upload.txt:"), "the error names file and line"
            assert table_snapshot(db) == before, "a good first line must not be stored alone"


# --- 50 MB uploads ----------------------------------------------------------------------------

for _kind in _GOOD_LINES:

    @case(f"upload: {_kind}", "50 MB single line")
    def _fifty_mb_line(db, tmp, kind=_kind) -> None:
        before = table_snapshot(db)
        with pytest.raises(InputErrors) as info:
            import_upload(db, kind, b"A" * (50 * MIB), "big.txt", study_id="s", actor="ann",
                          k=10)
        assert str(info.value).startswith("big.txt:1:")
        assert table_snapshot(db) == before

    @case(f"upload: {_kind}", "50 MB over a 32 MiB limit")
    def _over_limit(db, tmp, kind=_kind) -> None:
        before = table_snapshot(db)
        with pytest.raises(InputErrors) as info:
            import_upload(db, kind, _GOOD_LINES[kind] * (50 * MIB // len(_GOOD_LINES[kind])),
                          "big.txt", study_id="s", actor="ann", k=10, max_bytes=32 * MIB)
        message = str(info.value)
        assert "uploads are limited to 32 MiB" in message and "50.0 MiB" in message
        assert table_snapshot(db) == before


@case("upload: qrels", "over the configured limit")
def _over_configured_limit(db, tmp) -> None:
    class Huge(bytes):  # reports a size over the limit without allocating it
        def __len__(self) -> int:
            return MAX_UPLOAD_MB * MIB + 1

    before = table_snapshot(db)
    with pytest.raises(InputErrors, match=f"limited to {MAX_UPLOAD_MB} MiB"):
        import_upload(db, "qrels", Huge(b"q1 0 d1 1\n"), "big.qrels", study_id="s", actor="ann")
    assert table_snapshot(db) == before


@case("upload: qrels", "50 MB of random bytes")
def _fifty_mb_random(db, tmp) -> None:
    import random

    data = random.Random(7).randbytes(50 * MIB)
    before = table_snapshot(db)
    with pytest.raises(InputErrors) as info:
        import_upload(db, "qrels", data, "noise.bin", study_id="s", actor="ann")
    assert "not valid UTF-8" in str(info.value)
    assert table_snapshot(db) == before


# --- the tests --------------------------------------------------------------------------------


@pytest.mark.parametrize("hostile", CASES, ids=lambda c: f"{c.entry} | {c.payload}")
def test_hostile_input_holds(tmp_path: Path, hostile: Case) -> None:
    db = new_store(tmp_path, org_id="acme")
    hostile.run(db, tmp_path)


def test_upload_limit_matches_the_server_setting() -> None:
    config = tomllib.loads((REPO / ".streamlit" / "config.toml").read_text())
    assert config["server"]["maxUploadSize"] == MAX_UPLOAD_MB


def test_case_count() -> None:
    entries = sorted({c.entry for c in CASES})
    print(f"\nhostile-input cases: {len(CASES)} across {len(entries)} entry points")
    assert len(CASES) >= 100 and len(entries) >= 15
