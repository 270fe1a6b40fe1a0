"""Keyboard behaviour the annotate page needs beyond Streamlit's button shortcuts.

Esc leaves a text field (the note, the search box): the field loses focus,
which commits its value, and the grade keys work again. The script is a fixed
string (no user text is ever put into it).
"""

import streamlit as st

_ESC_LEAVES_FIELDS = """
<script>
(() => {
  const doc = (window.parent && window.parent.document) || document;
  if (doc.__rlEscLeavesFields) { return; }
  doc.__rlEscLeavesFields = true;
  doc.addEventListener("keydown", (event) => {
    const target = event.target;
    if (event.key === "Escape" && target && (target.tagName === "INPUT" || target.tagName === "TEXTAREA")) {
      target.blur();
    }
  }, true);
})();
</script>
"""


def esc_leaves_text_fields() -> None:
    """Install (once per browser page) the Esc handler."""
    st.html(_ESC_LEAVES_FIELDS, unsafe_allow_javascript=True, width="content")
