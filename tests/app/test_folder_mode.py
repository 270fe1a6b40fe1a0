"""Without the test shortcut: Streamlit's legacy ``pages/``-folder mode is left on the first run.

The other app tests switch that mode off up front (as the server has it after its
first run); here it is on, as on a fresh server whose first request is a page URL.
"""

import pytest
from app_harness import ENTRY, grade_button


@pytest.fixture
def _navigation_v2_only() -> None:
    """Overrides the autouse fixture of conftest.py: keep Streamlit's own behaviour."""


def test_a_page_runs_inside_the_navigation_even_in_folder_mode(small_store) -> None:
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(ENTRY, default_timeout=60).run()
    assert at.title[0].value == "Small study"
    at.text_input(key="rl_annotator_input").set_value("ann").run()
    at.switch_page("pages/annotate.py").run()
    assert not at.exception, at.exception
    # the entry script ran: the sidebar is there and the annotator is remembered
    assert at.sidebar.text_input(key="rl_annotator_input").value == "ann"
    assert grade_button(at, 2)
    grade_button(at, 2).click().run()
    assert not at.exception, at.exception
    assert at.sidebar.text_input(key="rl_annotator_input").value == "ann"
