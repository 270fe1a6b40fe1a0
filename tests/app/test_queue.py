"""The annotator's walk through a pool: auto-advance, skip, browse."""

from app.components.queue import WalkState, current_item, next_unlabeled, step

ORDER = ["a", "b", "c", "d"]


def test_next_unlabeled_wraps_and_skips_labeled() -> None:
    assert next_unlabeled(ORDER, {"b"}, set(), after="a") == "c"
    assert next_unlabeled(ORDER, {"a", "b"}, set(), after="d") == "c"
    assert next_unlabeled(ORDER, set(ORDER), set(), after="a") is None
    assert next_unlabeled([], set(), set()) is None


def test_passed_items_come_back_last() -> None:
    assert next_unlabeled(ORDER, {"a"}, {"b"}, after="a") == "c"
    assert next_unlabeled(ORDER, {"a", "c", "d"}, {"b"}, after="a") == "b"


def test_current_item_prefers_cursor() -> None:
    state = WalkState(cursor="c")
    assert current_item(ORDER, set(), state) == "c"
    state = WalkState(cursor="zzz", skipped=["a"])
    assert current_item(ORDER, set(), state) == "b"


def test_step_browses_cyclically() -> None:
    assert step(ORDER, "d", 1) == "a"
    assert step(ORDER, "a", -1) == "d"
    assert step(ORDER, None, 1) == "a"
    assert step([], None, 1) is None
