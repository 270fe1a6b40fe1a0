"""A query's information need beside the query: description and narrative, as safe text.

One component for the annotate, inspector and adjudication pages: a collapsible
``st.expander`` (open by default where an annotator judges) holding the
description and the narrative (the assessor's guideline), escaped so that no
markdown or HTML in them is ever interpreted. Nothing is shown when the query
has no information need.
"""

import streamlit as st

from app.components.safe_text import escape_markdown
from evalcore.store.information_needs import information_need
from evalcore.store.study_handle import Study


def show_information_need(study: Study, query_id: str, *, expanded: bool = False) -> None:
    """Render the query's information need (nothing when it has none), read through the
    page's handle."""
    need = information_need(study, query_id)
    if need.empty:
        return
    with st.expander("Information need: what counts as relevant", expanded=expanded):
        if need.description.strip():
            st.markdown("**Description:** " + escape_markdown(need.description))
        if need.narrative.strip():
            st.markdown("**Narrative (guideline):** " + escape_markdown(need.narrative))
