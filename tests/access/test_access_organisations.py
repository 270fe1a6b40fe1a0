"""Organisation roles (issue 28, item 3): an attack test per rule of docs/access-model.md.

The attack that every documented rule used to allow: ann, an annotator of study ``s``
(acme), creates a study of her own over acme's corpus (becoming its lead), then admits
eve@evil.com to acme (``members add-org``, or by adding eve to her study), and replaces
a document that study ``s`` shows. Organisation membership and corpus writes are now
organisation-level roles (member < admin < owner); a study lead manages the study only.
Each refusal says who may and changes nothing.
"""

import json
import sqlite3
from pathlib import Path

import pytest
from access_fixtures import ANNOTATOR, LEAD, OUTSIDER, REVIEWER, team_store
from click.testing import CliRunner
from store_fixtures import store_at_version, table_snapshot

from evalcore.access import OrganisationPermissionDenied, PermissionDenied
from evalcore.cli import main
from evalcore.store.connection import open_store
from evalcore.store.corpus import DocumentIn, add_documents, get_document
from evalcore.store.members import (
    add_member,
    add_to_organisation,
    create_team_study,
    list_organisation_members,
    organisations_of,
    remove_from_organisation,
)
from evalcore.store.membership import organisation_role
from evalcore.store.schema import SCHEMA_VERSION
from evalcore.store.scoping import readable_document
from evalcore.store.studies import StudyIn, create_organisation
from evalcore.store.study_setup import create_study

EVE = "eve@evil.com"
IDA = "ida@acme.org"  # made an admin of acme below
WHEN = "2026-01-01T00:00:00Z"


def _store(new_store_target: Path):
    db, _ = team_store(new_store_target("store.db"))  # lena: acme's owner (its first member); ann, rita: members
    add_to_organisation(db, user=IDA, org_id="acme", actor=LEAD, role="admin")
    return db


def _cli(*args: object):
    return CliRunner().invoke(main, [str(a) for a in args])


def _roles(db) -> dict[str, str]:
    return {m.user_id: m.role for m in list_organisation_members(db, "acme", viewer=IDA)}


# --- the attack of the issue, as typed ---------------------------------------------------------


def test_attack_an_annotator_with_her_own_study_admits_nobody_and_writes_nothing(
        tmp_path: Path, store_target, new_store_target) -> None:
    db = _store(new_store_target)
    db.conn.close()
    store = store_target
    # her own study over acme's corpus: allowed (a member creates studies; she is its lead)
    assert _cli("study", "create", "--db", store, "--study", "mine", "--corpus", "c", "--org",
                "acme", "--actor", ANNOTATOR).exit_code == 0
    assert _cli("members", "add", "--db", store, "--study", "mine", "--user", ANNOTATOR,
                "--role", "lead", "--actor", ANNOTATOR).exit_code == 0
    before = table_snapshot(open_store(store))
    joined = _cli("members", "add-org", "--db", store, "--user", EVE, "--org", "acme",
                  "--actor", ANNOTATOR)
    assert joined.exit_code == 1
    assert "refused: ann@acme.org may not add eve@evil.com in organisation 'acme'" in \
        joined.output and "needs the admin role" in joined.output
    assert f"ask one of them ({IDA}, {LEAD})" in joined.output
    via_study = _cli("members", "add", "--db", store, "--study", "mine", "--user", EVE,
                     "--role", "annotator", "--actor", ANNOTATOR)
    assert via_study.exit_code == 1 and "is not a member of its organisation 'acme'" in \
        via_study.output
    replacement = tmp_path / "a1.jsonl"
    replacement.write_text(json.dumps({"id": "a1", "title": "Solar panels",
                                       "text": "REPLACED by ann"}) + "\n")
    written = _cli("import", "documents", "--db", store, "--study", "mine", replacement,
                   "--actor", ANNOTATOR)
    assert written.exit_code == 1 and "may not write documents of corpus 'c' in " \
        "organisation 'acme'" in written.output, written.output
    db = open_store(store)
    assert table_snapshot(db) == before
    assert get_document(db, "c", "a1").text == "installing solar panels on a roof"
    # and eve, still outside, can neither create a study over acme's corpus nor read it
    with pytest.raises(PermissionDenied):
        create_team_study(db, StudyIn(study_id="eve", corpus_id="c", org_id="acme"), lead=EVE)
    assert not readable_document(db, EVE, "c", "a1").allowed


# --- one attack per rule -----------------------------------------------------------------------


def test_rule_members_are_admitted_and_removed_by_admins_only(tmp_path: Path, new_store_target) -> None:
    db = _store(new_store_target)
    before = table_snapshot(db)
    for actor in (ANNOTATOR, EVE, ""):  # a member, an outsider, nobody
        with pytest.raises(OrganisationPermissionDenied, match="granted by its admins"):
            add_to_organisation(db, user=EVE, org_id="acme", actor=actor)
    with pytest.raises(OrganisationPermissionDenied, match="may not remove rita@acme.org"):
        remove_from_organisation(db, user=REVIEWER, org_id="acme", actor=ANNOTATOR)
    assert table_snapshot(db) == before
    assert add_to_organisation(db, user=EVE, org_id="acme", actor=IDA)  # an admin may
    assert remove_from_organisation(db, user=EVE, org_id="acme", actor=IDA)


def test_rule_the_admin_and_owner_roles_are_granted_by_owners_only(tmp_path: Path, new_store_target) -> None:
    db = _store(new_store_target)
    before = table_snapshot(db)
    with pytest.raises(OrganisationPermissionDenied, match="that needs the owner role"):
        add_to_organisation(db, user=ANNOTATOR, org_id="acme", actor=IDA, role="admin")
    with pytest.raises(OrganisationPermissionDenied, match="roles of an organisation are "
                                                           "granted by its owners"):
        add_to_organisation(db, user=IDA, org_id="acme", actor=IDA, role="owner")  # herself
    with pytest.raises(OrganisationPermissionDenied, match="may not make lena@acme.org member"):
        add_to_organisation(db, user=LEAD, org_id="acme", actor=IDA, role="member")
    with pytest.raises(OrganisationPermissionDenied, match="may not remove lena@acme.org"):
        remove_from_organisation(db, user=LEAD, org_id="acme", actor=IDA)
    assert table_snapshot(db) == before
    assert add_to_organisation(db, user=ANNOTATOR, org_id="acme", actor=LEAD, role="admin")
    assert _roles(db)[ANNOTATOR] == "admin"


def test_rule_an_organisation_keeps_an_owner(tmp_path: Path, new_store_target) -> None:
    db = _store(new_store_target)
    before = table_snapshot(db)
    with pytest.raises(ValueError, match="last owner of organisation 'acme'"):
        remove_from_organisation(db, user=LEAD, org_id="acme", actor=LEAD)
    with pytest.raises(ValueError, match="last owner"):
        add_to_organisation(db, user=LEAD, org_id="acme", actor=LEAD, role="admin")
    assert table_snapshot(db) == before
    add_to_organisation(db, user=IDA, org_id="acme", actor=LEAD, role="owner")
    assert remove_from_organisation(db, user=LEAD, org_id="acme", actor=LEAD)  # leaves
    assert organisation_role(db, IDA, "acme") == "owner" and LEAD not in _roles(db)


def test_rule_anyone_may_leave_and_then_reads_nothing(tmp_path: Path, new_store_target) -> None:
    db = _store(new_store_target)
    assert readable_document(db, ANNOTATOR, "c", "a1").allowed
    assert remove_from_organisation(db, user=ANNOTATOR, org_id="acme", actor=ANNOTATOR)
    assert not readable_document(db, ANNOTATOR, "c", "a1").allowed
    assert not remove_from_organisation(db, user=ANNOTATOR, org_id="acme", actor=LEAD)


def test_rule_a_study_lead_adds_only_people_already_in_the_organisation(tmp_path: Path, new_store_target) -> None:
    db = _store(new_store_target)
    create_team_study(db, StudyIn(study_id="mine", corpus_id="c", org_id="acme"), lead=ANNOTATOR)
    before = table_snapshot(db)
    with pytest.raises(OrganisationPermissionDenied, match=(
            "ann@acme.org may not add eve@evil.com to study 'mine': eve@evil.com is not a "
            "member of its organisation 'acme'")):
        add_member(db, study_id="mine", user=EVE, role="annotator", actor=ANNOTATOR)
    assert table_snapshot(db) == before
    add_member(db, study_id="mine", user=REVIEWER, role="annotator", actor=ANNOTATOR)  # in acme
    add_member(db, study_id="s", user=EVE, role="annotator", actor=LEAD)  # lena: an owner
    assert organisation_role(db, EVE, "acme") == "member"


def test_rule_documents_are_written_by_the_admins_of_their_organisation(tmp_path: Path, new_store_target) -> None:
    db = _store(new_store_target)
    create_team_study(db, StudyIn(study_id="mine", corpus_id="c", org_id="acme"), lead=ANNOTATOR)
    before = table_snapshot(db)
    mine = [DocumentIn(doc_id="a1", text="REPLACED", owner_org="acme", created_at=WHEN)]
    new = [DocumentIn(doc_id="n1", text="new", owner_org="acme", created_at=WHEN)]
    unowned = [DocumentIn(doc_id="u9", text="new", owner_org=None, created_at=WHEN)]
    for docs in (mine, new, unowned):  # a study lead, a member of acme, is not an admin
        with pytest.raises(OrganisationPermissionDenied, match="that needs the admin role"):
            add_documents(db, "c", docs, actor=ANNOTATOR)
    with pytest.raises(OrganisationPermissionDenied, match="organisation 'globex'"):
        add_documents(db, "c", [DocumentIn(doc_id="b1", text="taken", owner_org="acme",
                                           created_at=WHEN)], actor=IDA)  # globex's document
    assert table_snapshot(db) == before
    assert add_documents(db, "c", new, actor=IDA) == 1  # an admin of acme may


def test_rule_a_corpus_is_opened_to_another_organisation_by_an_admin(tmp_path: Path, new_store_target) -> None:
    db = _store(new_store_target)
    create_organisation(db, "initech", actor=ANNOTATOR)  # ann's own organisation: its owner
    before = table_snapshot(db)
    with pytest.raises(OrganisationPermissionDenied, match=(
            "may not create study 'x' over corpus 'c' for organisation 'initech' in "
            "organisation 'acme'")):
        create_study(db, StudyIn(study_id="x", corpus_id="c", org_id="initech"), actor=ANNOTATOR)
    # a document of an organisation that does not share the corpus does not enter it
    with pytest.raises(OrganisationPermissionDenied, match="only once that organisation has a "
                                                           "team-mode study over it"):
        add_documents(db, "c", [DocumentIn(doc_id="i1", text="x", owner_org="initech",
                                           created_at=WHEN)], actor=ANNOTATOR)
    assert table_snapshot(db) == before
    create_study(db, StudyIn(study_id="x", corpus_id="c", org_id="initech"), actor=IDA)
    add_member(db, study_id="x", user=ANNOTATOR, role="lead", actor=ANNOTATOR)
    assert add_documents(db, "c", [DocumentIn(doc_id="i1", text="x", owner_org="initech",
                                              created_at=WHEN)], actor=ANNOTATOR) == 1


def test_rule_an_unclaimed_organisation_is_owned_by_its_first_member(tmp_path: Path, store_target) -> None:
    db = open_store(store_target)
    create_study(db, StudyIn(study_id="n", corpus_id="d", org_id="newco"))  # newco: implicit
    assert add_to_organisation(db, user="first@newco.example", org_id="newco", actor="")
    assert organisation_role(db, "first@newco.example", "newco") == "owner"
    with pytest.raises(OrganisationPermissionDenied):
        add_to_organisation(db, user=EVE, org_id="newco", actor=EVE)


def test_rule_organisation_members_are_listed_to_its_members_only(tmp_path: Path, store_target, new_store_target) -> None:
    db = _store(new_store_target)
    assert list(_roles(db)) == [LEAD, IDA, ANNOTATOR, REVIEWER]  # owners, admins, members
    assert [(m.org_id, m.role) for m in organisations_of(db, OUTSIDER)] == [("globex", "owner")]
    with pytest.raises(OrganisationPermissionDenied, match="only its members may"):
        list_organisation_members(db, "acme", viewer=OUTSIDER)
    store = store_target
    db.conn.close()
    listed = _cli("members", "list-org", "--db", store, "--org", "acme", "--actor", ANNOTATOR)
    assert listed.exit_code == 0 and listed.output.splitlines()[0].startswith(f"owner  {LEAD}")
    refused = _cli("members", "list-org", "--db", store, "--org", "acme", "--actor", OUTSIDER)
    assert refused.exit_code == 1 and LEAD not in refused.output
    mine = _cli("members", "list-org", "--db", store, "--actor", IDA)
    assert mine.output.strip() == "acme\tadmin"
    made = _cli("members", "add-org", "--db", store, "--user", ANNOTATOR, "--org", "acme",
                "--role", "admin", "--actor", LEAD)
    assert made.exit_code == 0 and made.output.strip() == "ann@acme.org is now admin of " \
        "organisation acme"


# --- migration ----------------------------------------------------------------------------------


@pytest.mark.sqlite_only
def test_v16_store_migrates_creators_and_first_members_to_owners(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    store_at_version(
        path, 16,
        "INSERT INTO organisations (org_id, name, created_by) VALUES "
        "('made', 'Made', 'maker@made.example'), ('implicit', 'Implicit', NULL), "
        "('empty', 'Empty', NULL)",
        "INSERT INTO users (user_id, created_at) VALUES ('maker@made.example', '2026'), "
        "('early@made.example', '2026'), ('first@implicit.example', '2026'), "
        "('second@implicit.example', '2026')",
        "INSERT INTO user_organisations (user_id, org_id, granted_by, granted_at) VALUES "
        "('early@made.example', 'made', 'x', '2025-01-01T00:00:00Z'), "
        "('maker@made.example', 'made', 'maker@made.example', '2026-01-01T00:00:00Z'), "
        "('second@implicit.example', 'implicit', 'x', '2026-02-01T00:00:00Z'), "
        "('first@implicit.example', 'implicit', 'x', '2026-01-01T00:00:00Z')",
    )
    db = open_store(path)
    assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    roles = sorted(db.execute("SELECT org_id, user_id, role FROM user_organisations").fetchall())
    assert roles == [
        ("implicit", "first@implicit.example", "owner"),  # no creator: the first member
        ("implicit", "second@implicit.example", "member"),
        ("made", "early@made.example", "member"),
        ("made", "maker@made.example", "owner"),  # the creator, though not the first
    ]
    # 'empty' has no member: unclaimed, its first member will be its owner
    assert add_to_organisation(db, user="new@empty.example", org_id="empty", actor="")
    assert organisation_role(db, "new@empty.example", "empty") == "owner"
    with pytest.raises(sqlite3.IntegrityError):
        db.execute("UPDATE user_organisations SET role = 'lead' WHERE org_id = 'made'")


def test_rule_an_archive_admits_nobody_to_an_organisation_without_its_admin(
        tmp_path: Path, new_store_target) -> None:
    """A study archive lists its organisation's members: importing it into a store where
    that organisation exists admits the ones it lacks only through one of its admins."""
    from evalcore.store.study_archive import export_study, import_study, read_archive

    db = _store(new_store_target)
    export_study(db, "s", tmp_path / "s.zip", actor=LEAD)
    (tmp_path / "other").mkdir()
    target = open_store(tmp_path / "other" / "store.db")
    create_organisation(target, "acme", actor=IDA)  # here ida owns acme; ann is a member
    add_to_organisation(target, user=ANNOTATOR, org_id="acme", actor=IDA)
    before = table_snapshot(target)
    archive = read_archive(tmp_path / "s.zip", tmp_path / "unpacked")
    with pytest.raises(OrganisationPermissionDenied, match=(
            "ann@acme.org may not import a study whose archive adds 2 people to it "
            r"\(lena@acme.org, rita@acme.org\) in organisation 'acme'")):
        import_study(target, archive, actor=ANNOTATOR)
    assert table_snapshot(target) == before
    import_study(target, read_archive(tmp_path / "s.zip", tmp_path / "again"), actor=IDA)
    assert {m.user_id: m.role for m in list_organisation_members(target, "acme", viewer=IDA)
            } == {IDA: "owner", ANNOTATOR: "member", LEAD: "member", REVIEWER: "member"}
