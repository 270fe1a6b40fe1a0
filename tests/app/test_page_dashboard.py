"""The live dashboard page through AppTest: cards, parity with evaluate_run, live refresh."""

from evalcore.analysis.interval_text import aggregate_card
from evalcore.analysis.run_evaluation import evaluate_run
from evalcore.store.labels import record_label
from evalcore.store.study_handle import open_study

PAGE = "views/dashboard.py"


def _texts(at) -> str:
    return "\n".join([m.value for m in at.markdown] + [c.value for c in at.caption])


def _unescape(text: str) -> str:
    return text.replace("\\", "")


def test_cards_match_evaluate_run(small_store, new_app) -> None:
    _, db = small_store
    record_label(db, study_id="s1", query_id="q2", unit_id="d5", gain=2, annotator="ann")
    record_label(db, study_id="s1", query_id="q2", unit_id="d6", gain=0, annotator="ann")
    at = new_app(page=PAGE)
    assert not at.exception
    text = _unescape(_texts(at))
    for run in ("r1", "r2"):
        report = evaluate_run(open_study(db, "s1", None), run)
        for value in report.aggregates.values():
            card = aggregate_card(value)
            assert card.detail in text
            if card.available:
                assert card.headline in text
    # nothing is labeled on q1: every card is unavailable and says why, with counts
    assert "unavailable" in text
    assert "1 of 2 queries missing (1 no label at all)" in text
    assert "missing_reference" not in text  # plain words on screen; codes stay in JSON and CSV
    assert not any("0.0000" in m.value for m in at.markdown)


def test_blocking_list_and_coverage_are_shown(small_store, new_app) -> None:
    at = new_app(page=PAGE)
    frames = [d.value for d in at.dataframe]
    blocking = next(f for f in frames if "unlocks" in f.columns)
    assert set(blocking["query"]) == {"q1", "q2"}
    assert list(blocking.columns) == ["query", "unit", "unlocks", "blocks", "best rank", "runs",
                                     "needs"]
    # q2 has a single unit per run: labeling it alone makes precision and RR available
    top = blocking.iloc[0]
    assert top["query"] == "q2" and top["unlocks"] == 2
    progress = [p.proto.text for p in at.get("progress")]
    assert any("0 of 6 pooled returned items labeled" in t for t in progress)


def test_label_in_store_lowers_unavailable_count_on_next_refresh(small_store, new_app) -> None:
    _, db = small_store
    at = new_app(page=PAGE)
    assert "2 of 2 queries missing" in _unescape(_texts(at))
    record_label(db, study_id="s1", query_id="q2", unit_id="d5", gain=3, annotator="ann")
    record_label(db, study_id="s1", query_id="q2", unit_id="d6", gain=3, annotator="ann")
    at.run()
    text = _unescape(_texts(at))
    assert "1 of 2 queries missing" in text
    progress = [p.proto.text for p in at.get("progress")]
    assert any("2 of 6 pooled returned items labeled" in t for t in progress)


def test_label_link_opens_annotate_on_that_item(small_store, new_app) -> None:
    """The link is a real address: a new session (a new tab) opened on it shows the item."""
    from urllib.parse import parse_qs

    from app_harness import ENTRY, item_caption
    from streamlit.testing.v1 import AppTest

    at = new_app(annotator="ann", page=PAGE)
    link = next(p for p in at.get("page_link") if p.proto.label.startswith("Label ")
                and p.proto.label.endswith(" for q2"))
    unit = link.proto.label.removeprefix("Label ").split(" for ")[0]
    tab = AppTest.from_file(ENTRY, default_timeout=60)
    tab.query_params.update({k: v[0] for k, v in parse_qs(link.proto.query_string).items()})
    tab.run()
    tab.switch_page("views/annotate.py").run()
    assert not tab.exception, tab.exception
    assert tab.session_state["rl_query"] == "q2"
    caption = item_caption(tab)
    assert caption.split(" · ")[1] == unit



def test_adjudicate_link_opens_that_conflict(small_store, new_app) -> None:
    """The Adjudicate link keeps the study and names the conflict; a new tab opens on it."""
    from urllib.parse import parse_qs

    from app_harness import ENTRY
    from streamlit.testing.v1 import AppTest

    from app.components.links import AGREEMENT_PAGE, AGREEMENT_PATH

    _, db = small_store
    record_label(db, study_id="s1", query_id="q2", unit_id="d5", gain=0, annotator="alice")
    record_label(db, study_id="s1", query_id="q2", unit_id="d5", gain=3, annotator="bob")
    at = new_app(annotator="rev", page=PAGE)
    link = next(p for p in at.get("page_link") if p.proto.label == "Adjudicate d5 for q2")
    params = {k: v[0] for k, v in parse_qs(link.proto.query_string).items()}
    assert params == {"study": "s1", "annotator": "rev", "query": "q2", "unit": "d5"}
    assert link.proto.page == AGREEMENT_PATH  # the page's address, /agreement
    tab = AppTest.from_file(ENTRY, default_timeout=60)
    tab.query_params.update(params)
    tab.run()
    tab.switch_page(AGREEMENT_PAGE).run()
    assert not tab.exception, tab.exception
    assert any("The conflict this address names" in m.value for m in tab.markdown)
    assert tab.selectbox(key="rl_adj_q2_d5_gain").value is None

def test_hostile_run_name_is_escaped(small_store, new_app) -> None:
    from evalcore.store.runs import add_run

    _, db = small_store
    add_run(db, study_id="s1", name="**bold** <b>x</b>", source="imported", k=1,
            results=[("q1", 1, "d1", 1.0)])
    at = new_app(page=PAGE)
    assert not at.exception
    from app.components.safe_text import escape_markdown

    assert any(escape_markdown("**bold** <b>x</b>") in m.value for m in at.markdown)
    assert not any("<b>" in m.value for m in at.markdown)


def test_the_reasons_on_the_cards_are_explained_beside_them(small_store, new_app) -> None:
    from evalcore.contract.reasons import REASON_TEXT, Reason, reason_words

    at = new_app(page=PAGE)
    captions = [_unescape(c.value) for c in at.caption]
    cards = next(i for i, c in enumerate(captions) if "queries missing (" in c)
    legend = next(i for i, c in enumerate(captions)
                  if c.startswith(f"{reason_words(Reason.MISSING_REFERENCE)}: ")
                  and REASON_TEXT[Reason.MISSING_REFERENCE] in c)
    assert legend > cards


def test_a_large_study_shows_distributions_and_a_chosen_subset(small_store, new_app,
                                                               monkeypatch) -> None:
    """From SUMMARY_FROM queries: the distribution figure, then the per-query chart of the
    subset the user picks (each rule, the page number), never an error."""
    import json

    monkeypatch.setattr("evalcore.live.charts.SUMMARY_FROM", 1)
    at = new_app(page=PAGE)
    assert len(at.get("plotly_chart")) == 1  # nothing available yet: no lowest value
    assert "No query matches this rule." in [c.value for c in at.caption]
    _, db = small_store
    record_label(db, study_id="s1", query_id="q2", unit_id="d5", gain=2, annotator="ann")
    record_label(db, study_id="s1", query_id="q2", unit_id="d6", gain=0, annotator="ann")
    at.run()
    charts = at.get("plotly_chart")
    assert len(charts) == 2
    summary, detail = (json.loads(c.proto.spec) for c in charts)
    assert "available values (bins of 0.05)" in json.dumps(summary["layout"])
    assert "unavailable" in json.dumps(summary["data"])
    assert "lowest of r1" in detail["layout"]["xaxis2"]["title"]["text"]
    for rule in ("different", "unavailable", "page"):
        at.selectbox(key="rl_dash_subset").set_value(rule).run()
        assert not at.exception, at.exception
    at.number_input(key="rl_dash_page").set_value(1).run()
    assert not at.exception
    detail = json.loads(at.get("plotly_chart")[1].proto.spec)
    assert "page 1 of 1: 2 queries" in detail["layout"]["xaxis2"]["title"]["text"]


def test_a_long_blocking_list_is_read_page_by_page(small_store, new_app) -> None:
    """Only one page of the list is on screen; the count is exact; page 2 is the list's
    items 16 to 30 in list order."""
    from evalcore.live.dashboard import LiveDashboard
    from evalcore.store.runs import add_run

    _, db = small_store
    add_run(db, study_id="s1", name="wide", source="imported", k=15,
            results=[(q, r, f"w{q}-{r}", 20.0 - r) for q in ("q1", "q2") for r in range(1, 16)])
    state = LiveDashboard.build(open_study(db, "s1", None))
    total = state.n_blocking_items()
    assert total > 30
    at = new_app(page=PAGE)
    assert not at.exception
    table = next(d.value for d in at.dataframe if "unlocks" in d.value.columns)
    first = state.blocking_list(15)
    assert list(zip(table["query"], table["unit"], strict=True)) == [
        (i.query_id, i.unit_id) for i in first]
    assert f"Items 1 to 15 of {total:,}" in _unescape(_texts(at))
    at.number_input(key="rl_dash_blocking_page").set_value(2).run()
    assert not at.exception
    table = next(d.value for d in at.dataframe if "unlocks" in d.value.columns)
    assert list(zip(table["query"], table["unit"], table["unlocks"], table["blocks"],
                    strict=True)) == [
        (i.query_id, i.unit_id, i.unlocks, i.blocks) for i in state.blocking_list(15, 15)]
    assert f"Items 16 to 30 of {total:,}" in _unescape(_texts(at))


#: The statement that reads the store's marks (evalcore.store.marks.store_marks).
_MARKS = "SELECT (SELECT coalesce(max(event_id), 0) FROM label_events)"


def _round_trips(at, monkeypatch, page: str) -> tuple[list[str], int]:
    """The statements the session's connection executes for one run of ``page``, and the
    store connections opened meanwhile (on PostgreSQL each statement is a round trip to the
    server and each connection a new server session)."""
    import sqlite3

    import psycopg

    opened = [0]

    def counting(connect):
        def wrapped(*args, **kwargs):
            opened[0] += 1
            return connect(*args, **kwargs)
        return wrapped

    db = at.session_state["_rl_db"]
    seen: list[str] = []
    with monkeypatch.context() as patch:
        patch.setattr(sqlite3, "connect", counting(sqlite3.connect))
        patch.setattr(psycopg, "connect", counting(psycopg.connect))
        db.conn.set_trace_callback(seen.append)
        try:
            at.switch_page(page).run()
        finally:
            db.conn.set_trace_callback(None)
    assert not at.exception, at.exception
    return seen, opened[0]


def test_a_dashboard_run_reads_the_store_once_and_opens_no_connection(small_store, new_app,
                                                                      monkeypatch) -> None:
    """The page and its two fragments read the live state several times in one run: the
    store's marks are read once per run, the study opened once, and the state's first build
    names its units on the page's connection (no new connection: a PostgreSQL server session
    costs milliseconds, a SQLite file nothing, so only one engine would show it)."""
    _, db = small_store
    at = new_app("alice", page="views/home.py")
    first, opened = _round_trips(at, monkeypatch, PAGE)  # the state is built on this run
    assert opened == 0
    assert sum(s.startswith(_MARKS) for s in first) <= 2  # the build's before and after
    assert sum("FROM study_members WHERE study_id" in s for s in first) == 1
    at.switch_page("views/home.py").run()
    again, opened = _round_trips(at, monkeypatch, PAGE)
    assert opened == 0
    assert sum(s.startswith(_MARKS) for s in again) == 1
    assert sum("FROM study_members WHERE study_id" in s for s in again) == 1
    # the next run's handle reads the store again: another annotator's label is shown
    record_label(db, study_id="s1", query_id="q2", unit_id="d5", gain=3, annotator="ann")
    record_label(db, study_id="s1", query_id="q2", unit_id="d6", gain=3, annotator="ann")
    at.run()
    progress = [p.proto.text for p in at.get("progress")]
    assert any("2 of 6 pooled returned items labeled" in t for t in progress)
