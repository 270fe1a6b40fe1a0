"""Who is using the app: a signed-in team member, or the local single user.

* **Team mode** — ``.streamlit/secrets.toml`` (in the directory the server runs
  from) has an ``[auth]`` section: Streamlit's native OpenID Connect sign-in
  (``st.login``) is required before anything of the store is shown. The
  identity is the provider's e-mail claim (lower-cased), or its ``sub`` claim
  when there is no e-mail; it is what every label, completeness change and
  report is recorded under, and it cannot be edited. Only studies in team mode
  where the identity is a member are listed (:func:`evalcore.access.visible_studies`).
* **Local single-user mode** — no ``[auth]`` section: no sign-in, the sidebar
  says so, and the annotator name typed in the sidebar is the identity.

Roles and organisation scoping are enforced by :mod:`evalcore.access` inside
the store functions; this module only establishes who is asking.
"""

from collections.abc import Mapping

import sqlite_utils
import streamlit as st

from app.components.safe_text import escape_markdown
from evalcore.access.identity import normalise_user_id

AUTH_SECTION = "auth"
SIGNED_IN_KEY = "_rl_signed_in_user"
LOCAL_MODE_TEXT = "Local single-user mode (no sign-in)"


def sign_in_configured() -> bool:
    """Does ``secrets.toml`` carry an ``[auth]`` section (team mode)?"""
    try:
        return AUTH_SECTION in st.secrets
    except (FileNotFoundError, OSError, ValueError):
        return False


def identity_of(user: Mapping[str, object]) -> str | None:
    """The identity of a signed-in ``st.user``: its e-mail, else its ``sub`` (None if neither)."""
    for claim in ("email", "sub"):
        value = user.get(claim)
        if isinstance(value, str) and value.strip():
            try:
                return normalise_user_id(value)
            except ValueError:
                return None
    return None


def signed_in_user() -> str | None:
    """The signed-in identity in team mode; None in local single-user mode."""
    if not sign_in_configured():
        return None
    return st.session_state.get(SIGNED_IN_KEY)


def hidden_studies_notice(hidden: int) -> None:
    """Without sign-in: say in the sidebar how many team-mode studies are not listed."""
    if hidden:
        st.sidebar.caption(
            f"{hidden} team-mode stud{'y is' if hidden == 1 else 'ies are'} not shown: "
            "they need sign-in (see the README, Team sign-in)."
        )


def identity_gate(db: sqlite_utils.Database) -> str | None:
    """Require sign-in in team mode (stops the run until signed in); show who is working
    (without sign-in, the study picker says how many team-mode studies it leaves out).

    Returns the signed-in identity in team mode, None in local single-user mode.
    """
    if not sign_in_configured():
        st.session_state.pop(SIGNED_IN_KEY, None)
        st.sidebar.info(LOCAL_MODE_TEXT, icon=":material/person:")
        return None
    if not st.user.get("is_logged_in"):
        st.session_state.pop(SIGNED_IN_KEY, None)
        st.title("Relevance Ledger")
        st.info("This workbench is shared by a team: sign in to see your studies.")
        st.button("Sign in", key="rl_sign_in", type="primary", on_click=st.login)
        st.stop()
    identity = identity_of(st.user.to_dict())
    if identity is None:
        st.error("The sign-in provider returned neither an e-mail nor a subject: "
                 "ask your administrator to add the email scope.")
        st.button("Sign out", key="rl_sign_out", on_click=st.logout)
        st.stop()
    st.session_state[SIGNED_IN_KEY] = identity
    from app.components.session import ANNOTATOR_KEY

    st.session_state[ANNOTATOR_KEY] = identity
    st.sidebar.markdown("Signed in as **" + escape_markdown(identity) + "**")
    st.sidebar.button("Sign out", key="rl_sign_out", on_click=st.logout)
    return identity
