"""Keyboard behaviour the annotate page needs beyond Streamlit's button shortcuts.

* **Esc leaves a text field** (the note, the search box): the field loses
  focus, which commits its value, and the grade keys work again.
* **One press per item on screen.** The grade, skip and can't-judge buttons are
  keyed ``grade_<gain>_<showing>`` (see ``app/views/annotate.py``); after a
  press on showing *n*, further presses are held back until another showing is
  on screen (or 3 s passed: the server may have refused and kept the item), and
  the page says so in a banner. The server refuses stale presses anyway (the
  item token); this keeps them from being sent and makes every one visible,
  including those Streamlit would merge into one rerun.

The script is a fixed string: no user text is ever put into it.
"""

import streamlit as st

_SCRIPT = """
<script>
(() => {
  const doc = (window.parent && window.parent.document) || document;
  if (doc.__rlKeyboard) { return; }
  doc.__rlKeyboard = true;
  const ITEM_KEYS = new Set(["0", "1", "2", "3", "4", "s", "S", "j", "J"]);
  const HOLD_MS = 3000;
  let sent = null;  // {showing, at}
  const showingOnScreen = () => {
    const el = doc.querySelector('[class*="st-key-grade_0_"]');
    if (!el) { return null; }
    const m = /st-key-grade_0_(\\d+)/.exec(el.className);
    return m ? m[1] : null;
  };
  const banner = (text) => {
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
    box.__hide = setTimeout(() => { box.style.display = "none"; }, 4000);
  };
  doc.addEventListener("keydown", (event) => {
    const target = event.target;
    const typing = target && (target.tagName === "INPUT" || target.tagName === "TEXTAREA" ||
                              target.isContentEditable);
    if (event.key === "Escape" && typing) { target.blur(); return; }
    if (typing || event.ctrlKey || event.metaKey || event.altKey || !ITEM_KEYS.has(event.key)) {
      return;
    }
    const showing = showingOnScreen();
    if (showing === null) { return; }
    const now = Date.now();
    if (sent && sent.showing === showing && now - sent.at < HOLD_MS) {
      event.preventDefault();
      event.stopImmediatePropagation();
      banner("Key " + event.key + " not sent: the next item is not on screen yet. " +
             "Look at the item shown, then press again.");
      return;
    }
    sent = {showing, at: now};
  }, true);
})();
</script>
"""


def install_keyboard() -> None:
    """Install (once per browser page) the Esc and one-press-per-item handlers."""
    st.html(_SCRIPT, unsafe_allow_javascript=True, width="content")
