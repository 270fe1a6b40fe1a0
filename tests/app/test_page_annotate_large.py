"""A large study's first visit: the pool of the open query at once, the study's progress
counted in the background and shown on the next run (the selector gains its counts)."""

from app_harness import wait_for_background_progress

import app.components.state as state

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
    wait_for_background_progress(db, path, "s1", "ann")
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


def test_home_then_annotate_count_the_study_once(small_store, new_app, monkeypatch) -> None:
    """First visits of Home (no annotator) and Annotate (an annotator) on a large study: one
    full count of the study, on one thread, then the annotator's share from it; a label after
    it is counted for its query alone."""
    import time

    import evalcore.annotation.progress as progress
    from evalcore.store.labels import record_label

    path, db = small_store
    monkeypatch.setattr(state, "LARGE_STUDY_QUERIES", 0)
    counted: list[str] = []
    whole = progress._count_study

    def slow_count(*args):
        counted.append(args[0].study_id)
        time.sleep(0.5)  # still counting when Annotate asks
        return whole(*args)

    monkeypatch.setattr(progress, "_count_study", slow_count)
    at = new_app("ann")  # Home
    at.switch_page(PAGE).run()
    assert not at.exception, at.exception
    wait_for_background_progress(db, path, "s1", "ann")
    at.run()
    assert any(t.startswith("Study: you labeled 0 of") for t in _progress_texts(at))
    record_label(db, study_id="s1", query_id="q1", unit_id="d1", gain=2, annotator="ann")
    at.run()
    assert not at.exception, at.exception
    assert any(t.startswith("Study: you labeled 1 of") for t in _progress_texts(at))
    assert counted == ["s1"]
