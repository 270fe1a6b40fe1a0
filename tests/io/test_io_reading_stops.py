"""Readers stop at STOP_AFTER errors: a huge all-invalid file is refused quickly, and says so."""

import json
from pathlib import Path

import pytest

from evalcore.io.beir import parse_objects, parse_qrels_tsv, read_beir_folder
from evalcore.io.errors import (
    MAX_REPORTED,
    STOP_AFTER,
    ErrorLog,
    InputError,
    InputErrors,
    ReadingStopped,
)
from evalcore.io.label_rows import parse_labels
from evalcore.io.observations_jsonl import parse_observations
from evalcore.io.text_lines import SourceText
from evalcore.io.trec import parse_qrels, parse_run


def _source(name: str, lines: list[str]) -> SourceText:
    return SourceText(name=name, text="".join(line + "\n" for line in lines))


def test_log_raises_at_the_limit_with_the_line_where_reading_stopped() -> None:
    log = ErrorLog("f.txt")
    for line in range(1, STOP_AFTER):
        log.add(line, None, "bad")
    assert not log.full
    with pytest.raises(ReadingStopped) as caught:
        log.add(STOP_AFTER + 5, "gain", "bad")
    exc = caught.value
    assert isinstance(exc, InputErrors) and exc.stopped
    assert exc.total == STOP_AFTER and exc.shown == MAX_REPORTED
    assert exc.hidden == STOP_AFTER - MAX_REPORTED
    notice = exc.errors[-1]
    assert notice.stop and notice.line == STOP_AFTER + 5
    lines = str(exc).splitlines()
    assert lines[-1].startswith(f"f.txt:{STOP_AFTER + 5}: reading stopped at line {STOP_AFTER + 5} "
                                "after 1,000 errors")
    assert "lower bound" in lines[-1]
    assert lines[-2] == f"... and {STOP_AFTER - MAX_REPORTED} more errors (at least 1000 in total)"


def test_log_below_the_limit_reports_every_error_and_no_notice() -> None:
    log = ErrorLog("f.txt")
    for line in range(1, 51):
        log.add(line, None, "bad")
    with pytest.raises(InputErrors) as caught:
        log.raise_if_any()
    exc = caught.value
    assert not isinstance(exc, ReadingStopped) and not exc.stopped
    assert exc.total == 50 and len(exc.errors) == 50 and exc.hidden == 0
    assert "reading stopped" not in str(exc)


def test_extend_stops_too_and_a_custom_limit_is_honoured() -> None:
    log = ErrorLog("f.txt", stop_after=3)
    errors = [InputError(file="f.txt", line=i, message="bad") for i in range(1, 10)]
    with pytest.raises(ReadingStopped) as caught:
        log.extend(errors)
    assert caught.value.total == 3 and caught.value.errors[-1].line == 3


N_LINES = 3 * STOP_AFTER

ALL_INVALID: dict[str, tuple[list[str], object]] = {
    "qrels": ([f"q{i} 0 d{i}" for i in range(N_LINES)], parse_qrels),
    "qrels bad gains": ([f"q{i} 0 d{i} x{i}" for i in range(N_LINES)], parse_qrels),
    "run": ([f"q{i} Q0 d{i} 1 nan{i} tag" for i in range(N_LINES)], parse_run),
    "run fields": ([f"q{i} Q0 d{i} 1" for i in range(N_LINES)], parse_run),
    "labels jsonl": (
        [json.dumps({"qurey_id": f"q{i}", "unit_id": "d", "gain": 7}) for i in range(N_LINES)],
        lambda s: parse_labels(s, "jsonl", default_annotator="a"),
    ),
    "labels csv": (
        ["query_id,unit_id,gain", *[f"q{i},d{i},9" for i in range(N_LINES)]],
        lambda s: parse_labels(s, "csv", default_annotator="a"),
    ),
    "observations": (
        [json.dumps({"query_id": f"q{i}", "k": 0, "returned_ids": [""]}) for i in range(N_LINES)],
        parse_observations,
    ),
    "not json": (["{" for _ in range(N_LINES)], parse_observations),
    "beir corpus": (
        [json.dumps({"_id": i}) for i in range(N_LINES)],
        lambda s: parse_objects(s, ("_id", "title", "text"), ("_id",)),
    ),
    "beir qrels": (
        ["query-id\tcorpus-id\tscore", *[f"q{i}\td{i}\tx" for i in range(N_LINES)]],
        lambda s: parse_qrels_tsv(s, None, []),
    ),
}


@pytest.mark.parametrize("kind", sorted(ALL_INVALID))
def test_every_reader_stops_at_the_limit(kind: str) -> None:
    lines, parse = ALL_INVALID[kind]
    with pytest.raises(InputErrors) as caught:
        parse(_source(f"{kind}.txt", lines))  # type: ignore[operator]
    exc = caught.value
    assert exc.stopped, f"{kind}: read every line instead of stopping"
    assert exc.total == STOP_AFTER
    notice = exc.errors[-1]
    assert notice.line is not None and notice.line < len(lines)
    assert f"reading stopped at line {notice.line} after 1,000 errors" in str(exc)


@pytest.mark.parametrize("kind", sorted(ALL_INVALID))
def test_a_small_invalid_file_still_reports_every_error(kind: str) -> None:
    lines, parse = ALL_INVALID[kind]
    header = 1 if kind in ("labels csv", "beir qrels") else 0
    with pytest.raises(InputErrors) as caught:
        parse(_source(f"{kind}.txt", lines[: header + 40]))  # type: ignore[operator]
    exc = caught.value
    assert not exc.stopped and "reading stopped" not in str(exc)
    lines_named = {e.line for e in exc.errors}
    assert lines_named >= set(range(header + 1, header + 41))


def test_beir_folder_keeps_each_files_count_and_stop_notice(tmp_path: Path) -> None:
    (tmp_path / "corpus.jsonl").write_text(
        "".join(json.dumps({"_id": i}) + "\n" for i in range(N_LINES)), encoding="utf-8"
    )
    (tmp_path / "queries.jsonl").write_text(
        "".join(json.dumps({"_id": f"q{i}"}) + "\n" for i in range(5)), encoding="utf-8"
    )
    (tmp_path / "qrels").mkdir()
    (tmp_path / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq0\t0\t1\n",
                                                 encoding="utf-8")
    with pytest.raises(InputErrors) as caught:
        read_beir_folder(tmp_path)
    exc = caught.value
    assert exc.stopped
    assert exc.total == STOP_AFTER + 5  # the corpus's 1,000 (a lower bound) and 5 in queries
    text = str(exc)
    assert "corpus.jsonl:1000: reading stopped at line 1000 after 1,000 errors" in text
    assert text.count("reading stopped") == 1  # the queries file was read to its end


def test_cli_evaluate_and_import_say_the_count_is_a_lower_bound(tmp_path: Path) -> None:
    from click.testing import CliRunner
    from store_fixtures import new_store, table_snapshot

    from evalcore.cli import main

    qrels = tmp_path / "huge.qrels"
    qrels.write_text("".join(f"q{i} 0 d{i}\n" for i in range(N_LINES)), encoding="utf-8")
    run = tmp_path / "ok.run"
    run.write_text("q1 Q0 d1 1 1.0 t\n", encoding="utf-8")
    result = CliRunner().invoke(main, ["evaluate", "--qrels", str(qrels), "--run", str(run),
                                       "--k", "10"])
    assert result.exit_code == 2
    assert "at least 1000 input error(s)" in result.stderr
    assert "huge.qrels:1000: reading stopped at line 1000" in result.stderr
    db = new_store(tmp_path)
    before = table_snapshot(db)
    db.conn.close()
    imported = CliRunner().invoke(main, ["import", "qrels", "--db", str(tmp_path / "store.db"),
                                         "--study", "s", str(qrels)])
    assert imported.exit_code != 0, imported.output
    assert "at least 1000 input error(s)" in imported.output
    assert "reading stopped at line 1000" in imported.output
    from evalcore.store.connection import open_store

    assert table_snapshot(open_store(tmp_path / "store.db")) == before


def test_a_file_of_the_wrong_encoding_stops_decoding_at_the_limit() -> None:
    from evalcore.io.text_lines import decode_source

    data = "".join(f"q{i} 0 caf\u00e9{i} 1\n" for i in range(N_LINES)).encode("latin-1")
    source = decode_source(data, "latin.qrels")
    assert len(source.errors) == STOP_AFTER  # the rest is not decoded
    with pytest.raises(InputErrors) as caught:
        parse_qrels(source)
    assert caught.value.stopped and caught.value.total == STOP_AFTER
    assert "latin.qrels:1000: reading stopped at line 1000" in str(caught.value)
    small = decode_source(data[: data.index(b"q40 ")], "small.qrels")
    assert len(small.errors) == 40  # a small file: every bad line is named
