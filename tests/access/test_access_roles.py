"""Roles at the service layer: every write obeys them, and a refusal changes nothing."""

from collections.abc import Callable
from pathlib import Path

import pytest
from access_fixtures import ANNOTATOR, LEAD, OUTSIDER, REVIEWER, USERS, team_store
from store_fixtures import new_store, table_snapshot

from evalcore.access import Permission, PermissionDenied
from evalcore.access.roles import REQUIRED_ROLE, ROLES, role_allows
from evalcore.io.text_lines import SourceText
from evalcore.report.stored import save_report
from evalcore.retrieval.pin import pin_protocol
from evalcore.retrieval.workflow import execute_protocol
from evalcore.store.authorize import authorize
from evalcore.store.completeness import mark_complete, reopen
from evalcore.store.imports import import_labels, import_qrels, import_run
from evalcore.store.imports.common import mark_queries_complete
from evalcore.store.labels import adjudicate, record_label, undo_last_label
from evalcore.store.members import add_member, add_to_organisation, list_members, remove_member
from evalcore.store.membership import study_mode
from evalcore.store.references import freeze_reference
from evalcore.store.runs import add_run
from evalcore.store.studies import QueryIn
from evalcore.store.study_handle import open_study
from evalcore.store.study_setup import add_queries
from evalcore.store.transaction import write_transaction


def _text(name: str, body: str) -> SourceText:
    return SourceText(name=name, text=body)


def _complete_cli(db, who: str) -> None:
    with write_transaction(db):
        mark_queries_complete(db, study_id="s", query_ids=["q3"], actor=who, reason="pooled")


#: action -> (permission it needs, how to do it as ``who``)
ACTIONS: dict[str, tuple[Permission, Callable]] = {
    "record_label": (Permission.LABEL, lambda db, r, who: record_label(
        db, study_id="s", query_id="q2", unit_id="a2", gain=2, annotator=who)),
    "undo_last_label": (Permission.LABEL, lambda db, r, who: undo_last_label(
        db, study_id="s", query_id="q1", annotator=who)),
    "mark_complete": (Permission.MARK_COMPLETE, lambda db, r, who: mark_complete(
        db, study_id="s", query_id="q2", actor=who)),
    "complete (CLI path)": (Permission.MARK_COMPLETE, lambda db, r, who: _complete_cli(db, who)),
    "reopen": (Permission.REOPEN, lambda db, r, who: reopen(
        db, study_id="s", query_id="q1", actor=who, reason="found another relevant one")),
    "adjudicate": (Permission.ADJUDICATE, lambda db, r, who: adjudicate(
        db, study_id="s", query_id="q1", unit_id="b1", gain=0, reviewer=who)),
    "freeze_reference": (Permission.FREEZE_REFERENCE, lambda db, r, who: freeze_reference(
        db, study_id="s", name="v9", actor=who)),
    "import_qrels": (Permission.IMPORT, lambda db, r, who: import_qrels(
        db, _text("q.txt", "q2 0 a3 1\n"), study_id="s", actor=who)),
    "import_labels": (Permission.IMPORT, lambda db, r, who: import_labels(
        db, _text("l.csv", "query_id,unit_id,gain\nq2,a4,1\n"), study_id="s", actor=who)),
    "import_run": (Permission.IMPORT, lambda db, r, who: import_run(
        db, _text("run.txt", "q1 Q0 a1 1 2.0 t\n"), study_id="s", k=1, name="imp", actor=who)),
    "add_run": (Permission.CREATE_RUN, lambda db, r, who: add_run(
        db, study_id="s", name="new", source="imported", k=1, results=[("q1", 1, "a1", 1.0)],
        actor=who)),
    "execute_protocol": (Permission.CREATE_RUN, lambda db, r, who: execute_protocol(
        db, study_id="s", protocol_name="p1", run_name="lex", actor=who)),
    "pin_protocol": (Permission.PIN_PROTOCOL, lambda db, r, who: pin_protocol(
        db, study_id="s", name="p2", protocol=_protocol(), actor=who)),
    "save_report": (Permission.CREATE_REPORT, lambda db, r, who: save_report(
        db, r.model_copy(update={"created_by": who, "name": "report-x"}))),
    "add_queries": (Permission.IMPORT, lambda db, r, who: add_queries(
        db, "s", [QueryIn(query_id="q9", text="new query")], actor=who)),
    "add_member": (Permission.MANAGE_MEMBERS, lambda db, r, who: add_member(
        db, study_id="s", user="new@acme.org", role="annotator", actor=who)),
    "remove_member": (Permission.MANAGE_MEMBERS, lambda db, r, who: remove_member(
        db, study_id="s", user=ANNOTATOR, actor=who)),
}


def _protocol():
    from lexical_builders import protocol

    return protocol()


@pytest.mark.parametrize("role", [*ROLES, None], ids=lambda r: r or "non-member")
@pytest.mark.parametrize("action", list(ACTIONS))
def test_every_action_obeys_the_roles(tmp_path: Path, action: str, role: str | None, store_target) -> None:
    db, report = team_store(store_target)
    permission, do = ACTIONS[action]
    who = USERS[role]
    before = table_snapshot(db)
    if role is not None and role_allows(role, permission):  # type: ignore[arg-type]
        do(db, report, who)
        assert table_snapshot(db) != before or action in ("undo_last_label",)
        return
    with pytest.raises(PermissionDenied) as info:
        do(db, report, who)
    message = str(info.value)
    assert who in message and "'s'" in message
    assert f"needs the {REQUIRED_ROLE[permission]} role" in message
    assert "evalcore members add" in message and LEAD in message
    assert info.value.permission is permission
    assert table_snapshot(db) == before, "a refused action must change nothing"


def test_the_message_names_who_what_where_and_who_can_grant(tmp_path: Path, store_target) -> None:
    db, _ = team_store(store_target)
    with pytest.raises(PermissionDenied) as info:
        freeze_reference(db, study_id="s", name="v1", actor=ANNOTATOR)
    assert str(info.value) == (
        "ann@acme.org may not freeze a reference version in study 's': they are an annotator, "
        "and it needs the lead role; a lead of 's' (lena@acme.org) can grant it: evalcore members "
        "add --db STORE --study s --user ann@acme.org --role lead"
    )


def test_roles_are_cumulative() -> None:
    for permission in Permission:
        allowed = [r for r in ROLES if role_allows(r, permission)]
        assert allowed == list(ROLES[ROLES.index(REQUIRED_ROLE[permission]):])


def test_local_mode_allows_everything_and_attributes_to_the_caller(tmp_path: Path, store_target) -> None:
    db = new_store(store_target)
    assert study_mode(db, "s") == "local"
    assert authorize(db, study_id="s", actor="anyone", permission=Permission.MANAGE_MEMBERS) is None
    event = record_label(db, study_id="s", query_id="q", unit_id="d", gain=1, annotator="me")
    assert event.annotator == "me"
    freeze_reference(db, study_id="s", name="v1", actor="me")


def test_team_mode_starts_with_a_lead_and_keeps_one(tmp_path: Path, store_target) -> None:
    db = new_store(store_target)
    before = table_snapshot(db)
    with pytest.raises(ValueError, match="first member must be a lead"):
        add_member(db, study_id="s", user="a@x.org", role="annotator", actor="a@x.org")
    assert table_snapshot(db) == before
    add_member(db, study_id="s", user="Boss@X.org", role="lead", actor="boss@x.org")
    assert study_mode(db, "s") == "team"
    assert [m.user_id for m in list_members(open_study(db, "s", "boss@x.org"))] == ["boss@x.org"]
    with pytest.raises(ValueError, match="last lead"):
        add_member(db, study_id="s", user="boss@x.org", role="reviewer", actor="boss@x.org")
    with pytest.raises(ValueError, match="last lead"):
        remove_member(db, study_id="s", user="boss@x.org", actor="boss@x.org")
    with pytest.raises(PermissionDenied, match="not a member"):
        record_label(db, study_id="s", query_id="q", unit_id="d", gain=1, annotator="me")


def test_unnamed_actor_is_refused_in_team_mode(tmp_path: Path, store_target) -> None:
    db, _ = team_store(store_target)
    before = table_snapshot(db)
    with pytest.raises(PermissionDenied, match="sign in, or pass the acting user"):
        add_run(db, study_id="s", name="x", source="imported", k=1, results=[])
    assert table_snapshot(db) == before


def test_a_member_outside_the_study_organisation_is_refused(tmp_path: Path, store_target) -> None:
    db, _ = team_store(store_target)
    db.execute("DELETE FROM user_organisations WHERE user_id = ?", [REVIEWER])
    before = table_snapshot(db)
    with pytest.raises(PermissionDenied, match="belongs to organisation 'acme'"):
        adjudicate(db, study_id="s", query_id="q1", unit_id="a1", gain=1, reviewer=REVIEWER)
    assert table_snapshot(db) == before


def test_identities_compare_emails_without_case(tmp_path: Path, store_target) -> None:
    db, _ = team_store(store_target)
    assert authorize(db, study_id="s", actor=" Rita@ACME.org ",
                     permission=Permission.REOPEN) == "reviewer"


def test_organisation_membership_is_granted_by_an_admin_of_that_organisation(
    tmp_path: Path, store_target,
) -> None:
    db, _ = team_store(store_target)
    before = table_snapshot(db)
    with pytest.raises(PermissionDenied, match="membership of an organisation is granted by "
                                               "its admins"):
        add_to_organisation(db, user=OUTSIDER, org_id="acme", actor=ANNOTATOR)
    assert table_snapshot(db) == before
    assert add_to_organisation(db, user=OUTSIDER, org_id="acme", actor=LEAD)  # acme's owner
    assert not add_to_organisation(db, user=OUTSIDER, org_id="acme", actor=LEAD)


def test_a_lead_may_not_pin_a_protocol_over_another_organisations_documents(
    tmp_path: Path, store_target,
) -> None:
    from lexical_builders import protocol

    db, _ = team_store(store_target)
    before = table_snapshot(db)
    with pytest.raises(PermissionDenied, match="sees organisation\\(s\\) globex"):
        pin_protocol(db, study_id="s", name="both", protocol=protocol(organisations=["acme", "globex"]),
                     actor=LEAD)
    assert table_snapshot(db) == before
    pin_protocol(db, study_id="s", name="own", protocol=protocol(organisations=["acme"]), actor=LEAD)


def test_documents_of_a_team_corpus_are_written_by_the_admins_of_their_organisations(
    tmp_path: Path, store_target,
) -> None:
    from datetime import UTC, datetime

    from evalcore.store.corpus import DocumentIn, add_documents

    db, _ = team_store(store_target)

    def doc(owner: str) -> list[DocumentIn]:
        return [DocumentIn(doc_id=f"new-{owner}", text="x", owner_org=owner,
                           created_at=datetime(2026, 1, 1, tzinfo=UTC))]

    before = table_snapshot(db)
    with pytest.raises(PermissionDenied, match="that needs the admin role") as info:
        add_documents(db, "c", doc("acme"), actor=ANNOTATOR)
    assert "--org acme --role admin" in str(info.value) and LEAD in str(info.value)
    with pytest.raises(PermissionDenied, match="in organisation 'globex': they are not a member"):
        add_documents(db, "c", doc("globex"), actor=LEAD)
    with pytest.raises(PermissionDenied, match="sign in, or pass the acting user"):
        add_documents(db, "c", doc("acme"))
    assert table_snapshot(db) == before
    assert add_documents(db, "c", doc("acme"), actor=LEAD) == 1
    assert add_documents(db, "c", doc("globex"), actor=OUTSIDER) == 1  # globex's owner


def test_a_study_created_in_team_mode_starts_with_its_lead(tmp_path: Path, store_target) -> None:
    from evalcore.store.members import create_team_study
    from evalcore.store.studies import StudyIn

    db = new_store(store_target)
    create_team_study(db, StudyIn(study_id="t", corpus_id="c", org_id="acme"), lead=LEAD)
    assert study_mode(db, "t") == "team"
    assert [(m.user_id, m.role) for m in list_members(open_study(db, "t", LEAD))] == [(LEAD, "lead")]
    before = table_snapshot(db)
    with pytest.raises(ValueError, match="already exists"):
        create_team_study(db, StudyIn(study_id="t", corpus_id="c"), lead=ANNOTATOR)
    assert table_snapshot(db) == before


def test_an_upsert_cannot_take_over_another_organisations_document(tmp_path: Path, store_target) -> None:
    from datetime import UTC, datetime

    from evalcore.store.corpus import DocumentIn, add_documents, get_document

    db, _ = team_store(store_target)
    before = table_snapshot(db)
    takeover = [DocumentIn(doc_id="b1", text="mine now", owner_org="acme",
                           created_at=datetime(2026, 1, 1, tzinfo=UTC))]
    with pytest.raises(PermissionDenied, match="may not write documents of corpus 'c' in "
                                               "organisation 'globex'"):
        add_documents(db, "c", takeover, actor=LEAD)
    assert table_snapshot(db) == before and get_document(db, "c", "b1").owner_org == "globex"


def test_a_team_mode_check_is_one_statement(store_target) -> None:
    """A write checks the actor inside its transaction: the study's mode, the actor's role
    and organisation and the study's leads are read in one statement (each statement is a
    round trip to a PostgreSQL server while the write lock is held), with the same answers."""
    from evalcore.store.studies import get_study

    db, _ = team_store(store_target)
    study = get_study(db, "s")
    seen: list[str] = []
    db.conn.set_trace_callback(seen.append)
    try:
        assert authorize(db, study_id="s", actor=ANNOTATOR, permission=Permission.LABEL,
                         study=study) == "annotator"
        assert len(seen) == 1, seen
        with pytest.raises(PermissionDenied, match="lena@acme.org"):  # the lead can grant it
            authorize(db, study_id="s", actor=ANNOTATOR, permission=Permission.ADJUDICATE,
                      study=study)
        with pytest.raises(PermissionDenied):  # a member of another organisation only
            authorize(db, study_id="s", actor=OUTSIDER, permission=Permission.READ, study=study)
        assert len(seen) == 3, seen
    finally:
        db.conn.set_trace_callback(None)
