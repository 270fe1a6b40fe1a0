"""Key presses from the annotate page's keyboard component: each taken once, in order.

The browser sends every press not yet acknowledged, as one growing list (Streamlit merges
values that arrive during a run; a list loses none); :func:`new_presses` takes those it has
not seen, per page load (a reload numbers its presses from 1 again).
"""

from types import SimpleNamespace

import pytest

from app.components import keyboard
from app.components.keyboard import KEYS_WIDGET, Press, new_presses


@pytest.fixture
def state(monkeypatch: pytest.MonkeyPatch) -> dict:
    session: dict = {}
    monkeypatch.setattr(keyboard, "st", SimpleNamespace(session_state=session))
    return session


def _send(state: dict, nonce: str, *presses: tuple[int, str, int]) -> None:
    state[KEYS_WIDGET] = {"presses": {"nonce": nonce, "presses": [
        {"seq": seq, "key": key, "screen": screen} for seq, key, screen in presses]}}


def test_each_press_is_taken_once_in_press_order(state: dict) -> None:
    _send(state, "a", (2, "3", 7), (1, "0", 7))
    assert new_presses() == [Press(1, "0", 7), Press(2, "3", 7)]
    assert new_presses() == []  # the same list again (a rerun): nothing new
    _send(state, "a", (2, "3", 7), (3, "S", 8))  # not yet acknowledged ones come again
    assert new_presses() == [Press(3, "s", 8)]


def test_a_new_page_load_numbers_from_one_again(state: dict) -> None:
    _send(state, "a", (1, "1", 3), (2, "2", 4))
    assert len(new_presses()) == 2
    _send(state, "b", (1, "4", 9))
    assert new_presses() == [Press(1, "4", 9)]


def test_malformed_presses_and_other_keys_are_ignored(state: dict) -> None:
    _send(state, "a", (1, "x", 3), (2, "2", 3))
    state[KEYS_WIDGET]["presses"]["presses"].append({"seq": "three", "key": "1"})
    assert new_presses() == [Press(2, "2", 3)]
    state[KEYS_WIDGET] = {"presses": "not a list"}
    assert new_presses() == []
    del state[KEYS_WIDGET]
    assert new_presses() == []
