"""The session's store connection, current study and annotator identity.

One SQLite connection per Streamlit session (kept in ``st.session_state``),
opened through :func:`evalcore.store.connection.open_store`. The store path
comes from ``RELEVANCE_LEDGER_DB``; by default it is a file in the per-user
data directory, created with the embedded demo study on first start.
"""

import os
from pathlib import Path

import sqlite_utils
import streamlit as st

from app.components.address import set_param
from app.components.safe_text import escape_markdown
from evalcore.access.identity import normalise_user_id
from evalcore.store.connection import open_store
from evalcore.store.location import store_target
from evalcore.store.studies import StudyIn

ENV_DB = "RELEVANCE_LEDGER_DB"
_DB_KEY = "_rl_db"
_DB_PATH_KEY = "_rl_db_path"
STUDY_KEY = "rl_study_id"
ANNOTATOR_KEY = "rl_annotator"
#: Widget keys; their values are copied to the plain keys above, which survive page switches.
STUDY_WIDGET = "rl_study_select"
ANNOTATOR_WIDGET = "rl_annotator_input"
_PENDING_STUDY_KEY = "_rl_pending_study"
_UNKNOWN_STUDY_KEY = "_rl_unknown_study"
#: The studies :func:`study_picker` listed in this script run (every run starts with it).
_KNOWN_KEY = "_rl_known_studies"
#: URL query parameters that make a page address self-contained (reload, bookmark, new tab).
ANNOTATOR_PARAM = "annotator"
STUDY_PARAM = "study"


def db_path() -> Path | str:
    """The store this app works on: ``$RELEVANCE_LEDGER_DB`` (a path or a ``postgresql://``
    URL), else ``$XDG_DATA_HOME/relevance-ledger/demo.sqlite`` (``~/.local/share`` by
    default)."""
    configured = os.environ.get(ENV_DB, "").strip()
    if configured:
        return store_target(configured)
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "relevance-ledger" / "demo.sqlite"


def get_db() -> sqlite_utils.Database:
    """This session's connection; the first call opens (and if empty, seeds) the store."""
    path = db_path()
    db = st.session_state.get(_DB_KEY)
    if db is None or st.session_state.get(_DB_PATH_KEY) != str(path):
        if isinstance(path, Path):
            path.parent.mkdir(parents=True, exist_ok=True)
        db = open_store(path)
        _seed_demo_if_empty(db)
        st.session_state[_DB_KEY] = db
        st.session_state[_DB_PATH_KEY] = str(path)
    return db


def _seed_demo_if_empty(db: sqlite_utils.Database) -> None:
    from evalcore.demo.study import demo_needs_building, ensure_demo_if_empty

    if demo_needs_building(db):
        with st.spinner("Creating the demo study (first start only)…"):
            ensure_demo_if_empty(db)


def _listed(db: sqlite_utils.Database) -> tuple[list[StudyIn], int]:
    """The studies this session may open (:mod:`evalcore.access`), and how many team-mode
    studies that leaves out (one read of the store's studies). Signed in (team mode): the
    team-mode studies the identity may see. Without sign-in the identity is self-declared,
    so only studies in local single-user mode are listed."""
    from app.components.auth import signed_in_user
    from evalcore.store.scoping import local_studies_and_team_count, visible_studies

    user = signed_in_user()
    if user is not None:
        return visible_studies(db, user, include_local=False), 0
    return local_studies_and_team_count(db)


def current_study(db: sqlite_utils.Database) -> StudyIn | None:
    """The study chosen in the sidebar (the first study by default), among the studies the
    sidebar's picker listed at the start of this script run (read again only when it did
    not run): a page asks without a statement to the store."""
    known = st.session_state.get(_KNOWN_KEY)
    if known is None:
        known = _listed(db)[0]
    if not known:
        return None
    ids = [s.study_id for s in known]
    if st.session_state.get(STUDY_KEY) not in ids:
        st.session_state[STUDY_KEY] = ids[0]
    chosen = st.session_state[STUDY_KEY]
    return next(s for s in known if s.study_id == chosen)


def study_picker(db: sqlite_utils.Database) -> StudyIn | None:
    """Sidebar selector of the current study; returns it (None when the store is empty).

    The entry script calls it at the start of every run: the studies it lists are the ones
    :func:`current_study` chooses from for the rest of the run."""
    from app.components.auth import hidden_studies_notice

    known, hidden = _listed(db)
    hidden_studies_notice(hidden)
    st.session_state[_KNOWN_KEY] = known
    if not known:
        st.sidebar.info("This store holds no study yet: import one on the Data page.")
        return None
    pending = st.session_state.pop(_PENDING_STUDY_KEY, None)
    from_address = pending is None and STUDY_KEY not in st.session_state
    if from_address:
        pending = st.query_params.get(STUDY_PARAM)  # a reload, a bookmark or a new tab
    if pending in {s.study_id for s in known}:
        st.session_state[STUDY_KEY] = st.session_state[STUDY_WIDGET] = pending
    fallback = current_study(db)
    if from_address and pending and fallback is not None and pending != fallback.study_id:
        st.session_state[_UNKNOWN_STUDY_KEY] = (pending, fallback.study_id)
    names = {s.study_id: s.name for s in known}
    _restore_widget(STUDY_WIDGET, STUDY_KEY)
    st.session_state[STUDY_KEY] = st.sidebar.selectbox(
        "Study",
        options=list(names),
        format_func=lambda sid: names.get(sid, sid),
        key=STUDY_WIDGET,
    )
    set_param(STUDY_PARAM, st.session_state[STUDY_KEY])
    _warn_unknown_study(names)
    return current_study(db)


def _warn_unknown_study(names: dict[str, str]) -> None:
    """Name the study the address asked for but this session cannot open.

    Shown until another study is chosen, so the fallback is never silent.
    """
    unknown = st.session_state.get(_UNKNOWN_STUDY_KEY)
    if unknown is None:
        return
    wanted, fallback = unknown
    if st.session_state.get(STUDY_KEY) != fallback:
        del st.session_state[_UNKNOWN_STUDY_KEY]
        return
    st.warning(escape_markdown(
        f"The address asks for study {wanted!r}, which is not a study you can open in this "
        f"store; showing {names.get(fallback, fallback)!r} instead. Pick a study in the sidebar."
    ), icon=":material/warning:")


def select_study_next_run(study_id: str) -> None:
    """Make ``study_id`` the current study from the next run on (e.g. after creating it)."""
    st.session_state[_PENDING_STUDY_KEY] = study_id


def annotator_picker() -> str:
    """Sidebar input of the annotator identity (until sign-in is configured).

    The name is also kept in the page address (``?annotator=``), so a reload,
    a bookmark or a link opened in a new tab keeps it (a new session starts
    from the address).
    """
    if ANNOTATOR_KEY not in st.session_state:
        st.session_state[ANNOTATOR_KEY] = str(st.query_params.get(ANNOTATOR_PARAM, ""))[:200]
    _restore_widget(ANNOTATOR_WIDGET, ANNOTATOR_KEY)
    value = st.sidebar.text_input(
        "Annotator",
        key=ANNOTATOR_WIDGET,
        placeholder="your name",
        max_chars=200,
        help="Every label and completeness change is recorded under this name "
        "(until sign-in is configured).",
    )
    st.session_state[ANNOTATOR_KEY] = value.strip()
    set_param(ANNOTATOR_PARAM, annotator())
    return annotator()


#: The page's own name field (shown where a page needs a name and has none yet).
_ANNOTATOR_ON_PAGE = "rl_annotator_on_page"


def annotator_prompt(why: str) -> None:
    """Ask for the annotator name on the page itself, not only in the sidebar (collapsed on a
    phone): the same name as the sidebar's field, which follows it."""
    st.info(why)
    st.text_input("Your name (every label is recorded under it)", key=_ANNOTATOR_ON_PAGE,
                  placeholder="your name",
                  max_chars=200, on_change=_take_name_from_page,
                  help="Every label and completeness change is recorded under this name "
                  "(until sign-in is configured).")


def _take_name_from_page() -> None:
    name = str(st.session_state.get(_ANNOTATOR_ON_PAGE, "")).strip()
    st.session_state[ANNOTATOR_KEY] = name
    st.session_state[ANNOTATOR_WIDGET] = name


def address_params(**extra: str) -> dict[str, str]:
    """Query parameters for a link that opens the same study and annotator (plus ``extra``)."""
    from app.components.auth import signed_in_user

    params = {STUDY_PARAM: str(st.session_state.get(STUDY_KEY, ""))}
    if signed_in_user() is None:
        params[ANNOTATOR_PARAM] = annotator()
    params.update(extra)
    return {k: v for k, v in params.items() if v}


def _restore_widget(widget_key: str, plain_key: str) -> None:
    """Streamlit drops a widget's state on page switches; restore it from the plain key."""
    if widget_key not in st.session_state and plain_key in st.session_state:
        st.session_state[widget_key] = st.session_state[plain_key]


def annotator() -> str:
    """The annotator identity remembered in this session ('' until chosen), normalised
    like a sign-in identity (``Ann@Acme.org`` is ``ann@acme.org``)."""
    value = str(st.session_state.get(ANNOTATOR_KEY, "")).strip()
    try:
        return normalise_user_id(value) if value else ""
    except ValueError:
        return value


def reader() -> str | None:
    """Whom the app reads documents as: the signed-in identity; None without sign-in.

    Without sign-in the annotator name typed in the sidebar is a claim, not an
    identity: it never unlocks the documents of a corpus a team-mode study uses
    (a local corpus is readable by anyone). See docs/access-model.md.
    """
    from app.components.auth import signed_in_user

    return signed_in_user()
