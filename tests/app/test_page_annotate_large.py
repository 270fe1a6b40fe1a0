"""A large study's first visit: the pool of the open query at once, the study's progress
counted in the background and shown on the next run (the selector gains its counts)."""

import time

import app.components.state as state
from app.components.shared_results import ready_result

PAGE = "views/annotate.py"


def _progress_texts(at) -> list[str]:
    return [p.proto.text for p in at.get("progress")]


def test_first_visit_counts_the_study_in_the_background(small_store, new_app,
                                                        monkeypatch) -> None:
    path, db = small_store
    monkeypatch.setattr(state, "LARGE_STUDY_QUERIES", 0)  # the small study counts as large
    at = new_app("ann", PAGE)
    assert not at.exception, at.exception
    texts = _progress_texts(at)
    assert any(t.startswith("This query: you labeled 0 of") for t in texts), texts
    if not any(t.startswith("Study:") for t in texts):  # not counted yet: said, no counts
        assert any("being counted" in c.value for c in at.caption)
        assert all(" · you " not in at.selectbox(key="rl_query").format_func(o)
                   for o in at.selectbox(key="rl_query").options)
    deadline = time.monotonic() + 30
    while ready_result(db, str(path), "s1", ("progress", "s1", "ann"), viewer=None) is None:
        assert time.monotonic() < deadline, "the background count never finished"
        time.sleep(0.05)
    at.run()
    assert not at.exception, at.exception
    assert any(t.startswith("Study: you labeled 0 of") for t in _progress_texts(at))
    assert " · you 0/" in at.selectbox(key="rl_query").options[0]


def test_an_address_beyond_the_listed_queries_opens_while_counting(small_store, new_app,
                                                                   monkeypatch) -> None:
    monkeypatch.setattr(state, "LARGE_STUDY_QUERIES", 0)
    at = new_app("ann", PAGE)
    at.query_params["query"] = "q2"
    at.run()
    assert not at.exception, at.exception
    assert at.selectbox(key="rl_query").value == "q2"
