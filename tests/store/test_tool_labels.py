"""Judgments from other tools, in and out: Quepid CSV, RRE ratings JSON, ``_rank_eval``."""

import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from evalcore.cli import main
from evalcore.io.errors import InputErrors
from evalcore.io.text_lines import SourceText
from evalcore.io.tool_labels import parse_tool_labels
from evalcore.store.exports import ExportRefusedError, export_tool_labels
from evalcore.store.imports.tool_labels import import_tool_labels
from evalcore.store.query_reads import query_texts
from evalcore.store.resolution import resolved_gains
from evalcore.store.studies import QueryIn
from evalcore.store.study_handle import open_study
from evalcore.store.study_setup import add_queries
from tests.store_fixtures import new_store, table_snapshot

QUEPID = "query,docid,rating\nstar wars,d1,3\nstar wars,d2,0\nalien,d3,1\n"
RRE = {
    "index": "movies", "id_field": "id",
    "topics": [{"description": "films", "query_groups": [
        {"name": "q1", "queries": [{"template": "t.json", "placeholders": {"$query": "star wars"}}],
         "relevant_documents": {"d1": {"gain": 3}, "d2": {"gain": 0}}},
    ]}],
    "query_groups": [{"name": "q2", "relevant_documents": {"2": ["d3", "d4"]}}],
}
RANK_EVAL = {"requests": [
    {"id": "q1", "request": {"query": {"match": {"title": "star wars"}}},
     "ratings": [{"_index": "movies", "_id": "d1", "rating": 3},
                 {"_index": "movies", "_id": "d2", "rating": 0}]},
    {"id": "q2", "request": {}, "ratings": [{"_index": "movies", "_id": "d3", "rating": 1}]},
], "metric": {"precision": {"k": 10}}}


def _src(text: str, name: str = "in") -> SourceText:
    return SourceText(name, text)


def _errors(text: str, fmt: str, gain_map=None) -> str:
    with pytest.raises(InputErrors) as info:
        parse_tool_labels(_src(text, "f"), fmt, gain_map)  # type: ignore[arg-type]
    return str(info.value)


def test_reading_each_format() -> None:
    quepid = parse_tool_labels(_src(QUEPID), "quepid")
    assert [(r.query, r.doc_id, r.gain) for r in quepid.ratings] == [
        ("star wars", "d1", 3), ("star wars", "d2", 0), ("alien", "d3", 1)]
    rre = parse_tool_labels(_src(json.dumps(RRE)), "rre")
    assert {(r.query, r.doc_id, r.gain) for r in rre.ratings} == {
        ("q1", "d1", 3), ("q1", "d2", 0), ("q2", "d3", 2), ("q2", "d4", 2)}
    assert rre.index == "movies" and rre.ratings[0].query_text == "star wars"
    rank_eval = parse_tool_labels(_src(json.dumps(RANK_EVAL)), "rank-eval")
    assert [(r.query, r.doc_id, r.gain) for r in rank_eval.ratings] == [
        ("q1", "d1", 3), ("q1", "d2", 0), ("q2", "d3", 1)]


def test_quepid_real_export_columns_are_accepted() -> None:
    text = "Team Name,Case Name,Query Text,Doc ID,Rating\nt,c,star wars,d1,3\n"
    parsed = parse_tool_labels(_src(text), "quepid")
    assert [(r.query, r.doc_id, r.gain) for r in parsed.ratings] == [("star wars", "d1", 3)]
    assert any("ignored column(s) Team Name, Case Name" in w for w in parsed.warnings)


@pytest.mark.parametrize("fmt", ["quepid", "rre", "rank-eval"])
def test_round_trip_through_a_store(tmp_path: Path, fmt: str) -> None:
    text = {"quepid": QUEPID, "rre": json.dumps(RRE), "rank-eval": json.dumps(RANK_EVAL)}[fmt]
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first = new_store(tmp_path / "a")
    import_tool_labels(first, _src(text, f"in.{fmt}"), study_id="s", fmt=fmt)  # type: ignore[arg-type]
    out = io.StringIO()
    summary = export_tool_labels(open_study(first, "s", None), out, fmt, index="movies")  # type: ignore[arg-type]
    assert summary.rows == sum(len(u) for u in resolved_gains(open_study(first, "s", None)).values())
    second = new_store(tmp_path / "b")
    import_tool_labels(second, _src(out.getvalue(), "out"), study_id="s", fmt=fmt)  # type: ignore[arg-type]
    assert resolved_gains(open_study(second, "s", None)) == resolved_gains(
        open_study(first, "s", None)
    )
    assert query_texts(open_study(second, "s", None)) == query_texts(open_study(first, "s", None))
    again = io.StringIO()
    export_tool_labels(open_study(second, "s", None), again, fmt, index="movies")  # type: ignore[arg-type]
    assert again.getvalue() == out.getvalue()  # byte-identical the second time round


def test_quepid_matches_stored_queries_by_text(tmp_path: Path, store_target) -> None:
    db = new_store(store_target)
    add_queries(db, "s", [QueryIn(query_id="301", text="star wars")])
    import_tool_labels(db, _src(QUEPID), study_id="s", fmt="quepid")
    assert resolved_gains(open_study(db, "s", None))["301"] == {"d1": 3, "d2": 0}
    assert resolved_gains(open_study(db, "s", None))["alien"] == {"d3": 1}
    add_queries(db, "s", [QueryIn(query_id="999", text="star wars")])
    with pytest.raises(InputErrors, match="match several stored queries"):
        import_tool_labels(db, _src(QUEPID), study_id="s", fmt="quepid")
    rating = {"requests": [{"id": "999", "ratings": [{"_id": "d5", "rating": 1}]}]}
    import_tool_labels(db, _src(json.dumps(rating)), study_id="s", fmt="rank-eval")
    with pytest.raises(ExportRefusedError, match="same text"):
        export_tool_labels(open_study(db, "s", None), io.StringIO(), "quepid")


def test_gains_outside_0_4_need_a_gain_map() -> None:
    text = "query,docid,rating\na,d1,10\na,d2,-1\n"
    message = _errors(text, "quepid")
    assert "f:2: rating: gain 10 is outside 0..4" in message and "--gain-map" in message
    parsed = parse_tool_labels(_src(text), "quepid", {10: 4, -1: 0})
    assert [r.gain for r in parsed.ratings] == [4, 0]


HOSTILE_JSON = [
    ("rank-eval", '{"requests": [{"id": "q", "ratings": [{"_id": "d", "rating": 1}]}], '
                  '"requests": []}', "appears twice"),
    ("rank-eval", '{"requests": [{"id": "q", "ratings": [{"_id": "d", "rating": NaN}]}]}',
     "NaN is not a JSON value"),
    ("rank-eval", '{"requests": [{"id": "q", "ratings": [{"_id": "d", "rating": 1e999}]}]}',
     "number out of range"),
    ("rank-eval", '{"requests": [{"id": "q", "ratings": [{"_id": "d", "rating": '
                  + "9" * 5000 + "}]}]}", "number out of range"),
    ("rank-eval", '{"requests": [{"id": "q", "ratings": [{"_id": "d", "rating": '
                  + "9" * 40 + "}]}]}", "outside 0..4"),
    ("rank-eval", '{"requests": [{"id": "q", "ratings": [{"_id": "d", "rating": 2.5}]}]}',
     "requests[0].ratings[0].rating: gain 2.5 is not an integer (map it with --gain-map "
     "'2.5:N'"),
    ("rank-eval", '{"requests": [{"id": "q", "ratings": [{"_id": "d", "rating": true}]}]}',
     "must be an integer 0..4, got true"),
    ("rank-eval", '{"requests": [{"id": 7, "ratings": [{"_id": ["d"], "rating": "1"}]}]}',
     "requests[0].id: must be a non-empty string, got 7"),
    ("rank-eval", '{"requests": [{"id": "q", "ratings": [{"_index": "i", "_id": "d"}]}]}',
     "requests[0].ratings[0].rating: missing"),
    ("rank-eval", '{"requests": {"id": "q"}}', "requests: must be an array, got an object"),
    ("rank-eval", '{"metric": {}}', "requests: missing"),
    ("rank-eval", '[1, 2]', "must be a JSON object, got an array"),
    ("rank-eval", '{"requests": [', "not valid JSON"),
    ("rank-eval", '', "empty file"),
    ("rre", '{"topics": [{"query_groups": [{"name": "q", "relevant_documents": '
            '{"d": {"gain": 9}}}]}]}', "gain 9 is outside 0..4"),
    ("rre", '{"topics": [{"query_groups": [{"relevant_documents": {"d": {"gain": 1}}}]}]}',
     "missing, and no query text"),
    ("rre", '{"query_groups": [{"name": "q", "relevant_documents": {"d": 3}}]}',
     "must be an object, got a number"),
    ("rre", '{"query_groups": [{"name": "q", "relevant_documents": {"x": ["d"]}}]}',
     "must be an integer 0..4"),
    ("rre", '{"index": "i"}', "no 'topics' or 'query_groups'"),
    ("rank-eval", '{"requests": [{"id": "q", "ratings": [{"_id": "d", "rating": 1}, '
                  '{"_id": "d", "rating": 2}]}]}', "rating 2 contradicts"),
]


@pytest.mark.parametrize(("fmt", "text", "expected"), HOSTILE_JSON)
def test_hostile_json_files_are_refused_with_where(fmt: str, text: str, expected: str) -> None:
    assert expected in _errors(text, fmt)


def test_hostile_quepid_files() -> None:
    assert "no column named 'rating'" in _errors("query,docid\na,b\n", "quepid")
    message = _errors("query,docid,rating\n,d,1\na,,1\na,d,x\na,d,1.5\n\"a,d,1\n", "quepid")
    for part in ["f:2: query: must not be empty", "f:3: docid: must not be empty",
                 'f:4: rating: must be an integer 0..4, got "x"', "f:5: rating",
                 "f:6: not valid CSV: a quoted cell starting on this line is never closed"]:
        assert part in message
    parsed = parse_tool_labels(_src("query,docid,rating\na,d,1\na,d,1\n"), "quepid")
    assert len(parsed.ratings) == 1 and "recorded once" in parsed.warnings[0]


def test_cli_import_and_export_labels_all_or_nothing(tmp_path: Path, new_store_target) -> None:
    runner = CliRunner()
    db = str(new_store_target("s.db"))
    assert runner.invoke(main, ["init", "--db", db]).exit_code == 0
    assert runner.invoke(main, ["study", "create", "--db", db, "--study", "s", "--corpus", "c"]
                         ).exit_code == 0
    good = tmp_path / "ratings.json"
    good.write_text(json.dumps(RANK_EVAL))
    bad = tmp_path / "bad.json"
    bad.write_text('{"requests": [{"id": "q", "ratings": [{"_id": "d", "rating": 7}]}]}')
    result = runner.invoke(main, ["import", "labels", "--db", db, "--study", "s", str(bad),
                                  "--format", "rank-eval"])
    assert result.exit_code == 2 and "gain 7 is outside 0..4" in result.output
    result = runner.invoke(main, ["import", "labels", "--db", db, "--study", "s", str(good),
                                  "--format", "rank-eval"])
    assert result.exit_code == 0, result.output
    out = tmp_path / "out.json"
    result = runner.invoke(main, ["export", "labels", "--db", db, "--study", "s", "--format",
                                  "rank-eval", "--index", "movies", "-o", str(out)])
    assert result.exit_code == 0, result.output
    body = json.loads(out.read_text())
    assert body["requests"][0]["ratings"][0] == {"_index": "movies", "_id": "d1", "rating": 3}


def test_failed_import_leaves_the_store_unchanged(tmp_path: Path, store_target) -> None:
    db = new_store(store_target)
    import_tool_labels(db, _src(QUEPID), study_id="s", fmt="quepid")
    before = table_snapshot(db)
    with pytest.raises(InputErrors):
        import_tool_labels(db, _src("query,docid,rating\nz,d9,1\nz,d8,5\n"), study_id="s",
                           fmt="quepid")
    assert table_snapshot(db) == before
