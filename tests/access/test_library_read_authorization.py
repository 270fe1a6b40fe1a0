"""Every public library read of study data goes through a study handle, which a non-member
cannot open.

The same victim store as the CLI sweep (tests/access/test_cli_read_authorization.py):
Mallory, a member of neither team study, opens a handle (``open_study``) as ``MALLORY``
(and as None, nobody) on the victim study and on an unknown study id, to call each public
read with it. Each refuses (PermissionDenied, or StudyNotFoundError for the unknown id)
and no message names a query, document, run, reference, protocol, report or another
study. The lead gets the data (the control), and the same reads of a local-mode study
are open to anyone (None). That every study read takes a handle is enforced by
tests/architecture/test_read_gate_structure.py.
"""

from collections.abc import Callable
from pathlib import Path

import pytest
from test_cli_read_authorization import LEAD, MALLORY, OTHER, SECRETS, STUDY
from test_cli_read_authorization import store as store  # noqa: F401  (the fixture)

from evalcore.access.decisions import PermissionDenied
from evalcore.access.roles import Permission
from evalcore.analysis.adjudication import conflict_contexts
from evalcore.analysis.agreement import agreement_and_conflicts, open_conflicts, study_agreement
from evalcore.analysis.decision import decide, stored_pair
from evalcore.analysis.inspector import inspect_query
from evalcore.analysis.pair_comparison import compare_pair
from evalcore.analysis.run_evaluation import evaluate_run, evaluate_run_measures
from evalcore.annotation.pool import query_pool
from evalcore.annotation.progress import query_progress, study_progress
from evalcore.estimation.stored import estimate_stored, sample_queue, show_sample
from evalcore.live.dashboard import LiveDashboard, query_results_by_run
from evalcore.live.decide_state import (
    DecideTarget,
    decide_state,
    decide_target,
    next_queue_item,
    study_run_names,
)
from evalcore.report.from_store import report_from_store
from evalcore.report.stored import save_report
from evalcore.retrieval.pin import get_pinned_protocol, list_pinned_protocols
from evalcore.retrieval.search import search_corpus
from evalcore.store.audit import audit_entries
from evalcore.store.authorize import allowed, authorize
from evalcore.store.cant_judge import cant_judge_units
from evalcore.store.completeness import completeness_history, mark_complete, reopen
from evalcore.store.connection import open_store
from evalcore.store.drafts import drafts
from evalcore.store.exports import (
    export_labels,
    export_qrels,
    export_run,
    export_tool_labels,
    qrels_refusal,
    run_refusal,
    tool_labels_refusal,
)
from evalcore.store.information_needs import (
    InformationNeed,
    information_need,
    information_needs,
    set_information_need,
)
from evalcore.store.labels import label_history, record_label, undo_last_label
from evalcore.store.marks import store_marks
from evalcore.store.members import add_member, list_members, remove_member
from evalcore.store.observations import observations_for_run
from evalcore.store.pools import pool_sizes, pooled_ranks, pooled_units
from evalcore.store.query_reads import query_text, query_texts
from evalcore.store.references import (
    freeze_reference,
    get_reference,
    list_references,
    reference_completeness,
    reference_labels,
    verify_reference,
)
from evalcore.store.refusals import list_refusals
from evalcore.store.reports import find_report, list_reports
from evalcore.store.resolution import (
    conflicts,
    resolve_query,
    resolve_unit_in_store,
    resolved_gains,
)
from evalcore.store.runs import add_run, get_run, list_runs, run_results
from evalcore.store.samples import get_sample, list_samples, sample_units
from evalcore.store.studies import QueryIn, StudyIn, StudyNotFoundError, get_study
from evalcore.store.study_archive import export_study
from evalcore.store.study_handle import open_study
from evalcore.store.study_measures import study_measures
from evalcore.store.study_setup import add_queries, create_study


def _reads(tmp: Path) -> dict[str, Callable]:
    """name -> call(db, study_id, actor): every public read of a study's data, through a
    handle opened for the actor."""
    return {
        "list_runs": lambda db, s, v: list_runs(open_study(db, s, v)),
        "list_references": lambda db, s, v: list_references(open_study(db, s, v)),
        "get_pinned_protocol": lambda db, s, v: get_pinned_protocol(
            open_study(db, s, v), "PROTSECRET"
        ),
        "list_pinned_protocols": lambda db, s, v: list_pinned_protocols(open_study(db, s, v)),
        "observations_for_run": lambda db, s, v: observations_for_run(
            open_study(db, s, v), "RUNSECRET"
        ),
        "export_qrels": lambda db, s, v: export_qrels(open_study(db, s, v), tmp / "q.txt"),
        "export_labels": lambda db, s, v: export_labels(open_study(db, s, v), tmp / "l.csv"),
        "export_run": lambda db, s, v: export_run(open_study(db, s, v), "RUNSECRET", tmp / "r.txt"),
        "export_tool_labels": lambda db, s, v: export_tool_labels(
            open_study(db, s, v), tmp / "t.json", "rank-eval"
        ),
        "export_study": lambda db, s, v: export_study(db, s, tmp / "s.zip", actor=v),
        "list_reports": lambda db, s, v: list_reports(open_study(db, s, v)),
        "list_members": lambda db, s, v: list_members(open_study(db, s, v)),
        "list_refusals": lambda db, s, v: list_refusals(open_study(db, s, v)),
        "open_study": open_study,
        "get_run": lambda db, s, v: get_run(open_study(db, s, v), "RUNSECRET"),
        "get_reference": lambda db, s, v: get_reference(open_study(db, s, v), "REFSECRET"),
        "reference_labels": lambda db, s, v: reference_labels(open_study(db, s, v), "REFSECRET"),
        "reference_completeness": lambda db, s, v: reference_completeness(
            open_study(db, s, v), "REFSECRET"
        ),
        "verify_reference": lambda db, s, v: verify_reference(open_study(db, s, v), "REFSECRET"),
        "find_report": lambda db, s, v: find_report(open_study(db, s, v), "REPORTSECRET"),
        "label_history": lambda db, s, v: label_history(open_study(db, s, v), "QSECRET1"),
        "resolved_gains": lambda db, s, v: resolved_gains(open_study(db, s, v)),
        "conflicts": lambda db, s, v: conflicts(open_study(db, s, v)),
        "audit_entries": lambda db, s, v: audit_entries(open_study(db, s, v)),
        "information_need": lambda db, s, v: information_need(open_study(db, s, v), "QSECRET1"),
        "information_needs": lambda db, s, v: information_needs(open_study(db, s, v)),
        "pooled_ranks": lambda db, s, v: pooled_ranks(open_study(db, s, v), "QSECRET1"),
        "pool_sizes": lambda db, s, v: pool_sizes(open_study(db, s, v)),
        "pooled_units": lambda db, s, v: pooled_units(open_study(db, s, v), ["QSECRET1"]),
        "query_pool": lambda db, s, v: query_pool(open_study(db, s, v), "QSECRET1"),
        "query_progress": lambda db, s, v: query_progress(open_study(db, s, v), "QSECRET1"),
        "study_progress": lambda db, s, v: study_progress(open_study(db, s, v)),
        "evaluate_run": lambda db, s, v: evaluate_run(open_study(db, s, v), "RUNSECRET"),
        "evaluate_run_measures": lambda db, s, v: evaluate_run_measures(
            open_study(db, s, v), "RUNSECRET"
        ),
        "inspect_query": lambda db, s, v: inspect_query(
            open_study(db, s, v), "RUNSECRET", "QSECRET1"
        ),
        "conflict_contexts": lambda db, s, v: conflict_contexts(
            open_study(db, s, v), [("QSECRET1", "DSECRET1")]
        ),
        "study_agreement": lambda db, s, v: study_agreement(open_study(db, s, v)),
        "open_conflicts": lambda db, s, v: open_conflicts(open_study(db, s, v)),
        "agreement_and_conflicts": lambda db, s, v: agreement_and_conflicts(open_study(db, s, v)),
        "compare_pair": lambda db, s, v: compare_pair(
            open_study(db, s, v), "RUNSECRET", "RUNSECRET", ["P@1"]
        ),
        "decide": lambda db, s, v: decide(open_study(db, s, v), "RUNSECRET", "RUNSECRET", ["P@1"]),
        "stored_pair": lambda db, s, v: stored_pair(
            open_study(db, s, v), "RUNSECRET", "RUNSECRET", ["P@1"]
        ),
        "study_run_names": lambda db, s, v: study_run_names(open_study(db, s, v)),
        "decide_target": lambda db, s, v: decide_target(
            open_study(db, s, v), "RUNSECRET", "X", "P@1"
        ),
        "decide_state": lambda db, s, v: decide_state(open_study(db, s, v), _TARGET),
        "next_queue_item": lambda db, s, v: next_queue_item(open_study(db, s, v), [], "x"),
        "query_results_by_run": lambda db, s, v: query_results_by_run(
            open_study(db, s, v), "QSECRET1"
        ),
        "LiveDashboard.build": lambda db, s, v: LiveDashboard.build(open_study(db, s, v)),
        "report_from_store": lambda db, s, v: report_from_store(
            open_study(db, s, v), runs=["RUNSECRET"], created_by=LEAD
        ),
        "qrels_refusal": lambda db, s, v: qrels_refusal(open_study(db, s, v), None),
        "run_refusal": lambda db, s, v: run_refusal(open_study(db, s, v), "RUNSECRET"),
        "tool_labels_refusal": lambda db, s, v: tool_labels_refusal(
            open_study(db, s, v), "rank-eval", None
        ),
        "completeness_history": lambda db, s, v: completeness_history(
            open_study(db, s, v), "QSECRET1"
        ),
        "cant_judge_units": lambda db, s, v: cant_judge_units(
            open_study(db, s, v), "QSECRET1", LEAD
        ),
        "drafts": lambda db, s, v: drafts(open_study(db, s, v), "QSECRET1", LEAD),
        "store_marks": lambda db, s, v: store_marks(open_study(db, s, v)),
        "resolve_query": lambda db, s, v: resolve_query(open_study(db, s, v), "QSECRET1"),
        "resolve_unit_in_store": lambda db, s, v: resolve_unit_in_store(
            open_study(db, s, v), "QSECRET1", "DSECRET1"
        ),
        "query_text": lambda db, s, v: query_text(open_study(db, s, v), "QSECRET1"),
        "query_texts": lambda db, s, v: query_texts(open_study(db, s, v)),
        "study_measures": lambda db, s, v: study_measures(open_study(db, s, v)),
        "list_samples": lambda db, s, v: list_samples(open_study(db, s, v)),
        "get_sample": lambda db, s, v: get_sample(open_study(db, s, v), "SAMPLESECRET"),
        "sample_units": lambda db, s, v: sample_units(open_study(db, s, v), "SAMPLESECRET"),
        "show_sample": lambda db, s, v: show_sample(open_study(db, s, v), "SAMPLESECRET"),
        "sample_queue": lambda db, s, v: sample_queue(open_study(db, s, v), "SAMPLESECRET"),
        "estimate_stored": lambda db, s, v: estimate_stored(
            open_study(db, s, v), "SAMPLESECRET", candidate="RUNSECRET", baseline="RUNSECRET2"
        ),
    }


_TARGET = DecideTarget(run_a="RUNSECRET", run_b="RUNSECRET2", measure="P@1")


def _run_results(db, s, v):
    """run_results names a run by its row id; the gate is its study's."""
    run_id = get_run(open_study(db, s, LEAD), "RUNSECRET").run_id
    return run_results(open_study(db, s, v), run_id)


@pytest.mark.parametrize("viewer", [MALLORY, None])
@pytest.mark.parametrize("study", [STUDY, "nope-study"])
def test_a_non_member_is_refused_by_every_public_read(store: Path, tmp_path: Path,  # noqa: F811
                                                     viewer: str | None, study: str) -> None:
    db = open_store(store)
    for name, call in _reads(tmp_path).items():
        expected = PermissionDenied if study == STUDY else StudyNotFoundError
        with pytest.raises(expected) as caught:
            call(db, study, viewer)
        text = str(caught.value)
        for secret in SECRETS:
            assert secret not in text, (name, secret, text)
        if study != STUDY:
            assert STUDY not in text and OTHER not in text, (name, text)
    assert not list(tmp_path.iterdir()), "a refused read wrote a file"
    db.conn.close()


@pytest.mark.parametrize("viewer", [MALLORY, None])
def test_a_non_member_is_refused_the_ranked_results_and_a_shared_live_state(
        store: Path, viewer: str | None) -> None:  # noqa: F811
    db = open_store(store)
    with pytest.raises(PermissionDenied):
        _run_results(db, STUDY, viewer)
    state = LiveDashboard.build(open_study(db, STUDY, LEAD))  # built for the lead, then shared
    for call in (
        lambda: state.refresh(open_study(db, state.study_id, viewer)),
        lambda: state.update_queries(open_study(db, state.study_id, viewer), ["QSECRET1"]),
    ):
        with pytest.raises(PermissionDenied):
            call()
    db.conn.close()


def test_an_unknown_study_lists_only_the_studies_the_viewer_may_see(
        store: Path) -> None:  # noqa: F811
    db = open_store(store)
    with pytest.raises(StudyNotFoundError) as lead_sees:
        get_run(open_study(db, "nope-study", LEAD), "RUNSECRET")
    assert STUDY in str(lead_sees.value) and OTHER in str(lead_sees.value)
    with pytest.raises(StudyNotFoundError) as mallory_sees:
        get_run(open_study(db, "nope-study", MALLORY), "RUNSECRET")
    assert STUDY not in str(mallory_sees.value) and OTHER not in str(mallory_sees.value)
    db.conn.close()


def test_the_lead_reads_the_same_data(store: Path, tmp_path: Path) -> None:  # noqa: F811
    db = open_store(store)
    reads = _reads(tmp_path)
    assert [r.name for r in reads["list_runs"](db, STUDY, LEAD)] == ["RUNSECRET"]
    assert [r.name for r in reads["list_references"](db, STUDY, LEAD)] == ["REFSECRET"]
    assert reads["get_pinned_protocol"](db, STUDY, LEAD).name == "PROTSECRET"
    assert [o.query_id for o in reads["observations_for_run"](db, STUDY, LEAD)] == ["QSECRET1"]
    assert [r.name for r in reads["list_reports"](db, STUDY, LEAD)] == ["REPORTSECRET"]
    assert [m.user_id for m in reads["list_members"](db, STUDY, LEAD)] == [LEAD]
    assert reads["list_refusals"](db, STUDY, LEAD) == []
    assert reads["get_run"](db, STUDY, LEAD).name == "RUNSECRET"
    assert reads["reference_labels"](db, STUDY, LEAD) == {"QSECRET1": {"DSECRET1": 2,
                                                                       "DSECRET3": 1}}
    assert reads["verify_reference"](db, STUDY, LEAD) is True
    assert reads["find_report"](db, STUDY, LEAD).name == "REPORTSECRET"
    assert [e.unit_id for e in reads["label_history"](db, STUDY, LEAD)] == ["DSECRET1",
                                                                            "DSECRET3"]
    assert reads["resolved_gains"](db, STUDY, LEAD) == {"QSECRET1": {"DSECRET1": 2,
                                                                     "DSECRET3": 1}}
    assert reads["pool_sizes"](db, STUDY, LEAD) == {"QSECRET1": 4}
    assert [i.unit_id for i in reads["query_pool"](db, STUDY, LEAD)][:2] == ["DSECRET1",
                                                                             "DSECRET2"]
    assert reads["evaluate_run"](db, STUDY, LEAD).queries[0].query_id == "QSECRET1"
    assert [r.unit_id for r in reads["inspect_query"](db, STUDY, LEAD).rows][0] == "DSECRET1"
    assert list(reads["query_results_by_run"](db, STUDY, LEAD)) == ["RUNSECRET"]
    assert reads["LiveDashboard.build"](db, STUDY, LEAD).run_names == ["RUNSECRET"]
    assert reads["study_run_names"](db, STUDY, LEAD) == ["RUNSECRET"]
    assert list(_run_results(db, STUDY, LEAD)) == ["QSECRET1"]
    assert reads["audit_entries"](db, STUDY, LEAD)
    assert [e.state for e in reads["completeness_history"](db, STUDY, LEAD)] == ["complete"]
    assert reads["query_text"](db, STUDY, LEAD) == "query-text-secret solar"
    assert reads["query_texts"](db, STUDY, LEAD) == {"QSECRET1": "query-text-secret solar"}
    assert set(reads["resolve_query"](db, STUDY, LEAD)) == {"DSECRET1", "DSECRET3"}
    assert reads["resolve_unit_in_store"](db, STUDY, LEAD).gain == 2
    assert reads["store_marks"](db, STUDY, LEAD).run_ids
    assert reads["study_measures"](db, STUDY, LEAD)
    db.conn.close()


# Reads of what the local study lacks (a pin; a second run named as these calls name it; a
# sample): past the gate, they answer with their own LookupError.
_LEAD_LOOKUP_ERRORS = {
    "get_pinned_protocol",
    "compare_pair",
    "decide",
    "stored_pair",
    "decide_target",
    "decide_state",
    "get_sample",
    "sample_units",
    "show_sample",
    "sample_queue",
    "estimate_stored",
}


def test_a_local_mode_study_stays_open_to_anyone(tmp_path: Path, new_store_target) -> None:
    """The same reads of a study with no member (local mode) answer a handle opened by None."""
    db = open_store(new_store_target("local.sqlite"))
    create_study(db, StudyIn(study_id="loc", corpus_id="lc"))
    add_queries(db, "loc", [QueryIn(query_id="QSECRET1", text="solar")])
    record_label(db, study_id="loc", query_id="QSECRET1", unit_id="DSECRET1", gain=2,
                 annotator="ann")
    for name in ("RUNSECRET", "RUNSECRET2"):
        add_run(db, study_id="loc", name=name, source="imported", k=2,
                results=[("QSECRET1", 1, "DSECRET1", 2.0), ("QSECRET1", 2, "DSECRET2", 1.0)])
    freeze_reference(db, study_id="loc", name="REFSECRET", actor="ann")
    save_report(db, report_from_store(open_study(db, "loc", None), runs=["RUNSECRET"], created_by="ann", name="REPORTSECRET"))
    for name, call in _reads(tmp_path).items():
        try:
            call(db, "loc", None)
        except PermissionDenied as refused:  # pragma: no cover - the failure message
            raise AssertionError(f"{name} refused a local-mode study: {refused}") from None
        except (LookupError, ValueError):  # TargetError: a ValueError naming the bad run
            assert name in _LEAD_LOOKUP_ERRORS, name
    assert list(_run_results(db, "loc", None)) == ["QSECRET1"]
    db.conn.close()


def _writes_naming_a_study(db, study: str, actor: str | None) -> dict[str, Callable]:
    """Actions (and checks) that take a study id and say who acts: an unknown id reaches the
    unknown-study message before anything else. Those that need a name (an annotator, a
    lead) only when ``actor`` is one (None is refused as missing first)."""
    anyone = {
        "add_run": lambda: add_run(db, study_id=study, name="r", source="imported", k=1,
                                   results=[("q", 1, "d", 1.0)], actor=actor),
        "set_information_need": lambda: set_information_need(
            db, study_id=study, query_id="q", need=InformationNeed(description="d"),
            actor=actor),
        "authorize": lambda: authorize(db, study_id=study, actor=actor,
                                       permission=Permission.LABEL),
        "allowed": lambda: allowed(db, study_id=study, actor=actor, permission=Permission.READ),
    }
    if actor is None:
        return anyone
    return anyone | {
        "record_label": lambda: record_label(db, study_id=study, query_id="q", unit_id="d",
                                             gain=1, annotator=actor),
        "undo_last_label": lambda: undo_last_label(db, study_id=study, query_id="q",
                                                   annotator=actor),
        "mark_complete": lambda: mark_complete(db, study_id=study, query_id="q", actor=actor),
        "reopen": lambda: reopen(db, study_id=study, query_id="q", actor=actor, reason="r"),
        "freeze_reference": lambda: freeze_reference(db, study_id=study, name="v", actor=actor),
        "add_member": lambda: add_member(db, study_id=study, user=MALLORY, role="lead",
                                         actor=actor),
        "remove_member": lambda: remove_member(db, study_id=study, user=LEAD, actor=actor),
    }


@pytest.mark.parametrize("actor", [MALLORY, None])
def test_a_stranger_giving_an_unknown_study_id_sees_no_other_study(
        store: Path, actor: str | None) -> None:  # noqa: F811
    """Issue 12: the unknown-id message lists only the studies the asker may read."""
    db = open_store(store)
    for name, call in _writes_naming_a_study(db, "nope-study", actor).items():
        with pytest.raises(StudyNotFoundError) as caught:
            call()
        text = str(caught.value)
        assert "nope-study" in text and STUDY not in text and OTHER not in text, (name, text)
    with pytest.raises(StudyNotFoundError) as caught:  # it cannot know who asks: lists none
        get_study(db, "nope-study")
    assert STUDY not in str(caught.value) and OTHER not in str(caught.value)
    db.conn.close()


def test_the_lead_giving_an_unknown_study_id_is_told_their_studies(
        store: Path) -> None:  # noqa: F811
    """The control: the same message lists the studies the lead may read."""
    db = open_store(store)
    for name, call in _writes_naming_a_study(db, "nope-study", LEAD).items():
        with pytest.raises(StudyNotFoundError) as caught:
            call()
        assert STUDY in str(caught.value) and OTHER in str(caught.value), name
    db.conn.close()


def test_search_takes_who_asks_and_finds_only_what_they_may_read(
        store: Path) -> None:  # noqa: F811
    db = open_store(store)
    with pytest.raises(TypeError):
        search_corpus(db, "c", "solar")  # type: ignore[call-arg]  # no viewer: no search
    assert {h.doc_id for h in search_corpus(db, "c", "solar", viewer=LEAD)} >= {"DSECRET1"}
    for viewer in (MALLORY, None, ""):
        assert search_corpus(db, "c", "solar", viewer=viewer) == [], viewer
    db.conn.close()
