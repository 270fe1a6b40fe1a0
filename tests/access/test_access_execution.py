"""Authorization at execution (issue 28, item 1): a pinned protocol is re-checked for
whoever uses it, never inherited from whoever pinned it.

The attack: lena (a lead of study ``s``, member of acme *and* globex) pins ``p2`` over
both organisations' documents. leo, another lead of ``s`` but a member of acme only,
runs it with queries of his choosing: the scores of globex's documents (a match vs
1e-06) would tell him which of them contain which terms — a search oracle. Every action
the pin enables is refused to him, or shows him nothing of globex, and writes nothing.
"""

from pathlib import Path

import pytest
from access_fixtures import ANNOTATOR, LEAD, OUTSIDER, team_store
from click.testing import CliRunner
from lexical_builders import protocol
from store_fixtures import table_snapshot

from evalcore.access import PermissionDenied
from evalcore.cli import main
from evalcore.retrieval.pin import (
    get_pinned_protocol,
    list_pinned_protocols,
    pin_protocol,
)
from evalcore.retrieval.search import search_corpus
from evalcore.retrieval.workflow import execute_protocol
from evalcore.store.corpus import DocumentIn, add_documents
from evalcore.store.members import add_member, add_to_organisation, remove_from_organisation
from evalcore.store.refusals import list_refusals
from evalcore.store.study_handle import open_study

LEO = "leo@acme.org"
BOTH = protocol(organisations=["acme", "globex"])


def _store(new_store_target: Path):
    db, _ = team_store(new_store_target("store.db"))
    add_to_organisation(db, user=LEAD, org_id="globex", actor=OUTSIDER)  # globex's owner
    add_member(db, study_id="s", user=LEO, role="lead", actor=LEAD)
    pin_protocol(db, study_id="s", name="p2", protocol=BOTH, actor=LEAD)
    return db


def _cli(*args: object):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_attack_executing_a_pin_over_another_organisation_is_refused(tmp_path: Path, store_target, new_store_target) -> None:
    db = _store(new_store_target)
    before = table_snapshot(db)
    with pytest.raises(PermissionDenied, match=(
            r"leo@acme.org may not run pinned protocol 'p2', which sees organisation\(s\) "
            r"globex in study 's': they are not a member")):
        execute_protocol(db, study_id="s", protocol_name="p2", run_name="oracle", actor=LEO)
    result = _cli("retrieve", "--db", store_target, "--study", "s", "--protocol", "p2",
                  "--name", "oracle", "--actor", LEO)
    assert result.exit_code == 1 and "refused: leo@acme.org may not run pinned protocol 'p2'" \
        in result.output and "members add-org" in result.output
    assert "b1" not in result.output and "Traceback" not in result.output
    assert table_snapshot(db) == before  # no run, no refusal, no audit row


def test_the_pinner_and_single_organisation_pins_still_run(tmp_path: Path, new_store_target) -> None:
    db = _store(new_store_target)
    run = execute_protocol(db, study_id="s", protocol_name="p2", run_name="both", actor=LEAD)
    assert run.protocol["pinned_document_count"] == 6
    assert execute_protocol(db, study_id="s", protocol_name="p1", run_name="acme",
                            actor=LEO).protocol["pinned_document_count"] == 4


def test_execution_is_checked_against_memberships_now_not_at_pin_time(tmp_path: Path, new_store_target) -> None:
    """The check runs for the executor at each execution: the pinner too is refused once
    they have left an organisation the pin sees."""
    db = _store(new_store_target)
    remove_from_organisation(db, user=LEAD, org_id="globex", actor=LEAD)  # left since
    before = table_snapshot(db)
    with pytest.raises(PermissionDenied, match="lena@acme.org may not run pinned protocol 'p2'"):
        execute_protocol(db, study_id="s", protocol_name="p2", run_name="late", actor=LEAD)
    assert table_snapshot(db) == before


def test_every_action_a_pin_enables_is_rechecked_for_whoever_acts(tmp_path: Path, store_target, new_store_target) -> None:
    db = _store(new_store_target)
    # a refusal lena's execution recorded, naming the globex document that changed
    add_documents(db, "c", [DocumentIn(doc_id="b1", title="Solar subsidies", text="changed",
                                       owner_org="globex", created_at="2026-01-01T00:00:00Z")],
                  actor=OUTSIDER)
    with pytest.raises(Exception, match="no longer matches"):
        execute_protocol(db, study_id="s", protocol_name="p2", run_name="x", actor=LEAD)
    before = table_snapshot(db)
    # 1. executing (library and CLI): tested above
    # 2. its description: no count of globex's documents for leo, all of them for lena
    seen = get_pinned_protocol(open_study(db, "s", LEO), "p2")
    assert (seen.documents_by_organisation, seen.document_count,
            seen.withheld_organisations) == ({"acme": 4}, 4, ["globex"])
    assert [
        p.withheld_organisations for p in list_pinned_protocols(open_study(db, "s", ANNOTATOR))
    ] == [[], ["globex"]]
    full = get_pinned_protocol(open_study(db, "s", LEAD), "p2")
    assert (full.documents_by_organisation, full.withheld_organisations) == (
        {"acme": 4, "globex": 2}, [])
    shown = _cli("protocol", "show", "--db", store_target, "--study", "s",
                 "--name", "p2", "--actor", LEO)
    assert shown.exit_code == 0 and '"globex": 2' not in shown.output
    assert '"withheld_organisations": [\n    "globex"' in shown.output
    # 3. its refusals: which globex documents changed is not leo's to read
    mine, theirs = list_refusals(open_study(db, "s", LEAD)), list_refusals(open_study(db, "s", LEO))
    assert "b1" in mine[0].message and "b1" not in theirs[0].message + str(theirs[0].detail)
    assert "withheld" in theirs[0].message
    # 4. pinning the same view himself
    with pytest.raises(PermissionDenied, match=r"may not pin a protocol that sees organisation"):
        pin_protocol(db, study_id="s", name="p3", protocol=BOTH, actor=LEO)
    # 5. the search box: only acme's documents
    assert {h.owner_org for h in search_corpus(db, "c", "solar", viewer=LEO)} == {"acme"}
    assert table_snapshot(db) == before
