"""Access follow-ups: search scoped to the viewer, report generation, creating studies and
organisations, joining an organisation. Every refusal changes nothing."""

from pathlib import Path

import pytest
from access_fixtures import ANNOTATOR, LEAD, OUTSIDER, team_store
from click.testing import CliRunner
from lexical_builders import BEFORE, docs
from store_fixtures import new_store, table_snapshot

from evalcore.access import PermissionDenied
from evalcore.cli import main
from evalcore.report.from_store import report_from_store
from evalcore.retrieval.search import search_corpus, search_corpus_unscoped
from evalcore.store.connection import open_store
from evalcore.store.corpus import DocumentIn, add_documents
from evalcore.store.members import add_member, add_to_organisation, create_team_study
from evalcore.store.studies import StudyIn, create_organisation
from evalcore.store.study_handle import open_study
from evalcore.store.study_setup import create_study


def _ids(hits) -> list[str]:
    return [h.doc_id for h in hits]


# --- 1. search -------------------------------------------------------------------------------


def test_search_filters_to_the_viewers_documents_before_the_limit(tmp_path: Path, store_target) -> None:
    db, _ = team_store(store_target)
    # many globex documents that outrank every acme document for "solar"
    add_documents(db, "c", [DocumentIn(doc_id=f"g{i:02d}", title="Solar solar solar",
                                       text="solar solar solar solar", owner_org="globex", created_at=BEFORE)
                            for i in range(30)], actor=OUTSIDER)
    unscoped = search_corpus_unscoped(db, "c", "solar", limit=5)
    assert all(h.owner_org == "globex" for h in unscoped)  # what filtering afterwards would see
    mine = search_corpus(db, "c", "solar", limit=2, viewer=ANNOTATOR)
    assert sorted(_ids(mine)) == ["a1", "a3"]
    assert {h.owner_org for h in search_corpus(db, "c", "solar", limit=50, viewer=ANNOTATOR)} == {
        "acme"}
    theirs = search_corpus(db, "c", "solar", limit=50, viewer=OUTSIDER)
    assert {h.owner_org for h in theirs} == {"globex"} and len(theirs) == 32
    assert search_corpus(db, "c", "solar", limit=50, viewer="") == []  # nobody signed in


def test_search_unowned_documents_are_for_members_of_a_study_over_the_corpus(
    tmp_path: Path, store_target,
) -> None:
    db, _ = team_store(store_target)
    add_documents(db, "c", [DocumentIn(doc_id="shared", title="Solar atlas", text="solar map", owner_org=None,
                                        created_at=BEFORE)],
                  actor=LEAD)
    assert "shared" in _ids(search_corpus(db, "c", "atlas", viewer=ANNOTATOR))
    assert "shared" in _ids(search_corpus(db, "c", "atlas", viewer=OUTSIDER))  # member of g
    assert search_corpus(db, "c", "atlas", viewer="stranger@nowhere.org") == []


def test_search_in_a_local_corpus_shows_everything_to_anyone(tmp_path: Path, store_target) -> None:
    db = new_store(store_target)
    add_documents(db, "c", docs())
    assert _ids(search_corpus(db, "c", "solar", viewer="")) == _ids(
        search_corpus_unscoped(db, "c", "solar")
    )
    assert _ids(search_corpus(db, "c", "solar", viewer=None)) == _ids(
        search_corpus_unscoped(db, "c", "solar")
    )
    assert {"a1", "b1"} <= set(_ids(search_corpus(db, "c", "solar", viewer="anyone")))


# --- 2. reports ------------------------------------------------------------------------------


def test_report_generation_needs_sight_of_the_study(tmp_path: Path, store_target) -> None:
    db, _ = team_store(store_target)
    before = table_snapshot(db)
    with pytest.raises(
        PermissionDenied,
        match="otto@globex.org may not read the study in study 's': they are not a member",
    ):
        report_from_store(open_study(db, "s", OUTSIDER), runs=["r1"], created_by=OUTSIDER)
    with pytest.raises(PermissionDenied, match="sign in"):
        report_from_store(open_study(db, "s", ""), runs=["r1"], created_by="")
    assert table_snapshot(db) == before
    # a member may build it (storing it needs the lead role: save_report)
    report = report_from_store(open_study(db, "s", ANNOTATOR), runs=["r1"], created_by=ANNOTATOR)
    assert report.study_id == "s"


def test_cli_report_of_another_organisations_study_is_refused(tmp_path: Path, store_target) -> None:
    db, _ = team_store(store_target)
    before = table_snapshot(db)
    db.conn.close()
    out = tmp_path / "r.json"
    result = CliRunner().invoke(main, ["report", "--db", str(store_target), "--study",
                                       "s", "--runs", "r1", "--out", str(out), "--by", OUTSIDER])
    assert result.exit_code == 1 and "not a member of study 's'" in result.stderr
    assert not out.exists()
    assert table_snapshot(open_store(store_target)) == before


# --- 3. creating studies and organisations --------------------------------------------------


def test_creating_a_study_in_a_team_organisation_needs_its_membership(tmp_path: Path, store_target) -> None:
    db, _ = team_store(store_target)
    before = table_snapshot(db)
    new = StudyIn(study_id="s2", corpus_id="c", org_id="acme")
    with pytest.raises(PermissionDenied, match="only its members may"):
        create_study(db, new, actor=OUTSIDER)
    with pytest.raises(PermissionDenied, match="nobody is named to create study 's2'"):
        create_study(db, new)
    with pytest.raises(PermissionDenied, match="only its members may"):
        create_team_study(db, new, lead=OUTSIDER)
    assert table_snapshot(db) == before
    create_study(db, new, actor=ANNOTATOR)  # a member of acme may
    create_team_study(db, StudyIn(study_id="s3", corpus_id="c", org_id="acme"), lead=LEAD)


def test_local_mode_organisations_and_studies_stay_open(tmp_path: Path, store_target) -> None:
    db = new_store(store_target, org_id="acme")
    create_study(db, StudyIn(study_id="s2", corpus_id="c", org_id="acme"))  # no actor needed
    create_organisation(db, "initech", "Initech")
    create_study(db, StudyIn(study_id="i1", corpus_id="d", org_id="initech"), actor="anyone")
    create_organisation(db, "initech", "Renamed")  # idempotent: never renames
    assert db.execute("SELECT name FROM organisations WHERE org_id = 'initech'").fetchone() == (
        "Initech",)


def test_a_local_study_of_a_team_organisation_cannot_be_claimed_by_an_outsider(
    tmp_path: Path, store_target,
) -> None:
    db = new_store(store_target, org_id="acme")
    create_study(db, StudyIn(study_id="old", corpus_id="c", org_id="acme"))  # still local
    add_member(db, study_id="s", user=LEAD, role="lead", actor=LEAD)  # acme goes team mode
    before = table_snapshot(db)
    with pytest.raises(PermissionDenied, match="turn team mode on in study 'old'"):
        add_member(db, study_id="old", user=OUTSIDER, role="lead", actor=OUTSIDER)
    assert table_snapshot(db) == before
    add_member(db, study_id="old", user=LEAD, role="lead", actor=LEAD)  # a member of acme may


def test_cli_study_create_in_a_team_organisation(tmp_path: Path, store_target) -> None:
    db, _ = team_store(store_target)
    before = table_snapshot(db)
    db.conn.close()
    store = str(store_target)
    base = ["study", "create", "--db", store, "--study", "s2", "--corpus", "c", "--org", "acme"]
    refused = CliRunner().invoke(main, [*base, "--actor", OUTSIDER])
    assert refused.exit_code != 0 and "only its members may" in refused.output
    assert table_snapshot(open_store(store_target)) == before
    made = CliRunner().invoke(main, [*base, "--actor", ANNOTATOR])
    assert made.exit_code == 0, made.output


# --- 4. joining an organisation --------------------------------------------------------------


def test_joining_an_organisation_is_open_only_in_local_mode(tmp_path: Path, store_target) -> None:
    db = new_store(store_target, org_id="acme")
    create_organisation(db, "acme")
    # unclaimed: the first person added becomes its owner, whoever grants it
    assert add_to_organisation(db, user="x@acme.org", org_id="acme", actor="anyone")
    before = table_snapshot(db)
    with pytest.raises(PermissionDenied, match="lena@acme.org may not add lena@acme.org to "
                                               "study 's'"):
        add_member(db, study_id="s", user=LEAD, role="lead", actor=LEAD)  # not in acme
    with pytest.raises(PermissionDenied, match="granted by its admins"):
        add_to_organisation(db, user=OUTSIDER, org_id="acme", actor="")  # self-service
    assert table_snapshot(db) == before
    add_member(db, study_id="s", user=LEAD, role="lead", actor="x@acme.org")  # acme's owner
    with pytest.raises(PermissionDenied, match="granted by its admins"):
        add_to_organisation(db, user=OUTSIDER, org_id="acme", actor=LEAD)  # a study lead
    assert add_to_organisation(db, user=OUTSIDER, org_id="acme", actor="x@acme.org")
