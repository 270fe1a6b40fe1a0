"""Organisation scoping: a user of organisation A reads nothing of organisation B.

Through the library (studies, queries, documents, displayable text), the
exports and every CLI command that shows study data or document text.
"""

import io
from datetime import datetime
from pathlib import Path

import pytest
from access_fixtures import ANNOTATOR, LEAD, OUTSIDER, team_store
from click.testing import CliRunner
from store_fixtures import new_store

from evalcore.access import Permission, PermissionDenied
from evalcore.cli import main
from evalcore.store.authorize import allowed
from evalcore.store.corpus import DocumentIn, add_documents
from evalcore.store.exports import export_labels, export_qrels, export_run
from evalcore.store.scoping import (
    displayable_text,
    readable_document,
    require_study_view,
    visible_studies,
)
from evalcore.store.study_handle import open_study

SECRET_B = "solar panels subsidies for households"  # text of globex document b1
SECRET_A = "installing solar panels on a roof"  # text of acme document a1


def test_studies_and_queries_are_visible_only_inside_the_organisation(tmp_path: Path, store_target) -> None:
    db, _ = team_store(store_target)
    assert [s.study_id for s in visible_studies(db, ANNOTATOR)] == ["s"]
    assert [s.study_id for s in visible_studies(db, OUTSIDER)] == ["g"]
    assert visible_studies(db, None) == []
    assert allowed(db, study_id="s", actor=LEAD, permission=Permission.READ)
    assert not allowed(db, study_id="s", actor=OUTSIDER, permission=Permission.READ)
    require_study_view(db, ANNOTATOR, "s")
    with pytest.raises(PermissionDenied, match="not a member of study 's'"):
        require_study_view(db, OUTSIDER, "s")


def test_documents_are_readable_only_by_their_organisation(tmp_path: Path, store_target) -> None:
    db, _ = team_store(store_target)
    assert readable_document(db, ANNOTATOR, "c", "a1").document.text == SECRET_A
    refused = readable_document(db, ANNOTATOR, "c", "b1")
    assert refused.document is None
    assert "organisation 'globex'" in refused.reason and ANNOTATOR in refused.reason
    assert readable_document(db, OUTSIDER, "c", "b1").document.text == SECRET_B
    assert readable_document(db, OUTSIDER, "c", "a1").document is None
    assert readable_document(db, None, "c", "a1").document is None
    assert "no document" in readable_document(db, LEAD, "c", "zzz").reason


def test_unowned_documents_are_for_members_of_a_study_over_the_corpus(tmp_path: Path, store_target) -> None:
    db, _ = team_store(store_target)
    add_documents(db, "c", [DocumentIn(doc_id="u1", text="shared", owner_org=None,
                                       created_at=datetime.fromisoformat("2026-01-01T00:00:00Z"))],
                  actor=LEAD)
    assert readable_document(db, ANNOTATOR, "c", "u1").allowed
    assert not readable_document(db, "stranger@x.org", "c", "u1").allowed


def test_local_mode_reads_everything(tmp_path: Path, store_target) -> None:
    db = new_store(store_target)
    add_documents(db, "c", [DocumentIn(doc_id="d", text="t", owner_org="acme",
                                       created_at=datetime.fromisoformat("2026-01-01T00:00:00Z"))])
    assert readable_document(db, "local", "c", "d").allowed
    assert [s.study_id for s in visible_studies(db, "local")] == ["s"]
    assert visible_studies(db, "local", include_local=False) == []


def test_text_outside_the_runs_protocol_is_never_displayed(tmp_path: Path, store_target) -> None:
    db, _ = team_store(store_target)
    # Even the lead, and even a member of globex, sees no text of b1 in run r1's context
    # when the run's protocol (pinned to acme) does not include it.
    from evalcore.retrieval.workflow import execute_protocol

    execute_protocol(db, study_id="s", protocol_name="p1", run_name="lex", actor=LEAD)
    shown = displayable_text(open_study(db, "s", LEAD), unit_id="a1", run_name="lex")
    assert shown.shown and shown.text == SECRET_A
    withheld = displayable_text(open_study(db, "s", LEAD), unit_id="b1", run_name="lex")
    assert not withheld.shown and withheld.permission_violation and withheld.text == ""
    assert "permission_violation" in withheld.reason
    other_org = displayable_text(open_study(db, "s", ANNOTATOR), unit_id="b1")
    assert not other_org.shown and other_org.text == "" and "globex" in other_org.reason
    with pytest.raises(PermissionDenied):  # an outsider gets no handle, so no text
        open_study(db, "s", OUTSIDER)


@pytest.mark.parametrize(
    "export",
    [
        lambda db, out, who: export_qrels(open_study(db, "s", who), out),
        lambda db, out, who: export_labels(open_study(db, "s", who), out),
        lambda db, out, who: export_run(open_study(db, "s", who), "r1", out),
    ],
    ids=["qrels", "labels", "run"],
)
def test_exports_obey_the_viewer(tmp_path: Path, export, store_target) -> None:
    db, _ = team_store(store_target)
    out = io.StringIO()
    export(db, out, ANNOTATOR)
    assert out.getvalue()
    refused = io.StringIO()
    with pytest.raises(PermissionDenied):
        export(db, refused, OUTSIDER)
    with pytest.raises(PermissionDenied):
        export(db, refused, None)
    assert refused.getvalue() == ""


def _cli(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


@pytest.mark.parametrize("command", [
    ["export", "qrels"], ["export", "labels"], ["export", "run", "--run", "r1"],
    ["members", "list"], ["document", "show", "a1"],
], ids=lambda c: " ".join(c[:2]))
def test_cli_refuses_an_outsider_and_prints_nothing_of_the_study(tmp_path: Path, command, store_target) -> None:
    db, _ = team_store(store_target)
    db.conn.close()
    store = str(store_target)
    ok = _cli(*command, "--db", store, "--study", "s", "--actor", ANNOTATOR)
    assert ok.exit_code == 0, ok.output
    refused = _cli(*command, "--db", store, "--study", "s", "--actor", OUTSIDER)
    assert refused.exit_code == 1
    assert "refused:" in refused.stderr and OUTSIDER in refused.stderr
    assert refused.stdout == ""
    assert SECRET_A not in refused.output and "a1" not in refused.stdout


def test_cli_document_show_withholds_another_organisations_text(tmp_path: Path, store_target) -> None:
    db, _ = team_store(store_target)
    db.conn.close()
    store = str(store_target)
    ok = _cli("document", "show", "--db", store, "--study", "s", "a1", "--actor", ANNOTATOR)
    assert SECRET_A in ok.stdout
    refused = _cli("document", "show", "--db", store, "--study", "s", "b1", "--actor", ANNOTATOR)
    assert refused.exit_code == 1 and SECRET_B not in refused.output
    assert "organisation 'globex'" in refused.stderr


def test_cli_members_round_trip(tmp_path: Path, store_target) -> None:
    db = new_store(store_target, org_id="acme")
    db.conn.close()
    store = str(store_target)
    first = _cli("members", "add", "--db", store, "--study", "s", "--user", "Lea@Acme.org",
                 "--role", "lead", "--actor", "lea@acme.org")
    assert first.exit_code == 0 and "now in team mode" in first.stdout
    add = _cli("members", "add", "--db", store, "--study", "s", "--user", "bo@acme.org",
               "--role", "annotator", "--actor", "lea@acme.org")
    assert add.exit_code == 0
    denied = _cli("members", "add", "--db", store, "--study", "s", "--user", "bo@acme.org",
                  "--role", "lead", "--actor", "bo@acme.org")
    assert denied.exit_code == 1 and "needs the lead role" in denied.stderr
    listed = _cli("members", "list", "--db", store, "--study", "s", "--actor", "bo@acme.org")
    assert listed.stdout.splitlines()[0].startswith("lead      lea@acme.org")
    freeze = _cli("reference", "freeze", "--db", store, "--study", "s", "--name", "v1",
                  "--actor", "bo@acme.org")
    assert freeze.exit_code == 1 and "needs the lead role" in freeze.stderr
    studies = _cli("members", "studies", "--db", store, "--actor", "bo@acme.org")
    assert studies.stdout.strip() == "s\tteam mode, annotator"


def test_cli_report_obeys_roles_and_scoping(tmp_path: Path, store_target) -> None:
    db, _ = team_store(store_target)
    db.conn.close()
    store = str(store_target)
    out = tmp_path / "r.json"
    denied = _cli("report", "--db", store, "--study", "s", "--runs", "r1", "--out", str(out),
                  "--by", ANNOTATOR)
    assert denied.exit_code == 1 and "needs the lead role" in denied.stderr
    assert not out.exists()
    made = _cli("report", "--db", store, "--study", "s", "--runs", "r1", "--out", str(out),
                "--by", LEAD, "--name", "weekly")
    assert made.exit_code == 0, made.output
    other = tmp_path / "o.json"
    refused = _cli("report", "--db", store, "--study", "s", "--stored", "weekly",
                   "--out", str(other), "--by", OUTSIDER)
    assert refused.exit_code == 1 and not other.exists()


def test_cli_study_list_shows_only_what_the_actor_may_see(tmp_path: Path, store_target) -> None:
    db, _ = team_store(store_target)
    db.conn.close()
    store = str(store_target)
    mine = _cli("study", "list", "--db", store, "--actor", ANNOTATOR)
    theirs = _cli("study", "list", "--db", store, "--actor", OUTSIDER)
    assert [line.split('"')[3] for line in mine.stdout.splitlines()] == ["s"]
    assert [line.split('"')[3] for line in theirs.stdout.splitlines()] == ["g"]
