"""The app's navigation: which view files exist, under which section, title and icon.

The views live in ``app/views/``, not ``app/pages/``: Streamlit would run a ``pages/`` file
as a bare legacy page (without the entry script's sidebar, sign-in gate and import path)
until ``st.navigation`` has run once in the process.
"""

from dataclasses import dataclass
from pathlib import Path

import streamlit as st

APP_DIR = Path(__file__).resolve().parents[1]
#: The folder of the view scripts, relative to the entry script (as st.Page and st.page_link want).
VIEWS = "views"


@dataclass(frozen=True)
class View:
    """One navigation entry: its script (relative to the entry script), title and icon."""

    path: str
    title: str
    icon: str


HOME = View(f"{VIEWS}/home.py", "Home", ":material/home:")
ANNOTATE = View(f"{VIEWS}/annotate.py", "Annotate", ":material/rate_review:")
DATA = View(f"{VIEWS}/data.py", "Data", ":material/upload_file:")
INSPECTOR = View(f"{VIEWS}/inspector.py", "Inspector", ":material/manage_search:")
DASHBOARD = View(f"{VIEWS}/dashboard.py", "Dashboard", ":material/monitoring:")
COMPARE = View(f"{VIEWS}/compare.py", "Compare runs", ":material/compare_arrows:")
AGREEMENT = View(f"{VIEWS}/agreement.py", "Annotator agreement", ":material/groups:")
REPORTS = View(f"{VIEWS}/reports.py", "Reports", ":material/summarize:")
MEMBERS = View(f"{VIEWS}/members.py", "Members", ":material/group_add:")

#: Section title -> its views, in navigation order. The first view is the default page.
SECTIONS: dict[str, list[View]] = {
    "Annotation": [HOME, ANNOTATE, DATA],
    "Review and lead": [INSPECTOR, DASHBOARD, COMPARE, AGREEMENT, REPORTS, MEMBERS],
}


class MissingViewError(FileNotFoundError):
    """A view listed in :data:`SECTIONS` has no script file."""


def view_file(view: View) -> Path:
    """The script of ``view``; raises :class:`MissingViewError` naming it when it is missing."""
    path = APP_DIR / view.path
    if not path.is_file():
        raise MissingViewError(
            f"The navigation lists the page {view.title!r} as {path}, but that file does "
            f"not exist. Restore the file or update SECTIONS in {Path(__file__).name}."
        )
    return path


def navigation_pages() -> dict[str, list]:
    """``st.Page`` objects per section for ``st.navigation`` (every listed file must exist)."""
    return {
        section: [
            st.Page(view_file(view), title=view.title, icon=view.icon, default=view is HOME)
            for view in views
        ]
        for section, views in SECTIONS.items()
    }


def url_paths() -> set[str]:
    """The address path of every page (Streamlit names it after the script file)."""
    return {Path(view.path).stem for views in SECTIONS.values() for view in views}
