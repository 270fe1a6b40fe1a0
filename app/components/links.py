"""Addresses of one item: on the Annotate page, and of its conflict on the agreement page.

An address names the study, the query and the unit (and, without sign-in, the
annotator), so it opens the same item in a new tab, after a reload or from a
bookmark. :func:`item_href` gives a relative URL (for links inside tables);
:func:`item_params` the query parameters (for ``st.page_link``).
"""

from urllib.parse import urlencode

from app.components.navigation import AGREEMENT
from app.components.session import address_params

QUERY_PARAM = "query"
UNIT_PARAM = "unit"
#: The pages' scripts (for ``st.page_link``; from the navigation table) and URL paths
#: (Streamlit names a page's path after its file).
AGREEMENT_PAGE = AGREEMENT.path
ANNOTATE_PATH = "annotate"
AGREEMENT_PATH = "agreement"


def item_params(query_id: str, unit_id: str) -> dict[str, str]:
    """Query parameters naming the session's study and annotator and this (query, unit)."""
    return address_params(**{QUERY_PARAM: query_id, UNIT_PARAM: unit_id})


def item_href(path: str, query_id: str, unit_id: str) -> str:
    """Relative address of the item on the page at ``path`` (e.g. ``annotate?study=...``).

    Relative, so it resolves against the app's own base path.
    """
    return f"{path}?{urlencode(item_params(query_id, unit_id))}"
