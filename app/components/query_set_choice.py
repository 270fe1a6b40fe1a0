"""The query-set chooser of the Compare and Reports pages, kept in the page address.

The choice (:mod:`evalcore.analysis.query_set`) is written as ``?queries=judged`` or
``?queries=q1,q7`` (nothing for all) and carried by the link to the "to decide" queue
(:func:`decide_query_set`). A file (``@FILE``) is never read from an address: the server's
files are not the visitor's.
"""

import streamlit as st

from app.components.address import set_param
from app.components.page import say
from evalcore.analysis.query_set import QuerySetError, QuerySetSpec, resolve_stored_query_set
from evalcore.live.decide_state import DecideTarget
from evalcore.store.study_handle import Study

QUERIES_PARAM = "queries"
#: The longest list of ids the address may carry.
MAX_ADDRESS_CHARS = 4000
LABELS = {
    "all": "All queries",
    "judged": "Judged: a relevant label",
    "answered": "Answered by every run",
    "list": "Listed query ids",
}


def _from_address() -> tuple[str, str]:
    """(kind, ids) of the address's ``?queries=``; all when absent or not usable."""
    raw = str(st.query_params.get(QUERIES_PARAM, "")).strip()
    if not raw or raw.lower() == "all":
        return "all", ""
    if raw.lower() in ("judged", "answered"):
        return raw.lower(), ""
    if raw.startswith("@") or len(raw) > MAX_ADDRESS_CHARS:
        say("warning",
                "The address names a query set this page cannot use (a file, or a list over "
                f"{MAX_ADDRESS_CHARS} characters): all queries are shown. List the query ids "
                "below instead."
        )
        return "all", ""
    return "list", raw


def choose_query_set(key: str) -> QuerySetSpec | None:
    """The chooser (widget key ``key``, the ids' box ``key + '_ids'``), restored from the
    address in a new session; the spec chosen, or None (with a message) when the listed
    ids name nothing."""
    ids_key = f"{key}_ids"
    if key not in st.session_state:  # a new session: a reload, a bookmark, a link
        kind, ids = _from_address()
        st.session_state[key] = kind
        st.session_state[ids_key] = ids
    cols = st.columns([2, 4])
    kind = cols[0].selectbox(
        "Queries",
        list(LABELS),
        format_func=LABELS.get,
        key=key,
        help="The queries the verdicts, intervals, paired tests and labels to decide are "
        "computed on (removed queries are never among them).",
    )
    text = kind
    if kind == "list":
        text = cols[1].text_input(
            "Query ids, comma-separated",
            key=ids_key,
            max_chars=MAX_ADDRESS_CHARS,
            placeholder="e.g. q1, q7, q12",
        )
        if not text.strip():
            set_param(QUERIES_PARAM, "")
            st.info("Type the ids of the queries to compare on, comma-separated.")
            return None
        text = text.lstrip("@")  # never a file: ids only
    try:
        spec = QuerySetSpec.parse(text)
    except QuerySetError as error:
        say("error", f"No comparison on these queries: {error}")
        return None
    set_param(QUERIES_PARAM, "" if spec.kind == "all" else spec.text())
    return spec


def decide_query_set(study: Study, target: DecideTarget) -> tuple[str, ...] | None:
    """The query set of the address (``?queries=``, from the Compare page's link) that the
    Annotate page's "to decide A vs B" queue works on: its ids, or None for every query
    (none named, or one that does not resolve: said in a warning)."""
    kind, ids = _from_address()
    if kind == "all":
        return None
    try:
        resolved = resolve_stored_query_set(
            study,
            [target.run_a, target.run_b],
            ids if kind == "list" else kind,
        )
    except QuerySetError as error:
        say("warning",
                f"The address's query set is not used: {error}. The queue covers every query."
        )
        return None
    say("caption","Queue " + resolved.record().describe().replace("queries: ", "over ", 1)
    )
    return tuple(resolved.query_ids)
