"""Every public library read of study data takes the viewer and refuses a non-member (issue 12, item 2).

The same victim store as the CLI sweep (tests/test_cli_read_authorization.py):
Mallory, a member of neither team study, calls each public read with
``viewer=MALLORY`` (and with ``viewer=None``, nobody) on the victim study and
on an unknown study id. Each refuses (PermissionDenied, or StudyNotFoundError
for the unknown id) and no message names a query, document, run, reference,
protocol, report or another study. The lead gets the data (the control).
"""

from collections.abc import Callable
from pathlib import Path

import pytest
from test_cli_read_authorization import LEAD, MALLORY, OTHER, SECRETS, STUDY
from test_cli_read_authorization import store as store  # noqa: F401  (the fixture)

from evalcore.access.decisions import PermissionDenied
from evalcore.retrieval.pin import get_pinned_protocol, list_pinned_protocols
from evalcore.store.connection import open_store
from evalcore.store.exports import export_labels, export_qrels, export_run
from evalcore.store.members import list_members
from evalcore.store.observations import observations_for_run
from evalcore.store.read_access import require_read
from evalcore.store.references import list_references
from evalcore.store.refusals import list_refusals
from evalcore.store.reports import list_reports
from evalcore.store.runs import list_runs
from evalcore.store.studies import StudyNotFoundError
from evalcore.store.study_archive import export_study
from evalcore.store.tool_label_exports import export_tool_labels


def _reads(tmp: Path) -> dict[str, Callable]:
    """name -> call(db, study_id, viewer): every public read of a study's data."""
    return {
        "list_runs": lambda db, s, v: list_runs(db, s, viewer=v),
        "list_references": lambda db, s, v: list_references(db, s, viewer=v),
        "get_pinned_protocol": lambda db, s, v: get_pinned_protocol(db, s, "PROTSECRET", viewer=v),
        "list_pinned_protocols": lambda db, s, v: list_pinned_protocols(db, s, viewer=v),
        "observations_for_run": lambda db, s, v: observations_for_run(db, s, "RUNSECRET",
                                                                      viewer=v),
        "export_qrels": lambda db, s, v: export_qrels(db, s, tmp / "q.txt", viewer=v),
        "export_labels": lambda db, s, v: export_labels(db, s, tmp / "l.csv", viewer=v),
        "export_run": lambda db, s, v: export_run(db, s, "RUNSECRET", tmp / "r.txt", viewer=v),
        "export_tool_labels": lambda db, s, v: export_tool_labels(db, s, tmp / "t.json",
                                                                  "rank-eval", viewer=v),
        "export_study": lambda db, s, v: export_study(db, s, tmp / "s.zip", actor=v),
        "list_reports": lambda db, s, v: list_reports(db, s, viewer=v),
        "list_members": lambda db, s, v: list_members(db, s, viewer=v),
        "list_refusals": lambda db, s, v: list_refusals(db, s, viewer=v),
        "require_read": lambda db, s, v: require_read(db, v, s),
    }


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
    db.conn.close()
