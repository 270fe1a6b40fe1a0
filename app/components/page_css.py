"""Fixed CSS the annotate page adds so it reads on a phone (no user text is ever put in it).

* Metric chips (``stMarkdownBadge``) wrap onto more lines instead of being cut
  with an ellipsis ("bounds 0.500…" hid the upper bound).
"""

import streamlit as st

_CSS = """
<style>
.stMarkdownBadge { white-space: normal !important; text-overflow: clip !important;
                   overflow: visible !important; max-width: 100%; height: auto !important; }
</style>
"""


def wrap_chips() -> None:
    """Let metric chips wrap (the style applies to the whole browser page)."""
    st.html(_CSS, width="content")
