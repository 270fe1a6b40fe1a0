"""The annotate page's keyboard: every item key press reaches the server with the item it was
pressed on.

:func:`item_keys` draws the item's caption line and listens to the keys; the caption and the
item's *screen id* change in the same DOM update, so a press carries the id of the item whose
caption was on screen at that instant. Presses are sent as one growing list with sequence
numbers (Streamlit merges widget values that arrive during a run: a single value would keep
only the last); :func:`new_presses` takes the unseen ones, and the next render acknowledges
them.

* **0-4, S, J** are item keys; U, N, P, Enter stay Streamlit button shortcuts.
* **Esc leaves a text field** (committing its value); keys typed in a field are never presses.
* A press with no item on screen, or before the listener is mounted
  (:func:`key_guard_script`), says so in a banner.

The component's code is a fixed string: every text it shows is set with ``textContent``.
"""

import json
from collections.abc import Callable
from dataclasses import dataclass

import streamlit as st

#: Keys that act on the item on screen: grades, S (skip), J (can't judge).
ITEM_KEYS = ("0", "1", "2", "3", "4", "s", "j")
#: The component's widget key (one per page: the annotate page draws one item at a time).
KEYS_WIDGET = "rl_item_keys"
_SEEN_KEY = "_rl_presses_seen"

_JS = r"""
export default function(component) {
  const { data, setStateValue, parentElement } = component;
  const doc = document;
  let line = parentElement.querySelector("[data-rl-item-line]");
  if (!line) {
    line = doc.createElement("div");
    line.setAttribute("data-rl-item-line", "");
    line.setAttribute("data-testid", "rlItemLine");
    // the look of a caption, in the theme's own text colour (light or dark)
    line.style.cssText = "font-size:0.875rem;line-height:1.5;opacity:0.72;overflow-wrap:anywhere;";
    parentElement.appendChild(line);
  }
  line.textContent = data.caption || "";
  line.dataset.screen = data.screen == null ? "" : String(data.screen);
  line.style.display = data.caption ? "block" : "none";
  const keys = doc.__rlItemKeys || (doc.__rlItemKeys = {
    nonce: Math.random().toString(36).slice(2) + Date.now().toString(36),
    seq: 0, pending: [], current: null,
  });
  keys.current = {line, data, setStateValue};
  const banner = (text) => {
    const say = window.__rlKeyBanner;
    if (typeof say === "function") { say(text); } else { console.error(text); }
  };
  if (!keys.installed) {
    keys.installed = true;
    const ITEM = new Set(data.item_keys);
    doc.addEventListener("keydown", (event) => {
      const target = event.target;
      const typing = target && (target.tagName === "INPUT" || target.tagName === "TEXTAREA" ||
                                target.isContentEditable);
      if (event.key === "Escape" && typing) { target.blur(); return; }
      const key = (event.key || "").toLowerCase();
      if (typing || event.ctrlKey || event.metaKey || event.altKey || !ITEM.has(key)) { return; }
      const now = keys.current;
      const line = doc.querySelector("[data-rl-item-line]");
      if (!now || !line) {
        // between two drawings of the annotate page's item, or on another page
        if (/\/annotate$/.test(window.location.pathname)) {
          event.preventDefault();
          banner("Key " + event.key + " not sent: the page was still drawing the item. " +
                 "Look at the item shown, then press again.");
        }
        return;
      }
      event.preventDefault();
      event.stopImmediatePropagation();
      const screen = line.dataset.screen;
      if (!screen) {
        banner("Key " + event.key + " not sent: no item to label is on screen.");
        return;
      }
      const acked = now.data.nonce === keys.nonce ? (now.data.acked || 0) : 0;
      keys.seq += 1;
      keys.pending = keys.pending.filter((p) => p.seq > acked);
      keys.pending.push({seq: keys.seq, key, screen: Number(screen)});
      now.setStateValue("presses", {nonce: keys.nonce, presses: keys.pending.slice()});
    }, true);
  }
}
"""

#: Installed by the app's entry script on every page before the page draws: it owns the
#: refusal banner, and answers an item key pressed on the annotate page before the item's
#: listener is mounted (the document and buttons can be on screen a moment earlier) with the
#: banner, so such a press is never lost without a word.
_KEY_GUARD = r"""<script>
(() => {
  const win = window.parent || window;
  const doc = win.document;
  if (win.__rlKeyBanner) { return; }
  win.__rlKeyBanner = (text) => {
    let box = doc.getElementById("rl-key-refused");
    if (!box) {
      box = doc.createElement("div");
      box.id = "rl-key-refused";
      box.setAttribute("role", "status");
      box.style.cssText = "position:fixed;left:50%;bottom:1rem;transform:translateX(-50%);" +
        "z-index:100000;background:#fff4e5;color:#663c00;border:1px solid #f0b36b;" +
        "border-radius:.5rem;padding:.5rem .9rem;font:14px sans-serif;max-width:90vw;";
      doc.body.appendChild(box);
    }
    box.textContent = text;
    clearTimeout(box.__hide);
    box.style.display = "block";
    box.__hide = setTimeout(() => { box.style.display = "none"; }, 5000);
  };
  const ITEM = new Set(__ITEM_KEYS__);
  doc.addEventListener("keydown", (event) => {
    if (doc.__rlItemKeys && doc.__rlItemKeys.installed) { return; }  // the item's listener
    if (!/\/annotate$/.test(win.location.pathname)) { return; }
    const target = event.target;
    const typing = target && (target.tagName === "INPUT" || target.tagName === "TEXTAREA" ||
                              target.isContentEditable);
    const key = (event.key || "").toLowerCase();
    if (typing || event.ctrlKey || event.metaKey || event.altKey || !ITEM.has(key)) { return; }
    event.preventDefault();
    win.__rlKeyBanner("Key " + event.key + " not sent: the page was still drawing the item. " +
                      "Look at the item shown, then press again.");
  }, true);
})();
</script>"""

_COMPONENT = st.components.v2.component("rl_item_keys", js=_JS, isolate_styles=False)


def key_guard_script() -> str:
    """The refusal banner and the early-press answer, as a script for ``st.html``."""
    return _KEY_GUARD.replace("__ITEM_KEYS__", json.dumps(list(ITEM_KEYS)))


@dataclass(frozen=True)
class Press:
    """One key press: the key and the screen id of the item whose caption was on screen."""

    seq: int
    key: str
    screen: int


def item_keys(caption: str, screen: int | None, on_presses: Callable[[], None]) -> None:
    """Draw the item's caption line and listen to the item keys for it.

    ``screen``: the id of the item on screen (None: no item to label); ``on_presses``: the
    callback that reads :func:`new_presses` (it runs before the next render, as a button's).
    """
    seen = st.session_state.get(_SEEN_KEY, ("", 0))
    _COMPONENT(
        key=KEYS_WIDGET,
        data={
            "caption": caption,
            "screen": screen,
            "item_keys": list(ITEM_KEYS),
            "nonce": seen[0],
            "acked": seen[1],
        },
        on_presses_change=on_presses,
    )


def new_presses() -> list[Press]:
    """The presses the server has not taken yet, in press order (each is taken once)."""
    state = st.session_state.get(KEYS_WIDGET)  # None before the component's first value
    value = state.get("presses") if hasattr(state, "get") else getattr(state, "presses", None)
    if not isinstance(value, dict):
        return []
    nonce = str(value.get("nonce", ""))
    seen_nonce, seen_seq = st.session_state.get(_SEEN_KEY, ("", 0))
    if nonce != seen_nonce:  # a new page load in this session numbers its presses from 1
        seen_seq = 0
    taken: list[Press] = []
    for raw in value.get("presses") or []:
        try:
            press = Press(
                seq=int(raw["seq"]), key=str(raw["key"]).lower(), screen=int(raw["screen"])
            )
        except (KeyError, TypeError, ValueError):
            continue
        if press.seq > seen_seq and press.key in ITEM_KEYS:
            taken.append(press)
    taken.sort(key=lambda p: p.seq)
    if taken:
        st.session_state[_SEEN_KEY] = (nonce, taken[-1].seq)
    elif nonce != seen_nonce:
        st.session_state[_SEEN_KEY] = (nonce, seen_seq)
    return taken
