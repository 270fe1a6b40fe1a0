"""What every study page starts with, and the one-shot messages callbacks leave behind."""

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import pandas as pd
import streamlit as st

from app.components.safe_text import escape_markdown, markdown_lines
from app.components.session import current_study, get_db, reader
from evalcore.access.decisions import PermissionDenied
from evalcore.analysis.bottom_line import GLOSSARY, BottomLine, table_rows
from evalcore.contract.results import METRIC_LABELS
from evalcore.store.marks import marks_read_once
from evalcore.store.studies import StudyIn
from evalcore.store.study_handle import Study, open_study

if TYPE_CHECKING:  # the comparison's models: imported by the pages that show one
    from evalcore.analysis.compare import ResultsTable

NO_STUDY = "This store holds no study yet: import one on the Data page."
#: The bottom line's tooltip: what its words mean.
GLOSSARY_HELP = "  \n".join(f"**{word}**: {text}" for word, text in GLOSSARY.items())


def study_page(title: str) -> tuple[StudyIn, Study]:
    """The session's chosen study under the page ``title``, and this page run's read handle
    on it (the one check of the run; every read of the page takes the handle, and its
    caches key on one read of the store's marks).

    Without any study the page says where to get one and stops rendering; a study the
    session's reader may not read (the picker lists none, but the page does not rely on
    it) stops it with a refusal that shows no data.
    """
    db = get_db()
    study = current_study(db)
    st.title(title)
    if study is None:
        st.info(NO_STUDY)
        st.stop()
    try:
        handle = marks_read_once(open_study(db, study.study_id, reader(), settings=study))
    except PermissionDenied:
        st.error("You may not read this study: ask one of its leads to add you as a member.")
        st.stop()
    return study, handle


def flash(key: str, kind: str, text: str) -> None:
    """Leave a message for the next render (from a callback, which cannot draw it)."""
    st.session_state[key] = (kind, text)


def show_flash(key: str) -> None:
    """Draw the message left under ``key`` once (``kind`` is st.error/success/info/toast...)."""
    kind, text = st.session_state.pop(key, ("", ""))
    if text:
        say(kind, text)


def say(kind: str, text: str, **options: Any) -> None:
    """``text`` as plain text (escaped, never markdown) in ``st.<kind>``: error, warning,
    info, success, caption, markdown or toast."""
    getattr(st, kind)(escape_markdown(text), **options)


def show_rows(rows: Iterable[dict], **options: Any) -> None:
    """Rows of plain values as the app's tables are drawn: full width, no index column."""
    st.dataframe(pd.DataFrame(list(rows)), hide_index=True, width="stretch", **options)


def results_rows(table: "ResultsTable", k: int | None) -> list[dict[str, str]]:
    """A comparison table's rows, one per run, with its significance marks; each column named
    as the verdicts name it (``RR@10``, not MRR) when the runs share the cutoff ``k``."""
    return [{"run": f"({row.letter}) {row.run}", **{
        METRIC_LABELS[m].format(k=k) if k is not None else table.column_labels[m]:
            row.cells[m].text + (f" ^{''.join(row.cells[m].marks)}" if row.cells[m].marks else "")
        for m in table.metrics}} for row in table.rows]


def show_bottom_line(line: BottomLine, *, glossary: bool = False) -> None:
    """A pair's bottom line: its sentence (with :data:`GLOSSARY_HELP` as its tooltip if
    ``glossary``), its table (a row per measure) and its notes."""
    st.markdown(f"**{escape_markdown(line.sentence)}**", help=GLOSSARY_HELP if glossary else None)
    st.table(pd.DataFrame(table_rows(line)).set_index("measure"))
    if line.notes:
        st.caption(markdown_lines(*map(escape_markdown, line.notes)))
