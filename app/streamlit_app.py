"""Relevance Ledger app entry script: builds the navigation, nothing else.

Run with ``streamlit run app/launcher.py`` (``app/streamlit_app.py`` works too, without the
preload). The store is ``$RELEVANCE_LEDGER_DB`` (default: a per-user demo file).
"""

import base64
import sys
from pathlib import Path

# Streamlit puts only this script's folder (app/) on the import path; the views
# import the ``app`` package, so its parent folder goes there too.
_REPO_DIR = str(Path(__file__).resolve().parents[1])
if _REPO_DIR not in sys.path:
    sys.path.insert(0, _REPO_DIR)

import streamlit as st  # noqa: E402

from app.components.address import HISTORY_POLICY, unknown_page_notice  # noqa: E402
from app.components.auth import identity_gate  # noqa: E402
from app.components.keyboard import key_guard_script  # noqa: E402
from app.components.navigation import navigation_pages, url_paths  # noqa: E402
from app.components.session import annotator_picker, get_db, study_picker  # noqa: E402
from app.process_setup import warm_imports  # noqa: E402
from evalcore.access.channel import audit_channel  # noqa: E402

# The page icon: the inline SVG Streamlit would draw for the emoji "📋", given as a data
# address. Given the emoji itself, Streamlit imports its emoji catalogue to recognise it
# (0.04-0.18 s of CPU in the cold start's first render); a ":material/...:" icon would be
# fetched from fonts.gstatic.com, and nothing may leave the machine
# (tests/browser/test_browser_offline.py).
PAGE_ICON = "data:image/svg+xml;base64," + base64.b64encode(
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 100 100">'
    '<text y=".9em" font-size="90">📋</text></svg>'.encode()
).decode("ascii")

st.set_page_config(page_title="Relevance Ledger", page_icon=PAGE_ICON, layout="wide")

db = get_db()
identity = identity_gate(db)  # team mode: sign-in required; the identity is not editable
study_picker(db)
if identity is None:
    annotator_picker()

# one script element (an element adds a gap): one history entry per page, not per address
# change; a key pressed while the annotate page still draws is answered
st.html(HISTORY_POLICY + key_guard_script(), unsafe_allow_javascript=True, width="content")
with audit_channel("app"):  # audit rows of this run record the app channel
    try:
        page = st.navigation(navigation_pages())
        if page.url_path == "":  # the default page: also what an unknown address gets
            unknown_page_notice(url_paths())
        page.run()
    finally:  # the page is drawn (or stopped): import the other pages' modules meanwhile
        warm_imports()
