"""Relevance Ledger app entry script: builds the navigation, nothing else.

Run with ``streamlit run app/streamlit_app.py``. The store is
``$RELEVANCE_LEDGER_DB`` (default: a per-user demo file created on first start).
"""

import sys
from pathlib import Path

_APP_DIR = Path(__file__).resolve().parent
if str(_APP_DIR.parent) not in sys.path:
    sys.path.insert(0, str(_APP_DIR.parent))

import streamlit as st  # noqa: E402

from app.components.auth import identity_gate  # noqa: E402
from app.components.session import annotator_picker, get_db, study_picker  # noqa: E402

st.set_page_config(page_title="Relevance Ledger", page_icon=":material/fact_check:", layout="wide")

#: The annotator's pages (issue 5).
ANNOTATOR_PAGES = [
    ("pages/home.py", "Home", ":material/home:"),
    ("pages/annotate.py", "Annotate", ":material/rate_review:"),
    ("pages/data.py", "Data", ":material/upload_file:"),
]

# --- Reviewer and lead pages (issue 6) -------------------------------------
# Added by their own helper as files under app/pages/; each one appears in the
# navigation only once its file exists.
REVIEWER_PAGES = [
    ("pages/inspector.py", "Inspector", ":material/manage_search:"),
    ("pages/dashboard.py", "Dashboard", ":material/monitoring:"),
    ("pages/compare.py", "Compare runs", ":material/compare_arrows:"),
    ("pages/agreement.py", "Annotator agreement", ":material/groups:"),
    ("pages/reports.py", "Reports", ":material/summarize:"),
    ("pages/members.py", "Members", ":material/group_add:"),
]
# ---------------------------------------------------------------------------


def _pages(entries: list[tuple[str, str, str]]) -> list:
    return [
        st.Page(path, title=title, icon=icon, default=(path == "pages/home.py"))
        for path, title, icon in entries
        if (_APP_DIR / path).is_file()
    ]


db = get_db()
identity = identity_gate(db)  # team mode: sign-in required; the identity is not editable
study_picker(db)
if identity is None:
    annotator_picker()

sections = {"Annotation": _pages(ANNOTATOR_PAGES)}
reviewer = _pages(REVIEWER_PAGES)
if reviewer:
    sections["Review and lead"] = reviewer
st.navigation(sections).run()
