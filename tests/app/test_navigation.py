"""The navigation: every listed view file exists and renders; a missing one is an error."""

import pytest
from app_harness import ENTRY, REPO

from app.components import navigation
from app.components.navigation import SECTIONS, MissingViewError, View, navigation_pages, view_file

VIEWS = [view for views in SECTIONS.values() for view in views]


def test_every_listed_view_file_exists_under_app_views() -> None:
    for view in VIEWS:
        assert view_file(view) == REPO / "app" / view.path
        assert view.path.startswith("views/")
    assert len({v.path for v in VIEWS}) == len(VIEWS) == 9


def test_no_folder_named_pages_beside_the_entry_script() -> None:
    # Streamlit would treat it as its legacy multipage folder (first request to /page breaks)
    assert not (REPO / "app" / "pages").exists()


def test_a_missing_view_file_is_an_error_naming_the_file(monkeypatch) -> None:
    gone = View("views/renamed_away.py", "Gone", ":material/help:")
    with pytest.raises(MissingViewError, match=r"'Gone'.*views/renamed_away\.py.*does not exist"):
        view_file(gone)
    monkeypatch.setitem(navigation.SECTIONS, "Annotation", [navigation.HOME, gone])
    with pytest.raises(MissingViewError, match="renamed_away.py"):
        navigation_pages()


@pytest.mark.parametrize("view", VIEWS, ids=lambda v: v.title)
def test_each_view_renders_in_the_navigation(small_store, view: View) -> None:
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(ENTRY, default_timeout=60)
    at.run()
    at.text_input(key="rl_annotator_input").set_value("ann").run()
    at.switch_page(view.path).run()
    assert not at.exception, at.exception
    assert at.title, f"{view.title} drew no title"
    # the entry script ran around the page: the sidebar pickers are there
    assert at.sidebar.selectbox(key="rl_study_select").value == "s1"
    assert at.sidebar.text_input(key="rl_annotator_input").value == "ann"
