"""The page address (query parameters) keeps the annotator, the study and the open query.

A reload, a bookmark or a link opened in a new tab starts a new Streamlit
session: what it needs to show the same thing must be in the address.
"""

from urllib.parse import parse_qs

from app_harness import ENTRY, grade_button, item_caption
from streamlit.testing.v1 import AppTest

ANNOTATE = "views/annotate.py"


def _session(params: dict[str, str], page: str | None = None) -> AppTest:
    """A new session (as after a reload) opened on an address with ``params``."""
    at = AppTest.from_file(ENTRY, default_timeout=60)
    at.query_params.update(params)
    at.run()
    if page is not None:
        at.switch_page(page).run()
    assert not at.exception, at.exception
    return at


def _shown_unit(at: AppTest) -> str:
    caption = item_caption(at)
    return caption.split(" · ")[1]


def _warnings(at: AppTest) -> str:
    return " ".join(w.value for w in at.warning).replace("\\", "")


def _param(at: AppTest, name: str) -> str | None:
    values = at.query_params.get(name)
    if isinstance(values, list):
        return values[-1] if values else None
    return values


def test_typing_a_name_puts_it_in_the_address(small_store, new_app) -> None:
    at = new_app("ann", ANNOTATE)
    assert _param(at, "annotator") == "ann"
    assert _param(at, "study") == "s1"
    at.text_input(key="rl_annotator_input").set_value("").run()
    assert _param(at, "annotator") is None


def test_a_reload_keeps_the_annotator(small_store) -> None:
    at = _session({"annotator": "ann"}, ANNOTATE)
    assert at.text_input(key="rl_annotator_input").value == "ann"
    assert not any("Enter your name" in i.value for i in at.info)
    assert grade_button(at, 2)


def test_the_address_opens_the_named_query(small_store) -> None:
    at = _session({"annotator": "ann", "query": "q2"}, ANNOTATE)
    assert at.selectbox(key="rl_query").value == "q2"
    assert _shown_unit(at) in {"d5", "d6"}
    assert _param(at, "query") == "q2"


def test_the_address_opens_the_named_item_once(small_store) -> None:
    at = _session({"annotator": "ann", "query": "q1", "unit": "d4"}, ANNOTATE)
    assert _shown_unit(at) == "d4"
    assert _param(at, "unit") is None  # consumed: labeling moves on as usual
    grade_button(at, 2).click().run()
    assert _shown_unit(at) != "d4"


def test_choosing_another_query_updates_the_address(small_store) -> None:
    at = _session({"annotator": "ann", "query": "q1"}, ANNOTATE)
    at.selectbox(key="rl_query").set_value("q2").run()
    assert at.selectbox(key="rl_query").value == "q2"  # the old address does not pull it back
    assert _param(at, "query") == "q2"


def test_an_unknown_query_or_item_in_the_address_is_named(small_store) -> None:
    at = _session({"annotator": "ann", "query": "nope"}, ANNOTATE)
    assert "'nope', which is not a query of this study" in _warnings(at)
    assert at.selectbox(key="rl_query").value == "q1"
    at = _session({"annotator": "ann", "query": "q2", "unit": "d1"}, ANNOTATE)
    assert "'d1', which is not in the pool of query q2" in _warnings(at)


def test_an_unknown_study_in_the_address_falls_back_to_a_visible_one(small_store) -> None:
    at = _session({"study": "someone-elses", "annotator": "ann"}, ANNOTATE)
    assert _param(at, "study") == "s1"


def test_dashboard_label_links_name_query_item_and_annotator(small_store, new_app) -> None:
    at = new_app("ann", "views/dashboard.py")
    links = [p for p in at.get("page_link") if p.proto.label.startswith("Label ")]
    assert links
    for link in links:
        params = {k: v[0] for k, v in parse_qs(link.proto.query_string).items()}
        unit, query = link.proto.label.removeprefix("Label ").split(" for ")
        assert params == {"study": "s1", "annotator": "ann", "query": query, "unit": unit}
        assert link.proto.page.endswith("annotate")


def test_home_query_table_links_each_query_to_annotate(small_store, new_app) -> None:
    at = new_app("ann")
    frame = next(d.value for d in at.dataframe if "annotate" in d.value.columns)
    links = dict(zip(frame["query"], frame["annotate"], strict=True))
    assert links["q2"] == "annotate?study=s1&annotator=ann&query=q2"
    tab = _session({k: v[0] for k, v in parse_qs(links["q2"].split("?", 1)[1]).items()},
                   ANNOTATE)
    assert tab.selectbox(key="rl_query").value == "q2"


def test_a_hostile_annotator_in_the_address_stays_plain_text(small_store) -> None:
    hostile = "<b>x</b> **y** [z](http://e.example)"
    for page in (ANNOTATE, "views/agreement.py", "views/reports.py", "views/dashboard.py"):
        at = _session({"annotator": hostile}, page)
        assert at.text_input(key="rl_annotator_input").value == hostile
        assert not any("<b>" in m.value or "](http" in m.value for m in at.markdown)
        assert _param(at, "annotator") == hostile


def test_an_unknown_study_in_the_address_is_named_in_a_warning(small_store) -> None:
    at = _session({"study": "nosuch", "annotator": "ann"})
    assert "study 'nosuch', which is not a study you can open" in _warnings(at)
    assert "showing 'Small study' instead" in _warnings(at)
    assert at.title[0].value == "Small study"
    at.run()  # still shown on the next run, until another study is chosen
    assert "'nosuch'" in _warnings(at)
    at = _session({"study": "s1", "annotator": "ann"})
    assert not at.warning


def test_a_hostile_unknown_study_in_the_address_stays_plain_text(small_store) -> None:
    at = _session({"study": "<b>x</b> **y**", "annotator": "ann"})
    warning = next(w.value for w in at.warning if "is not a study" in w.value)
    assert "<b>" not in warning and "\\*\\*y\\*\\*" in warning
