"""What every study page starts with, and the one-shot messages callbacks leave behind."""

import sqlite_utils
import streamlit as st

from app.components.safe_text import escape_markdown
from app.components.session import current_study, get_db, reader
from evalcore.store.authorize import may_read
from evalcore.store.studies import StudyIn

NO_STUDY = "This store holds no study yet: import one on the Data page."


def study_page(title: str) -> tuple[sqlite_utils.Database, StudyIn]:
    """The session's store and chosen study under the page ``title``.

    Without any study the page says where to get one and stops rendering; a study the
    session's reader may not read (the picker lists none, but the check is here too, and
    in every library read the page makes) stops it with a refusal that shows no data.
    """
    db = get_db()
    study = current_study(db)
    st.title(title)
    if study is None:
        st.info(NO_STUDY)
        st.stop()
    if not may_read(db, reader(), study.study_id):
        st.error("You may not read this study: ask one of its leads to add you as a member.")
        st.stop()
    return db, study


def flash(key: str, kind: str, text: str) -> None:
    """Leave a message for the next render (from a callback, which cannot draw it)."""
    st.session_state[key] = (kind, text)


def show_flash(key: str) -> None:
    """Draw the message left under ``key`` once (``kind`` is st.error/success/info/toast...)."""
    kind, text = st.session_state.pop(key, ("", ""))
    if text:
        getattr(st, kind)(escape_markdown(text))
