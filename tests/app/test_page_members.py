"""Members page (AppTest): leads manage members and roles, others read, local mode explains."""

import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))

from access_fixtures import ANNOTATOR, LEAD, OUTSIDER, REVIEWER, team_store  # noqa: E402
from app_harness import ENTRY  # noqa: E402

from evalcore.store.connection import open_store  # noqa: E402
from evalcore.store.members import list_members  # noqa: E402
from evalcore.store.study_handle import open_study  # noqa: E402

PAGE = "views/members.py"
AUTH = {
    "redirect_uri": "http://localhost:8501/oauth2callback",
    "cookie_secret": "test-cookie-secret-test-cookie-secret",
    "client_id": "relevance-ledger",
    "client_secret": "secret",
    "server_metadata_url": "http://127.0.0.1:9/.well-known/openid-configuration",
}


@pytest.fixture
def signed_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, store_target):
    db, _ = team_store(store_target)
    monkeypatch.setenv("RELEVANCE_LEDGER_DB", str(store_target))
    from streamlit.testing.v1 import AppTest

    def make(email: str):
        at = AppTest.from_file(ENTRY, default_timeout=60)
        at.secrets["auth"] = AUTH
        at.user = {"is_logged_in": True, "email": email}
        at.run()
        at.switch_page(PAGE).run()
        assert not at.exception, at.exception
        return at

    return store_target, make


def _roles(path: Path) -> dict[str, str]:
    return {m.user_id: m.role for m in list_members(open_study(open_store(path), "s", LEAD))}


def test_a_lead_adds_changes_and_removes_members(signed_in) -> None:
    path, make = signed_in
    at = make(LEAD)
    assert at.title[0].value == "Members"
    table = at.dataframe[0].value
    assert list(table["user"]) == [LEAD, REVIEWER, ANNOTATOR]
    at.text_input(key="rl_members_user").set_value("New@Acme.org")
    at.selectbox(key="rl_members_role").set_value("reviewer")
    at.button[0].click().run()  # the form's submit button
    assert not at.exception
    assert _roles(path)["new@acme.org"] == "reviewer"
    assert any("is now reviewer" in s.value for s in at.success)
    at.selectbox(key="rl_members_change_who").set_value(ANNOTATOR)
    at.selectbox(key="rl_members_change_role").set_value("lead")
    at.button(key="rl_members_change").click().run()
    assert _roles(path)[ANNOTATOR] == "lead"
    at.selectbox(key="rl_members_remove_who").set_value("new@acme.org")
    at.button(key="rl_members_remove").click().run()
    assert "new@acme.org" not in _roles(path)
    assert not at.exception


def test_the_last_lead_cannot_be_demoted_and_nothing_changes(signed_in) -> None:
    path, make = signed_in
    at = make(LEAD)
    before = _roles(path)
    at.selectbox(key="rl_members_change_who").set_value(LEAD)
    at.selectbox(key="rl_members_change_role").set_value("annotator")
    at.button(key="rl_members_change").click().run()
    assert any("last lead" in e.value for e in at.error)
    assert _roles(path) == before


@pytest.mark.parametrize("who", [ANNOTATOR, REVIEWER])
def test_others_read_the_list_without_controls(signed_in, who: str) -> None:
    path, make = signed_in
    at = make(who)
    assert list(at.dataframe[0].value["role"]) == ["lead", "reviewer", "annotator"]
    assert not [b for b in at.button if str(b.key or "").startswith("rl_members")]
    assert not at.text_input  # no add form
    assert any("Only a lead can change members" in c.value for c in at.caption)


def test_a_non_member_sees_only_the_studies_they_belong_to(signed_in) -> None:
    _, make = signed_in
    at = make(OUTSIDER)  # otto leads study g of globex; study s of acme is not his
    assert list(at.sidebar.selectbox(key="rl_study_select").options) == ["g"]
    assert list(at.dataframe[0].value["user"]) == [OUTSIDER]
    shown = " ".join(str(e.value) for e in [*at.markdown, *at.info, *at.caption, *at.success])
    assert LEAD not in shown and ANNOTATOR not in shown


def test_local_mode_explains_how_to_turn_team_mode_on(small_store, new_app) -> None:
    at = new_app("alice", PAGE)
    assert any("local single-user mode" in i.value for i in at.info)
    assert any("--role lead" in c.value for c in at.code)
    assert not at.dataframe


def _org_roles(path: Path) -> dict[str, str]:
    from evalcore.store.members import list_organisation_members

    return {m.user_id: m.role for m in list_organisation_members(open_store(path), "acme",
                                                                 viewer=LEAD)}


def test_the_owner_admits_people_and_grants_roles_in_the_organisation(signed_in) -> None:
    path, make = signed_in
    at = make(LEAD)  # acme's owner (its first member)
    assert list(at.dataframe[1].value["user"]) == [LEAD, ANNOTATOR, REVIEWER]
    assert list(at.dataframe[1].value["role"]) == ["owner", "member", "member"]
    at.text_input(key="rl_org_user").set_value("Ida@Acme.org")
    at.selectbox(key="rl_org_role").set_value("admin")
    at.button(key="FormSubmitter:rl_org_add_form-Add to organisation").click().run()
    assert not at.exception
    assert _org_roles(path)["ida@acme.org"] == "admin"
    at.selectbox(key="rl_org_remove_who").set_value("ida@acme.org")
    at.button(key="rl_org_remove").click().run()
    assert "ida@acme.org" not in _org_roles(path)
    at.selectbox(key="rl_org_remove_who").set_value(LEAD)
    at.button(key="rl_org_remove").click().run()
    assert any("last owner" in e.value for e in at.error)
    assert _org_roles(path)[LEAD] == "owner"


def test_a_member_reads_the_organisation_without_controls(signed_in) -> None:
    _, make = signed_in
    at = make(ANNOTATOR)
    assert list(at.dataframe[1].value["role"]) == ["owner", "member", "member"]
    assert not [b for b in at.button if str(b.key or "").startswith("rl_org")]
    assert any("Only an admin of acme admits people" in c.value for c in at.caption)


def test_attack_a_lead_of_her_own_study_cannot_admit_an_outsider(signed_in) -> None:
    """Issue 28: an annotator creates a study of her own (its lead) and adds eve to it,
    which would add eve to acme: refused on the page, nothing written."""
    from store_fixtures import table_snapshot

    from evalcore.store.members import create_team_study
    from evalcore.store.studies import StudyIn

    path, make = signed_in
    db = open_store(path)
    create_team_study(db, StudyIn(study_id="mine", corpus_id="c", org_id="acme"), lead=ANNOTATOR)
    before = table_snapshot(db)
    at = make(ANNOTATOR)
    at.sidebar.selectbox(key="rl_study_select").set_value("mine").run()
    at.text_input(key="rl_members_user").set_value("eve@evil.com")
    at.selectbox(key="rl_members_role").set_value("annotator")
    at.button[0].click().run()
    assert not at.exception
    assert any("is not a member of its organisation" in e.value for e in at.error)
    assert table_snapshot(open_store(path)) == before
