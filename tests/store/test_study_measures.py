"""A study's chosen measures: schema v11, the store functions and ``evalcore study measures``."""

import pytest
from access_fixtures import ANNOTATOR, LEAD, OUTSIDER, REVIEWER, team_store
from click.testing import CliRunner
from store_fixtures import new_store, store_at_version

from evalcore.access.decisions import PermissionDenied
from evalcore.cli import main
from evalcore.contract.measures import Measure, UnknownMeasure, parse_measure
from evalcore.store import schema
from evalcore.store.audit import audit_entries
from evalcore.store.connection import open_store
from evalcore.store.study_handle import open_study
from evalcore.store.study_measures import (
    DEFAULT_STUDY_MEASURES,
    measure_label,
    parse_measure_list,
    set_study_measures,
    shown_measures,
    study_measures,
)


@pytest.mark.sqlite_only
def test_a_v10_store_migrates_to_v11_and_its_studies_report_the_default_measures(tmp_path):
    path = tmp_path / "old.db"
    store_at_version(path, 10)
    db = open_store(path)
    assert schema.schema_version(db) == schema.SCHEMA_VERSION >= 11
    assert study_measures(open_study(db, "s", None)) == list(DEFAULT_STUDY_MEASURES)
    assert [
        measure_label(m, 10, aggregate=True) for m in study_measures(open_study(db, "s", None))
    ] == ["P@10", "R@10", "nDCG@10", "MRR@10"]
    set_study_measures(db, study_id="s", measures=["P@5"], actor=None)
    assert study_measures(open_study(db, "s", None)) == [parse_measure("P@5")]


def test_set_keeps_order_drops_duplicates_and_audits_old_and_new(tmp_path, store_target):
    db = new_store(store_target)
    old = set_study_measures(db, study_id="s", measures=parse_measure_list(
        "nDCG@10, p@5 ,MRR@10, RR@10"), actor="kim")
    assert old == list(DEFAULT_STUDY_MEASURES)
    assert [str(m) for m in study_measures(open_study(db, "s", None))] == [
        "nDCG@10",
        "P@5",
        "RR@10",
    ]
    entry = [e for e in audit_entries(open_study(db, "s", None)) if e.action == "study.measures.set"][-1]
    assert entry.study_id == "s" and entry.actor == "kim"
    assert entry.detail["old"] == ["P", "R", "nDCG", "RR"]
    assert entry.detail["new"] == ["nDCG@10", "P@5", "RR@10"]
    assert entry.detail["default_before"] is True


@pytest.mark.parametrize("text", ["P@10, foo@3", "P@0", "nDCG(rel=2)@5", "", " , ", "P@10;R@10"])
def test_bad_lists_are_refused_before_anything_is_written(tmp_path, text, store_target):
    db = new_store(store_target)
    with pytest.raises(ValueError) as caught:
        set_study_measures(db, study_id="s", measures=parse_measure_list(text), actor=None)
    if isinstance(caught.value, UnknownMeasure):
        assert "known measures: P@k" in str(caught.value)
    assert study_measures(open_study(db, "s", None)) == list(DEFAULT_STUDY_MEASURES)
    assert not [e for e in audit_entries(open_study(db, "s", None)) if e.action == "study.measures.set"]


@pytest.mark.parametrize("user", [ANNOTATOR, REVIEWER, OUTSIDER, None])
def test_only_a_lead_sets_the_measures_in_team_mode(tmp_path, user, store_target):
    db, _ = team_store(store_target)
    with pytest.raises(PermissionDenied):
        set_study_measures(db, study_id="s", measures=["P@3"], actor=user)
    assert study_measures(open_study(db, "s", LEAD)) == list(DEFAULT_STUDY_MEASURES)
    set_study_measures(db, study_id="s", measures=["P@3"], actor=LEAD)
    assert study_measures(open_study(db, "s", LEAD)) == [parse_measure("P@3")]


def test_judged_is_shown_beside_every_cutoff():
    chosen = parse_measure_list("P@10, R@100, nDCG@10, Judged@100")
    assert [str(m) for m in shown_measures(chosen)] == [
        "P@10", "R@100", "nDCG@10", "Judged@100", "Judged@10"]
    assert shown_measures(list(DEFAULT_STUDY_MEASURES))[-1] == Measure("Judged")


def _cli(*args: str):
    return CliRunner().invoke(main, list(args))


def test_cli_lists_sets_and_refuses_bad_names(tmp_path, store_target):
    db = new_store(store_target)
    db.conn.close()
    path = str(store_target)
    listed = _cli("study", "measures", "--db", path, "--study", "s")
    assert listed.exit_code == 0, listed.output
    assert listed.output.splitlines()[:4] == [
        "P@k (k: each run's cutoff)", "R@k (k: each run's cutoff)",
        "nDCG@k (k: each run's cutoff)", "MRR@k (k: each run's cutoff)"]
    assert "Judged@k" in listed.output.splitlines()[4]
    done = _cli("study", "measures", "--db", path, "--study", "s", "--set", "P@10,nDCG@10")
    assert done.exit_code == 0, done.output
    assert done.output.splitlines() == ["measures of study s set", "P@10", "nDCG@10",
                                        "Judged@10 (shown beside the others)"]
    bad = _cli("study", "measures", "--db", path, "--study", "s", "--set", "P@10,NDGC@10")
    assert bad.exit_code == 2
    assert "no measure family 'NDGC'" in bad.output and "known measures: P@k" in bad.output
    assert "Traceback" not in bad.output
    again = _cli("study", "measures", "--db", path, "--study", "s")
    assert again.output.splitlines()[:2] == ["P@10", "nDCG@10"]


def test_cli_refuses_a_non_member_and_a_non_lead(tmp_path, store_target):
    db, _ = team_store(store_target)
    db.conn.close()
    path = str(store_target)
    for user, code in ((OUTSIDER, 1), (ANNOTATOR, 1)):
        result = _cli("study", "measures", "--db", path, "--study", "s", "--set", "P@1",
                      "--actor", user)
        assert result.exit_code == code, (user, result.output)
        assert "refused" in result.output
    shown = _cli("study", "measures", "--db", path, "--study", "s", "--actor", OUTSIDER)
    assert shown.exit_code == 1 and "P@k" not in shown.output
    ok = _cli("study", "measures", "--db", path, "--study", "s", "--set", "P@1",
              "--actor", LEAD)
    assert ok.exit_code == 0 and "P@1" in ok.output


def test_the_inspector_shows_the_studys_measures_at_the_runs_k(tmp_path, store_target):
    from evalcore.analysis.inspector import inspect_query
    from evalcore.store.labels import record_label
    from evalcore.store.runs import add_run

    db = new_store(store_target)
    add_run(db, study_id="s", name="r", source="imported", k=2,
            results=[("q1", 1, "a", 2.0), ("q1", 2, "b", 1.0)])
    record_label(db, study_id="s", query_id="q1", unit_id="a", gain=1, annotator="ann")
    assert list(inspect_query(open_study(db, "s", None), "r", "q1").measure_values) == [
        "P@2",
        "R@2",
        "nDCG@2",
        "RR@2",
        "Judged@2",
    ]
    set_study_measures(db, study_id="s", measures=["P@1", "AP@5"], actor=None)
    values = inspect_query(open_study(db, "s", None), "r", "q1").measure_values
    assert list(values) == ["P@1", "Judged@1"]  # AP@5 is deeper than the run was stored
    assert values["P@1"].value == 1.0 and values["Judged@1"].value == 1.0
