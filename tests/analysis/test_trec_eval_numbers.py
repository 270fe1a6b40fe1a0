"""The trec_eval-compatible numbers from unit codes are bit for bit those of the dict path
(``evaluate(..., trec_eval=True)`` on the exported qrels and run): random stored pairs with
units in conflict, labels of units no run returned, queries one run or no label covers,
natural query order (q2 before q10), and the cases the codes leave to the dict path (a unit
twice in a ranking, an empty query or unit id); and trec_eval's own test run and qrels."""

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from shared_data import TREC_EVAL_DATA, require_shared
from store_fixtures import new_store

from evalcore.analysis import trec_eval_numbers as numbers
from evalcore.contract.evaluation_protocol import EvalProtocol
from evalcore.contract.measures import parse_measure
from evalcore.io.trec import read_qrels, read_run
from evalcore.store.observations import runs_as_columns
from evalcore.store.runs import add_run
from evalcore.store.study_handle import open_study
from evalcore.store.transaction import write_transaction

MEASURES = ["P@3", "R@5", "nDCG@4", "RR@5", "AP@5", "Judged@3", "Success@2", "RBP(p=0.8)@5"]
PARSED = [parse_measure(m) for m in MEASURES]
QUERIES = ["q1", "q2", "q10", "Q3", "q03", "x"]
UNITS = ["d1", "d2", "d3", "d4", "d5", "d6", "D1"]


@st.composite
def studies(draw, *, odd_ids: bool = False):
    """Two runs and label events over a few queries; with ``odd_ids`` the empty id and
    repeated units may appear."""
    queries = QUERIES + ([""] if odd_ids else [])
    units = UNITS + ([""] if odd_ids else [])
    runs = []
    for _ in range(2):
        rows = []
        for q in draw(st.lists(st.sampled_from(queries), unique=True, min_size=1, max_size=6)):
            ranking = draw(st.lists(st.sampled_from(units), unique=not odd_ids, min_size=1,
                                       max_size=7))
            rows += [(q, rank, u, float(10 - rank)) for rank, u in enumerate(ranking, 1)]
        runs.append((draw(st.integers(1, 6)), rows))
    events = draw(st.lists(st.tuples(st.sampled_from(QUERIES), st.sampled_from(UNITS),
                                     st.integers(0, 4), st.sampled_from(["ann", "bob"])),
                           max_size=30))
    return runs, events


def store_columns(folder: Path, study):
    runs, events = study
    folder.mkdir(parents=True, exist_ok=True)
    db = new_store(folder)
    for name, (k, rows) in zip("AB", runs, strict=True):
        add_run(db, study_id="s", name=name, source="imported", k=k, results=rows)
    with write_transaction(db):
        db.conn.executemany(
            "INSERT INTO label_events (study_id, query_id, unit_id, kind, gain, annotator, "
            "created_at, source) VALUES ('s', ?, ?, 'label', ?, ?, '2026-01-01T00:00:00Z', 't')",
            events)
    return runs_as_columns(open_study(db, "s", None), ["A", "B"])


def must_be_judged(side) -> bool:
    """Whether trec_eval input cannot hold the side's qrels and run as they are: a judged or
    ranked query id ``""``, a ranking holding a unit twice or a unit id ``""`` ranked or
    labeled (a unit in conflict is not in the qrels)."""
    judged = {q for q, units in zip(side.query_ids, side.gains, strict=True)
              if any(type(g) is int for g in units.values())}
    ranked = {q: list(r) for q, r in zip(side.query_ids, side.returned_ids, strict=True) if r}
    if not judged or not ranked:
        return False
    return ("" in judged or "" in ranked
            or any(len(set(r)) != len(r) or "" in r for r in ranked.values())
            or any(type(units.get("", None)) is int for units in side.gains))


def assert_coded_equals_the_dict_path(side, threshold: int, gain: str) -> None:
    protocol = EvalProtocol(trec_eval=True, relevance_threshold=threshold, gain=gain)
    coded = numbers._compat_side_coded(side, PARSED, protocol)
    dicts = numbers._compat_side_from_dicts(side, MEASURES, threshold, gain)
    assert (coded is None) == must_be_judged(side)
    if coded is not None and coded[0]:
        assert coded[0] == dicts[0]  # values (==, so bit for bit) and query counts


@settings(deadline=None, max_examples=60, suppress_health_check=[HealthCheck.too_slow])
@given(studies(), st.sampled_from([(1, "linear"), (2, "exponential"), (3, "linear")]))
def test_compat_from_codes_equals_the_dict_path(study, protocol) -> None:
    with tempfile.TemporaryDirectory() as folder:
        columns = store_columns(Path(folder), study)
        for side in columns:
            assert_coded_equals_the_dict_path(side, *protocol)


@settings(deadline=None, max_examples=60, suppress_health_check=[HealthCheck.too_slow])
@given(studies(odd_ids=True))
def test_codes_decline_what_the_dict_path_must_judge(study) -> None:
    """A repeated unit or an empty id: the codes decline, and the numbers are the dict
    path's."""
    with tempfile.TemporaryDirectory() as folder:
        columns = store_columns(Path(folder), study)
        for side in columns:
            assert_coded_equals_the_dict_path(side, 1, "linear")
        rows, notes = numbers.trec_eval_compat(columns, PARSED, 1, "linear")
        expected = [numbers._compat_side_coded(side, PARSED, EvalProtocol(trec_eval=True))
                    or numbers._compat_side_from_dicts(side, MEASURES, 1, "linear")
                    for side in columns]
        assert [(r.value_a, r.n_queries_a, r.value_b, r.n_queries_b) for r in rows] == [
            (*expected[0][0].get(m, (None, 0)), *expected[1][0].get(m, (None, 0)))
            for m in MEASURES]
        assert notes == list(dict.fromkeys(expected[0][1] + expected[1][1]))


def test_the_odd_cases_reach_the_dict_path(tmp_path: Path) -> None:
    """Each odd case alone: the codes decline it (so the dict path judges it)."""
    labels = [("q1", "d1", 1, "ann"), ("q2", "d2", 2, "ann")]
    cases = {
        "repeated unit": [("q1", 1, "d1", 2.0), ("q1", 2, "d1", 1.0), ("q2", 1, "d2", 1.0)],
        "empty unit id": [("q1", 1, "", 2.0), ("q2", 1, "d2", 1.0)],
        "empty query id": [("", 1, "d1", 2.0), ("q2", 1, "d2", 1.0)],
    }
    protocol = EvalProtocol(trec_eval=True)
    for i, (case, rows) in enumerate(cases.items()):
        study = ([(3, rows), (3, [("q1", 1, "d1", 1.0)])],
                 labels + ([("", "d1", 1, "ann")] if case == "empty query id" else []))
        side = store_columns(tmp_path / str(i), study)[0]
        assert numbers._compat_side_coded(side, PARSED, protocol) is None, case


@pytest.mark.needs_shared
def test_trec_eval_test_data_from_codes_equals_the_named_paths(tmp_path: Path) -> None:
    """trec_eval's own test run and qrels, stored (run B: half of each ranking): codes,
    and dicts agree."""
    folder = require_shared(TREC_EVAL_DATA)
    qrels = read_qrels(folder / "qrels.test")
    run = read_run(folder / "results.test")
    runs = [(1000, [(q, rank, u, 0.0) for q, ranking in run.doc_ids.items()
                    for rank, u in enumerate(ranking[: len(ranking) // cut], 1)])
            for cut in (1, 2)]
    events = [(q, u, g, "ann") for q, units in qrels.doc_ids.items()
              for u, g in zip(units, qrels.gains[q], strict=True) if 0 <= g <= 4]
    columns = store_columns(tmp_path, (runs, events))
    for side in columns:
        for threshold, gain in ((1, "linear"), (2, "exponential")):
            assert_coded_equals_the_dict_path(side, threshold, gain)
        assert numbers._compat_side_coded(side, PARSED, EvalProtocol(trec_eval=True))
