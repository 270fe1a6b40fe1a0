"""The first run of a session on a page address runs the entry script and its navigation.

No test shortcut is needed: the views live in ``app/views/`` (not ``pages/``),
so Streamlit never falls into its legacy folder mode, in AppTest or on a server.
"""

from app_harness import ENTRY, grade_button


def test_a_page_runs_inside_the_navigation_from_the_first_run(small_store) -> None:
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(ENTRY, default_timeout=60).run()
    assert at.title[0].value == "Small study"
    at.text_input(key="rl_annotator_input").set_value("ann").run()
    at.switch_page("views/annotate.py").run()
    assert not at.exception, at.exception
    # the entry script ran: the sidebar is there and the annotator is remembered
    assert at.sidebar.text_input(key="rl_annotator_input").value == "ann"
    assert grade_button(at, 2)
    grade_button(at, 2).click().run()
    assert not at.exception, at.exception
    assert at.sidebar.text_input(key="rl_annotator_input").value == "ann"
