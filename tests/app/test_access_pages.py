"""Sign-in and organisation scoping in the app (AppTest).

A user of organisation acme never sees a word of a globex document (or a study
they are not a member of) on any page; without sign-in configured the app says
it is in local single-user mode; with ``[auth]`` configured nothing of the
store is shown before sign-in.
"""

import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))

from access_fixtures import ANNOTATOR, OUTSIDER, team_store  # noqa: E402
from app_harness import ENTRY, grade_button  # noqa: E402

from evalcore.store.labels import label_history  # noqa: E402
from evalcore.store.study_handle import open_study  # noqa: E402

SECRET_B = "solar panels subsidies for households"  # globex document b1 (in s's pool)
SECRET_A = "installing solar panels on a roof"  # acme document a1
#: Words only globex's b1 holds (title "Solar subsidies").
SECRET_B_WORDS = ("subsidies", "households")
AUTH = {
    "redirect_uri": "http://localhost:8501/oauth2callback",
    "cookie_secret": "test-cookie-secret-test-cookie-secret",
    "client_id": "relevance-ledger",
    "client_secret": "secret",
    "server_metadata_url": "http://127.0.0.1:9/.well-known/openid-configuration",
}
PAGES = ["views/home.py", "views/annotate.py", "views/data.py", "views/inspector.py",
         "views/dashboard.py", "views/compare.py", "views/agreement.py", "views/reports.py",
         "views/members.py"]


def rendered(at) -> str:
    """Everything the run sent to the browser, as text (every element's protobuf)."""
    out: list[str] = []

    def walk(node) -> None:
        proto = getattr(node, "proto", None)
        if proto is not None:
            out.append(str(proto))
        for child in getattr(node, "children", {}).values():
            walk(child)

    walk(at._tree)
    return "\n".join(out)


@pytest.fixture
def team_app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, store_target):
    db, _ = team_store(store_target)
    monkeypatch.setenv("RELEVANCE_LEDGER_DB", str(store_target))
    from streamlit.testing.v1 import AppTest

    def make(user: dict | None, page: str | None = None):
        at = AppTest.from_file(ENTRY, default_timeout=60)
        at.secrets["auth"] = AUTH
        if user is not None:
            at.user = user
        at.run()
        if page is not None:
            at.switch_page(page).run()
        assert not at.exception, at.exception
        return at

    return db, make


def test_local_mode_is_shown_and_the_name_is_editable(small_store, new_app) -> None:
    at = new_app()
    assert any("Local single-user mode (no sign-in)" in i.value for i in at.sidebar.info)
    assert at.text_input(key="rl_annotator_input")


def test_team_mode_shows_nothing_before_sign_in(team_app) -> None:
    _, make = team_app
    at = make({"is_logged_in": False})
    assert at.button(key="rl_sign_in").label == "Sign in"
    text = rendered(at)
    assert "Small study" not in text and SECRET_A not in text and "q1" not in text
    assert not at.sidebar.selectbox


def test_signed_in_identity_is_fixed_and_labels_carry_it(team_app) -> None:
    db, make = team_app
    at = make({"is_logged_in": True, "email": "Ann@Acme.org", "sub": "ann-1"},
              "views/annotate.py")
    from app.components.safe_text import escape_markdown

    signed = "Signed in as **" + escape_markdown("ann@acme.org") + "**"
    assert signed in [m.value for m in at.sidebar.markdown]
    assert not [t for t in at.sidebar.text_input if t.key == "rl_annotator_input"]
    assert [o for o in at.sidebar.selectbox(key="rl_study_select").options] == ["s"]
    grade_button(at, 0).click().run()
    assert not at.exception
    events = [e for e in label_history(open_study(db, "s", ANNOTATOR), "q1") if e.annotator != "setup"]
    assert len(events) == 1 and events[0].annotator == ANNOTATOR


@pytest.mark.parametrize("page", PAGES)
def test_another_organisations_document_is_never_rendered(team_app, page: str) -> None:
    _, make = team_app
    if not (Path(ENTRY).parent / page).is_file():
        pytest.skip(f"{page} does not exist yet")
    at = make({"is_logged_in": True, "email": ANNOTATOR}, page)
    seen = [rendered(at)]
    if page == "views/annotate.py":
        for _ in range(4):  # walk the whole pool of q1 (a1, b1, a2)
            at.button(key="next").click().run()
            seen.append(rendered(at))
        at.text_input(key="rl_search").set_value("solar").run()
        seen.append(rendered(at))
        assert any("a roof" in s for s in seen), "the acme document is shown"
        assert any("text withheld" in s and "globex" in s for s in seen), "withheld, saying why"
    assert not at.exception
    for word in SECRET_B_WORDS:
        assert all(word not in s for s in seen), word


@pytest.mark.parametrize("page", PAGES)
def test_a_non_member_sees_no_study_data(team_app, page: str) -> None:
    _, make = team_app
    if not (Path(ENTRY).parent / page).is_file():
        pytest.skip(f"{page} does not exist yet")
    at = make({"is_logged_in": True, "email": OUTSIDER}, page)
    text = rendered(at)
    assert not at.exception
    assert SECRET_A not in text and "solar panels" not in text.lower()
    assert at.sidebar.selectbox(key="rl_study_select").options == ["g"]


def test_the_app_obeys_roles_an_annotator_cannot_reopen(team_app) -> None:
    db, make = team_app
    at = make({"is_logged_in": True, "email": ANNOTATOR}, "views/annotate.py")
    from evalcore.access import PermissionDenied
    from evalcore.store.completeness import completeness_history, reopen

    before = completeness_history(open_study(db, "s", ANNOTATOR), "q1")
    at.text_input(key="reopen_reason_q1").set_value("I disagree").run()
    button = at.button(key="reopen")
    assert button.disabled and "reviewer role" in button.help
    with pytest.raises(PermissionDenied, match="may not reopen a query"):
        reopen(db, study_id="s", query_id="q1", actor=ANNOTATOR, reason="I disagree")
    assert completeness_history(open_study(db, "s", ANNOTATOR), "q1") == before


def test_a_study_created_while_signed_in_is_led_by_its_creator(team_app) -> None:
    db, make = team_app
    at = make({"is_logged_in": True, "email": OUTSIDER}, "views/data.py")
    form_inputs = {t.label: t for t in at.text_input}
    form_inputs["Study id"].set_value("fresh")
    form_inputs["Corpus id"].set_value("c2")
    at.button[[b.label for b in at.button].index("Create study")].click().run()
    assert not at.exception, at.exception
    from evalcore.store.members import list_members

    assert [(m.user_id, m.role) for m in list_members(open_study(db, "fresh", OUTSIDER))] == [(OUTSIDER, "lead")]
    assert "fresh" in at.sidebar.selectbox(key="rl_study_select").options


def test_attack_signed_in_stranger_creates_study_over_team_corpus_on_data_page(team_app) -> None:
    """mallory signs in, creates study m over corpus c on the Data page: refused, nothing made."""
    db, make = team_app
    at = make({"is_logged_in": True, "email": "mallory@evil.example"}, "views/data.py")
    form_inputs = {t.label: t for t in at.text_input}
    form_inputs["Study id"].set_value("m")
    form_inputs["Corpus id"].set_value("c")
    at.button[[b.label for b in at.button].index("Create study")].click().run()
    assert not at.exception, at.exception
    text = rendered(at)
    assert "The study was not created\\\\." in text and "belongs to organisation" in text
    assert db.execute("SELECT 1 FROM studies WHERE study_id = 'm'").fetchone() is None
    assert SECRET_A not in text and "solar" not in text.lower()


def test_attack_local_mode_app_on_team_store_shows_no_team_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, store_target
) -> None:
    """No sign-in configured, pointed at a team store: typing a member's name shows no team text."""
    from access_fixtures import LEAD

    from evalcore.store.runs import add_run
    from evalcore.store.studies import StudyIn
    from evalcore.store.study_setup import create_study

    db, _ = team_store(store_target)
    create_study(db, StudyIn(study_id="old", corpus_id="c", org_id="acme"), actor=LEAD)  # local
    add_run(db, study_id="old", name="r", source="imported", k=2,
            results=[("q1", 1, "a1", 2.0), ("q1", 2, "b1", 1.0)])
    monkeypatch.setenv("RELEVANCE_LEDGER_DB", str(store_target))
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(ENTRY, default_timeout=60)
    at.run()
    at.text_input(key="rl_annotator_input").set_value(LEAD).run()
    at.switch_page("views/annotate.py").run()
    assert not at.exception, at.exception
    assert at.sidebar.selectbox(key="rl_study_select").options == ["old"]
    seen = [rendered(at)]
    for _ in range(2):
        at.button(key="next").click().run()
        seen.append(rendered(at))
    at.text_input(key="rl_search").set_value("solar").run()
    seen.append(rendered(at))
    assert not at.exception
    assert any("text withheld" in s for s in seen)
    for secret in (SECRET_A, *SECRET_B_WORDS, "a roof"):
        assert all(secret not in s for s in seen), secret
