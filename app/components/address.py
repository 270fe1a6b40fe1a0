"""The page address: what a person would bookmark or share is in it, and history holds pages.

* A page seeds its selectors from the address with :func:`restore_choice` (the address wins
  on a new request: a reload, bookmark, shared link or Back) and writes its choices back
  with :func:`write_address`; the selectors' ``persist_state="session"`` keeps the session's
  last choice across page switches.
* :data:`HISTORY_POLICY` makes an address change that keeps the page replace the history
  entry, so Back takes one press per page.
* :func:`unknown_page_notice` says so when the address names no page (Streamlit shows Home).

The scripts here are fixed strings: no user text is put into them.
"""

from urllib.parse import urlparse

import streamlit as st

from app.components.safe_text import escape_markdown

#: Make address changes within a page replace the history entry (once per browser tab).
HISTORY_POLICY = """<script>
(() => {
  const win = window.parent || window;
  if (win.__rlHistoryPolicy) { return; }
  win.__rlHistoryPolicy = true;
  const history = win.history;
  const push = history.pushState.bind(history);
  const replace = history.replaceState.bind(history);
  history.pushState = (state, unused, url) => {
    let samePage = false;
    try {
      samePage = new URL(url, win.location.href).pathname === win.location.pathname;
    } catch (error) { samePage = false; }
    return samePage ? replace(state, unused, url) : push(state, unused, url);
  };
})();
</script>"""

#: (page, parameter) -> the value this session last wrote there (another one is a new request).
_WRITTEN_KEY = "_rl_address_written"


def unknown_page_notice(url_paths: set[str]) -> None:
    """Say so when the browser's address names no page of the app (Streamlit shows Home)."""
    try:
        path = urlparse(st.context.url or "").path
    except (AttributeError, ValueError):
        return
    base = "/" + str(st.get_option("server.baseUrlPath") or "").strip("/")
    if base != "/" and path.startswith(base):
        path = path[len(base):]
    asked = path.strip("/")
    if asked and asked not in url_paths:
        st.error(escape_markdown(
            f"There is no page /{asked} in this app: showing Home instead. Pick a page in the "
            "navigation, or check the address."), icon=":material/link_off:")


def _written() -> dict:
    return st.session_state.setdefault(_WRITTEN_KEY, {})


def new_request(page: str, *params: str) -> bool:
    """Whether the address's ``params`` differ from what this session last wrote there on
    ``page`` (:func:`write_address`): a reload, bookmark, shared link or Back asks anew."""
    return any(st.query_params.get(param) != _written().get((page, param)) for param in params)


def restore_choice(page: str, param: str, key: str, options: list[str], *, what: str) -> None:
    """Seed the selector ``key`` (one of ``options``) before it is drawn.

    The address's ``?param=`` wins when it is a new request (not the value this session last
    wrote on ``page``); a value that is not an option is named in a warning. Otherwise the
    session's last choice (kept by the selector's ``persist_state``, dropped when no longer
    an option) or its default shows.
    """
    if key in st.session_state and st.session_state[key] not in options:
        del st.session_state[key]
    wanted = st.query_params.get(param)
    if wanted is not None and new_request(page, param):
        if wanted in options:
            st.session_state[key] = wanted
        else:
            st.warning(escape_markdown(
                f"The address asks for {what} {wanted!r}, which this study does not have; "
                f"showing {st.session_state.get(key) or options[0]!r} instead."))


def set_param(name: str, value: str) -> None:
    """Keep ``?name=value`` in the page address (removed when ``value`` is empty)."""
    if not value:
        if name in st.query_params:
            del st.query_params[name]
    elif st.query_params.get(name) != value:
        st.query_params[name] = value


def write_address(page: str, values: dict[str, str | None]) -> None:
    """Put ``values`` in the address (None removes the parameter), in one update."""
    written = _written()
    changed = {name: value for name, value in values.items()
               if value is not None and st.query_params.get(name) != value}
    removed = [name for name, value in values.items()
               if value is None and name in st.query_params]
    for name in removed:
        del st.query_params[name]
    if changed:
        st.query_params.update(changed)
    for name, value in values.items():
        written[(page, name)] = value


def restore_choices(page: str, param: str, key: str, options: list[str], default: list[str],
                    *, what: str, absent: str = "which this study does not have") -> None:
    """Seed the multiselect ``key`` before it is drawn, as :func:`restore_choice` does; the
    address holds the choices comma-separated (``?runs=a,b``), unknown ones are named with
    ``absent`` saying why they are not among ``options``."""
    wanted = st.query_params.get(param)
    if wanted is not None and new_request(page, param):
        names = [name for name in wanted.split(",") if name]
        unknown = [name for name in names if name not in options]
        if unknown:
            st.warning(escape_markdown(
                f"The address asks for {what} {', '.join(map(repr, unknown))}, {absent}; "
                "they are left out."))
        st.session_state[key] = [name for name in names if name in options]
    elif key not in st.session_state:
        st.session_state[key] = list(default)
    else:
        st.session_state[key] = [n for n in st.session_state[key] if n in options]
