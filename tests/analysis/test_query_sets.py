"""Query sets (all / judged / answered / a list / @FILE) and removed queries: the resolver,
its refusals, ``compare --queries``, ``report --queries``, ``evalcore queries``, schema v18."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from access_fixtures import ANNOTATOR, LEAD, REVIEWER, team_store
from click.testing import CliRunner
from store_fixtures import store_at_version

from evalcore.analysis.query_set import (
    QuerySetError,
    QuerySetSpec,
    resolve_query_set,
    resolve_stored_query_set,
)
from evalcore.annotation.progress import study_progress
from evalcore.cli import main
from evalcore.store import schema
from evalcore.store.audit import audit_entries
from evalcore.store.connection import open_store
from evalcore.store.labels import record_label
from evalcore.store.observations import QueryFacts, query_facts
from evalcore.store.removed_queries import remove_query, removed_query_ids, restore_query
from evalcore.store.runs import add_run
from evalcore.store.studies import StudyIn
from evalcore.store.study_handle import open_study
from evalcore.store.study_setup import create_study

RUNS = "A,B"


def _build(path: Path) -> None:
    """Study s, runs A and B at k=3:
    q1 both answer, a relevant label; q2 both answer, only a non-relevant label;
    q3 only A answers; q4 labeled relevant, no run answers; q10 both answer, no label."""
    db = open_store(path)
    create_study(db, StudyIn(study_id="s", corpus_id="c"))
    for q, unit, gain in (("q1", "d1", 2), ("q1", "d2", 0), ("q2", "d1", 0), ("q4", "d9", 3)):
        record_label(db, study_id="s", query_id=q, unit_id=unit, gain=gain, annotator="ann")
    add_run(
        db,
        study_id="s",
        name="A",
        source="imported",
        k=3,
        results=[
            ("q1", 1, "d1", 3.0),
            ("q1", 2, "d2", 2.0),
            ("q2", 1, "d1", 1.0),
            ("q3", 1, "d5", 1.0),
            ("q10", 1, "d7", 1.0),
        ],
    )
    add_run(
        db,
        study_id="s",
        name="B",
        source="imported",
        k=3,
        results=[
            ("q1", 1, "d2", 3.0),
            ("q1", 2, "d1", 2.0),
            ("q2", 1, "d3", 1.0),
            ("q10", 1, "d8", 1.0),
        ],
    )
    db.conn.close()


@pytest.fixture
def store(tmp_path: Path, new_store_target) -> Path:
    path = new_store_target("s.db")
    _build(path)
    return path


def _cli(*args: object) -> tuple[int, str]:
    result = CliRunner().invoke(main, [str(a) for a in args])
    return result.exit_code, result.output


def _facts(**change) -> QueryFacts:
    base = dict(
        study_id="s",
        query_ids=["q1", "q2", "q3", "q4", "q10"],
        study_query_ids=frozenset({"q1", "q2", "q3", "q4", "q10", "q11"}),
        judged=frozenset({"q1", "q4"}),
        answered={"A": frozenset({"q1", "q2", "q3", "q10"}), "B": frozenset({"q1", "q2", "q10"})},
        removed=frozenset(),
    )
    return QueryFacts(**{**base, **change})


# --- the spec and the resolver ----------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("all", ["q1", "q2", "q3", "q4", "q10"]),
        ("", ["q1", "q2", "q3", "q4", "q10"]),
        ("JUDGED", ["q1", "q4"]),
        ("answered", ["q1", "q2", "q10"]),
        ("q10, q1,,q1", ["q1", "q10"]),
        ("q11", ["q11"]),  # a study query no run ranks: both runs returned nothing for it
    ],
)
def test_each_kind_resolves_in_natural_order(text, expected) -> None:
    resolved = resolve_query_set(QuerySetSpec.parse(text), _facts())
    assert list(resolved.query_ids) == expected
    assert resolved.n_study == 5
    record = resolved.record()
    assert record.n_queries == len(expected)
    assert record.query_ids == (expected if resolved.spec.kind == "list" else [])


def test_answered_is_over_the_runs_named() -> None:
    spec = QuerySetSpec.parse("answered")
    assert list(resolve_query_set(spec, _facts(), ["A"]).query_ids) == ["q1", "q2", "q3", "q10"]


def test_unknown_ids_are_refused_naming_them() -> None:
    with pytest.raises(QuerySetError, match=r"2 listed queries are not in study 's': 'zz'; 'q0'"):
        resolve_query_set(QuerySetSpec.parse("q1,zz,q0"), _facts())


def test_a_removed_id_is_refused_with_how_to_restore() -> None:
    with pytest.raises(QuerySetError, match=r"1 listed query is removed .*'q2'.*restore it"):
        resolve_query_set(QuerySetSpec.parse("q1,q2"), _facts(removed=frozenset({"q2"})))


@pytest.mark.parametrize(
    ("text", "facts", "why"),
    [
        ("judged", {"judged": frozenset()}, "no query has a relevant label"),
        (
            "answered",
            {"answered": {"A": frozenset({"q3"}), "B": frozenset({"q1"})}},
            "no query was answered by every run",
        ),
        ("all", {"query_ids": []}, "the runs rank no query"),
    ],
)
def test_an_empty_set_is_refused(text, facts, why) -> None:
    with pytest.raises(QuerySetError, match=f"is empty in study 's': {why}"):
        resolve_query_set(QuerySetSpec.parse(text), _facts(**facts))


@pytest.mark.parametrize("text", [",", " , ,"])
def test_a_list_naming_nothing_is_refused(text) -> None:
    with pytest.raises(QuerySetError, match="names no query"):
        QuerySetSpec.parse(text)


def test_a_file_names_unknown_ids_by_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "topics.txt"
    path.write_text("# my topics\nq1\n\nzz\n  q10  \nq1\nyy\n", encoding="utf-8")
    spec = QuerySetSpec.parse(f"@{path}")
    assert spec.ids == ("q1", "zz", "q10", "yy") and spec.lines == (2, 4, 5, 7)
    with pytest.raises(QuerySetError) as err:
        resolve_query_set(spec, _facts())
    assert f"{path}:4: 'zz'; {path}:7: 'yy'" in str(err.value)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "does not exist"),
        (b"# nothing\n\n", "names no query"),
        (b"q1\n\xff\xfe\n", ":2: not UTF-8"),
    ],
)
def test_bad_files_are_refused_with_a_message(tmp_path: Path, content, message) -> None:
    path = tmp_path / "topics.txt"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(QuerySetError, match=message):
        QuerySetSpec.parse(f"@{path}")


def test_a_device_an_empty_name_and_a_huge_file_are_refused(tmp_path: Path) -> None:
    from evalcore.analysis.query_set import MAX_FILE_BYTES

    with pytest.raises(QuerySetError, match="not a regular file"):
        QuerySetSpec.parse("@/dev/zero")  # never read: it would never end
    with pytest.raises(QuerySetError, match="names no file"):
        QuerySetSpec.parse("@ ")
    huge = tmp_path / "huge.txt"
    with huge.open("wb") as handle:
        handle.truncate(MAX_FILE_BYTES + 1)
    with pytest.raises(QuerySetError, match="is over 16 MiB"):
        QuerySetSpec.parse(f"@{huge}")


def test_a_folder_is_refused(tmp_path: Path) -> None:
    with pytest.raises(QuerySetError, match="is a folder"):
        QuerySetSpec.parse(f"@{tmp_path}")


def test_the_store_facts(store: Path) -> None:
    db = open_store(store)
    facts = query_facts(open_study(db, "s", None), ["A", "B"])
    assert facts.query_ids == ["q1", "q2", "q3", "q4", "q10"]
    assert facts.judged == {"q1", "q4"}  # gain 0 is not relevant
    assert facts.answered == {"A": {"q1", "q2", "q3", "q10"}, "B": {"q1", "q2", "q10"}}
    remove_query(db, study_id="s", query_id="q4", actor=None)
    again = resolve_stored_query_set(open_study(db, "s", None), ["A", "B"], "judged")
    assert list(again.query_ids) == ["q1"] and again.n_study == 4


# --- compare --queries ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "ids"),
    [
        ("all", ["q1", "q2", "q3", "q4", "q10"]),
        ("judged", ["q1", "q4"]),
        ("answered", ["q1", "q2", "q10"]),
        ("q2,q3", ["q2", "q3"]),
    ],
)
def test_compare_computes_every_part_on_the_set(store: Path, spec, ids) -> None:
    code, out = _cli(
        "compare",
        "--db",
        store,
        "--study",
        "s",
        "--runs",
        RUNS,
        "-m",
        "P@3",
        "-m",
        "nDCG@3",
        "--format",
        "json",
        "--queries",
        spec,
    )
    assert code == 0, out
    body = json.loads(out)
    assert body["query_set"]["kind"] == ("list" if "," in spec else spec)
    assert body["query_set"]["n_queries"] == len(ids)
    for item in body["measures"]:
        assert item["decision"]["n_queries"] == len(ids)
        assert item["paired_tests"]["n_queries"] == len(ids)
        for queued in item["to_decide"]["items"]:
            assert queued["query_id"] in ids
    code, text = _cli(
        "compare", "--db", store, "--study", "s", "--runs", RUNS, "-m", "P@3", "--queries", spec
    )
    assert code == 0, text
    head = text.split("\nDetails: ")[0]  # the bottom line, then the query set it is over
    line = head.splitlines()[-1]
    assert line.startswith(f"queries: {spec}") and f"{len(ids)}" in line


def test_compare_refuses_unknown_ids_and_empty_sets(store: Path, tmp_path: Path) -> None:
    code, out = _cli(
        "compare",
        "--db",
        store,
        "--study",
        "s",
        "--runs",
        RUNS,
        "-m",
        "P@3",
        "--queries",
        "q1,nope",
    )
    assert code == 2 and "--queries: 1 listed query is not in study 's': 'nope'" in out
    assert "Traceback" not in out
    listed = tmp_path / "ids.txt"
    listed.write_text("q1\nmissing\n", encoding="utf-8")
    code, out = _cli(
        "compare",
        "--db",
        store,
        "--study",
        "s",
        "--runs",
        RUNS,
        "-m",
        "P@3",
        "--queries",
        f"@{listed}",
    )
    assert code == 2 and f"{listed}:2: 'missing'" in out
    code, out = _cli(
        "compare",
        "--db",
        store,
        "--study",
        "s",
        "--runs",
        RUNS,
        "-m",
        "P@3",
        "--queries",
        f"@{tmp_path / 'none.txt'}",
    )
    assert code == 2 and "does not exist" in out


# --- report --queries -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "ids"),
    [
        ("all", ["q1", "q2", "q3", "q4", "q10"]),
        ("judged", ["q1", "q4"]),
        ("answered", ["q1", "q2", "q10"]),
        ("q10,q1", ["q1", "q10"]),
    ],
)
def test_report_records_the_set_in_json_html_and_csv(
    store: Path, tmp_path: Path, spec, ids
) -> None:
    out = tmp_path / "r.json"
    code, text = _cli(
        "report",
        "--db",
        store,
        "--study",
        "s",
        "--runs",
        RUNS,
        "--out",
        out,
        "--queries",
        spec,
        "-m",
        "P@3",
        "--by",
        "lead",
    )
    assert code == 0, text
    assert f"queries: {spec}" in text
    body = json.loads(out.read_text(encoding="utf-8"))
    record = body["query_set"]
    assert record["n_queries"] == len(ids) and record["n_study"] == 5
    assert record["query_ids"] == (ids if "," in spec else [])
    if spec != "all":  # every run is evaluated and decided on the set
        for run in body["runs"]:
            assert [q["query_id"] for q in run["evaluation"]["queries"]] == ids
    for pair in body["decisions"]:
        for measure in pair["measures"]:
            assert measure["decision"]["n_queries"] == len(ids)
    html = tmp_path / "r.html"
    code, text = _cli(
        "report",
        "--db",
        store,
        "--study",
        "s",
        "--runs",
        RUNS,
        "--out",
        html,
        "--queries",
        spec,
        "-m",
        "P@3",
        "--by",
        "lead",
        "--name",
        "h",
    )
    assert code == 0, text
    assert "<td>Query set</td>" in html.read_text(encoding="utf-8")
    csv_out = tmp_path / "r.csv"
    code, text = _cli(
        "report",
        "--db",
        store,
        "--study",
        "s",
        "--runs",
        RUNS,
        "--out",
        csv_out,
        "--queries",
        spec,
        "-m",
        "P@3",
        "--by",
        "lead",
        "--name",
        "c",
    )
    assert code == 0, text
    lines = csv_out.read_text(encoding="utf-8").splitlines()
    assert lines[0].endswith(",query_set")
    assert all(f"{len(ids)}" in line.rsplit(",", 1)[-1] or '"' in line for line in lines[1:])


def test_report_refuses_a_bad_set_and_stores_nothing(store: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    code, text = _cli(
        "report",
        "--db",
        store,
        "--study",
        "s",
        "--runs",
        RUNS,
        "--out",
        out,
        "--queries",
        "q1,zz",
        "--by",
        "lead",
    )
    assert code == 2 and "'zz'" in text and not out.exists()
    db = open_store(store)
    assert db.execute("SELECT count(*) FROM reports").fetchone()[0] == 0


# --- removing and restoring queries ----------------------------------------------------------


def test_remove_and_restore_are_audited_keep_labels_and_leave_every_set(store: Path) -> None:
    db = open_store(store)
    labels_before = db.execute("SELECT * FROM label_events ORDER BY event_id").fetchall()
    assert "q1" in study_progress(open_study(db, "s", None)).queries
    code, out = _cli(
        "queries",
        "remove",
        "--db",
        store,
        "--study",
        "s",
        "--query",
        "q1",
        "--reason",
        "duplicate topic",
        "--actor",
        "lena",
    )
    assert code == 0, out
    assert db.execute("SELECT * FROM label_events ORDER BY event_id").fetchall() == labels_before
    assert removed_query_ids(open_study(db, "s", None)) == {"q1"}
    code, out = _cli(
        "compare", "--db", store, "--study", "s", "--runs", RUNS, "-m", "P@3", "--format", "json"
    )
    assert json.loads(out)["measures"][0]["decision"]["n_queries"] == 4
    assert "q1" not in study_progress(open_study(db, "s", None)).queries
    code, out = _cli("queries", "list", "--db", store, "--study", "s", "--removed")
    assert code == 0 and out.startswith("q1\tremoved ") and "by lena: duplicate topic" in out
    code, out = _cli("queries", "remove", "--db", store, "--study", "s", "--query", "q1")
    assert code == 2 and "already removed" in out
    code, out = _cli(
        "queries",
        "restore",
        "--db",
        store,
        "--study",
        "s",
        "--query",
        "q1",
        "--reason",
        "not a duplicate",
        "--actor",
        "lena",
    )
    assert code == 0, out
    assert removed_query_ids(open_study(db, "s", None)) == frozenset()
    code, out = _cli("queries", "restore", "--db", store, "--study", "s", "--query", "q1")
    assert code == 2 and "not removed" in out
    actions = [
        (e.action, e.detail["query_id"], e.detail["reason"])
        for e in audit_entries(open_study(db, "s", None))
        if e.action.startswith("query.")
    ]
    assert actions == [
        ("query.restore", "q1", "not a duplicate"),
        ("query.remove", "q1", "duplicate topic"),
    ]
    code, out = _cli(
        "compare", "--db", store, "--study", "s", "--runs", RUNS, "-m", "P@3", "--format", "json"
    )
    assert json.loads(out)["measures"][0]["decision"]["n_queries"] == 5


def test_removing_an_unknown_query_is_refused(store: Path) -> None:
    code, out = _cli("queries", "remove", "--db", store, "--study", "s", "--query", "nope")
    assert code == 2 and "no query 'nope' in study 's'" in out and "Traceback" not in out


@pytest.mark.parametrize("actor", [ANNOTATOR, REVIEWER])
def test_only_leads_remove_or_restore(store_target, actor: str) -> None:
    db, _ = team_store(store_target)
    path = store_target
    db.conn.close()
    code, out = _cli(
        "queries", "remove", "--db", path, "--study", "s", "--query", "q1", "--actor", actor
    )
    assert code == 1 and out.startswith("refused:")
    db = open_store(path)
    assert removed_query_ids(open_study(db, "s", LEAD)) == frozenset()
    remove_query(db, study_id="s", query_id="q1", actor=LEAD, reason="r")
    code, out = _cli(
        "queries", "restore", "--db", path, "--study", "s", "--query", "q1", "--actor", actor
    )
    assert code == 1 and out.startswith("refused:")
    assert removed_query_ids(open_study(db, "s", LEAD)) == {"q1"}
    restore_query(db, study_id="s", query_id="q1", actor=LEAD)
    assert removed_query_ids(open_study(db, "s", LEAD)) == frozenset()


def test_a_removed_query_leaves_the_dashboard(store: Path) -> None:
    from evalcore.live.dashboard import LiveDashboard

    db = open_store(store)
    state = LiveDashboard.build(open_study(db, "s", None))
    assert "q3" in state.query_ids
    remove_query(db, study_id="s", query_id="q3", actor=None)
    assert state.refresh(open_study(db, state.study_id, None)).full
    assert "q3" not in state.query_ids
    restore_query(db, study_id="s", query_id="q3", actor=None)
    state.refresh(open_study(db, state.study_id, None))
    assert "q3" in state.query_ids


def test_the_archive_keeps_the_labels_and_the_removal(store: Path, tmp_path: Path, new_store_target) -> None:
    db = open_store(store)
    remove_query(db, study_id="s", query_id="q4", actor=None, reason="off topic")
    db.conn.close()
    archive = tmp_path / "s.zip"
    code, out = _cli("export", "study", "--db", store, "--study", "s", "--out", archive)
    assert code == 0, out
    target = new_store_target("t.db")
    open_store(target).conn.close()
    code, out = _cli(
        "import", "study", "--db", target, "--in", archive, "--as", "copy", "--actor", "lena"
    )
    assert code == 0, out
    code, out = _cli("verify", "--db", target)
    assert code == 0, out
    copy = open_store(target)
    assert copy.execute(
        "SELECT unit_id, gain FROM label_events WHERE study_id = 'copy' AND query_id = 'q4'"
    ).fetchall() == [("d9", 3)]
    assert removed_query_ids(open_study(copy, "copy", "lena")) == {"q4"}
    reason = copy.execute("SELECT reason FROM removed_queries WHERE study_id = 'copy'").fetchone()[
        0
    ]
    assert reason == "off topic"


# --- schema v18 --------------------------------------------------------------------------


@pytest.mark.sqlite_only
def test_a_v17_store_migrates_and_keeps_its_labels(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    store_at_version(
        path,
        17,
        "INSERT INTO label_events (study_id, query_id, unit_id, kind, gain, "
        "annotator, created_at, note, source) VALUES ('s', 'q1', 'd1', 'label', 2, "
        "'ann', '2026-01-01T00:00:00Z', '', 'annotate')",
    )
    db = open_store(path)
    assert schema.schema_version(db) == schema.SCHEMA_VERSION >= 18
    assert removed_query_ids(open_study(db, "s", None)) == frozenset()
    remove_query(db, study_id="s", query_id="q1", actor=None)
    assert removed_query_ids(open_study(db, "s", None)) == {"q1"}
    assert db.execute("SELECT count(*) FROM label_events").fetchone()[0] == 1


# --- an evaluation restricted to a set ---------------------------------------------------


def test_a_restricted_evaluation_is_the_evaluation_over_the_set(store: Path) -> None:
    from evalcore.analysis.query_set import restrict_evaluation
    from evalcore.analysis.run_evaluation import evaluate_run_measures

    db = open_store(store)
    whole, _ = evaluate_run_measures(open_study(db, "s", None), "A")
    assert restrict_evaluation(whole, [q.query_id for q in whole.queries]) == whole
    for subset in (["q1", "q2"], ["q1"], ["q3", "q10"], []):
        direct, _ = evaluate_run_measures(open_study(db, "s", None), "A", query_ids=subset)
        restricted = restrict_evaluation(whole, subset)
        assert [q.query_id for q in restricted.queries] == subset
        assert restricted.aggregates == direct.aggregates, subset
