"""The Compare page's query-set chooser: the set in the page address (``?queries=``),
restored by a reload, used by every verdict; files never read from an address."""

from app_harness import ENTRY
from streamlit.testing.v1 import AppTest

from evalcore.store.labels import record_label
from evalcore.store.removed_queries import remove_query
from evalcore.store.study_handle import open_study

PAGE = "views/compare.py"


def _session(params: dict[str, str]) -> AppTest:
    """A new session (as after a reload) on the Compare page with ``params`` in the address."""
    at = AppTest.from_file(ENTRY, default_timeout=60)
    at.query_params.update(params)
    at.run()
    at.switch_page(PAGE).run()
    assert not at.exception, at.exception
    return at


def _param(at: AppTest, name: str) -> str | None:
    values = at.query_params.get(name)
    if isinstance(values, list):
        return values[-1] if values else None
    return values


def _text(at: AppTest) -> str:
    return " ".join(
        [c.value for c in at.caption] + [e.value for e in at.error] + [w.value for w in at.warning]
    ).replace("\\", "")


def test_judged_in_the_address_is_restored_after_a_reload(small_store, new_app) -> None:
    _, db = small_store
    record_label(db, study_id="s1", query_id="q1", unit_id="d1", gain=2, annotator="a")
    at = new_app(page=PAGE)
    assert at.selectbox(key="rl_compare_queries").value == "all"
    assert _param(at, "queries") is None
    assert "Over all (2 queries" in _text(at)
    at.selectbox(key="rl_compare_queries").set_value("judged").run()
    assert _param(at, "queries") == "judged"
    assert "Over judged (1 of 2" in _text(at)
    again = _session({"queries": _param(at, "queries")})  # the reload: a new session
    assert again.selectbox(key="rl_compare_queries").value == "judged"
    assert _param(again, "queries") == "judged"
    assert "Over judged (1 of 2" in _text(again)


def test_listed_ids_go_to_the_address_and_come_back(small_store, new_app) -> None:
    at = new_app(page=PAGE)
    at.selectbox(key="rl_compare_queries").set_value("list").run()
    at.text_input(key="rl_compare_queries_ids").set_value("q2").run()
    assert not at.exception, at.exception
    assert _param(at, "queries") == "q2"
    assert "Over q2 (1 of 2" in _text(at)
    again = _session({"queries": "q2"})
    assert again.selectbox(key="rl_compare_queries").value == "list"
    assert again.text_input(key="rl_compare_queries_ids").value == "q2"


def test_unknown_and_removed_ids_are_named(small_store) -> None:
    _, db = small_store
    at = _session({"queries": "q1,zz"})
    assert "1 listed query is not in study 's1': 'zz'" in _text(at)
    remove_query(db, study_id="s1", query_id="q2", actor=None)
    at = _session({"queries": "q2"})
    assert "1 listed query is removed" in _text(at)
    at = _session({})
    assert "Over all (1 query;" in _text(at)  # a removed query leaves every comparison


def test_a_file_in_the_address_is_never_read(small_store, tmp_path) -> None:
    ids = tmp_path / "ids.txt"
    ids.write_text("q1\n", encoding="utf-8")
    at = _session({"queries": f"@{ids}"})
    assert at.selectbox(key="rl_compare_queries").value == "all"
    assert "cannot use (a file" in _text(at)
    assert _param(at, "queries") is None


def test_a_report_published_from_the_app_records_its_query_set(small_store, new_app) -> None:
    from evalcore.report.stored import load_report
    from evalcore.store.reports import list_reports

    _, db = small_store
    record_label(db, study_id="s1", query_id="q1", unit_id="d1", gain=2, annotator="a")
    at = new_app(annotator="lead", page="views/reports.py")
    at.selectbox(key="rl_report_queries").set_value("judged").run()
    assert _param(at, "queries") == "judged"
    at.button(key="rl_report_generate").click().run()
    assert not at.exception, at.exception
    (stored,) = list_reports(open_study(db, "s1", None))
    report = load_report(open_study(db, "s1", None), stored.report_id)
    assert report.query_set is not None
    assert (report.query_set.kind, report.query_set.n_queries) == ("judged", 1)
    assert [q.query_id for q in report.runs[0].evaluation.queries] == ["q1"]
    assert "queries: judged (1 of 2" in _text(at)


def test_the_results_table_is_over_the_set(small_store, new_app) -> None:
    _, db = small_store
    for unit, gain in {"d1": 2, "d2": 0, "d3": 1, "d4": 3}.items():
        record_label(db, study_id="s1", query_id="q1", unit_id=unit, gain=gain, annotator="a")
    at = _session({"queries": "judged"})
    assert "Over the 1 query of the query set chosen above." in _text(at)
    (table,) = [d.value for d in at.dataframe if "run" in d.value.columns]
    assert table["P@3"][0] == "0.6667"  # q1 alone: r1 returns d1 d2 d3, two relevant


def test_the_queue_and_its_link_keep_to_the_set(small_store) -> None:
    from urllib.parse import parse_qs

    _, db = small_store
    for query, unit, gain in (("q1", "d1", 2), ("q1", "d2", 0), ("q2", "d5", 1)):
        record_label(db, study_id="s1", query_id=query, unit_id=unit, gain=gain, annotator="a")
    every = _session({})
    assert "q1" in set(next(d.value for d in every.dataframe if "unit" in d.value.columns)["query"])
    at = _session({"queries": "q2"})
    queue = next(d.value for d in at.dataframe if "unit" in d.value.columns)
    assert set(queue["query"]) == {"q2"}  # q1's unlabeled d3, d4 are not proposed
    links = [p for p in at.get("page_link") if p.proto.label.startswith("Label these")]
    assert links
    for link in links:
        assert parse_qs(link.proto.query_string)["queries"] == ["q2"]
