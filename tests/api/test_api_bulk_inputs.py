"""Qrels and runs in memory (dicts, DataFrames, pyarrow Tables, ``evalcore.Qrels``) give the
report the observation path gives for the same qrels and run written as TREC files.

The observation path is the reference: the files read by the careful reader, one
:class:`~evalcore.contract.observation.Observation` per query
(``tests/trec_observations.py``), evaluated by the metric computer.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import evalcore
from evalcore.compute.evaluate import evaluate as compute_evaluate
from evalcore.contract.evaluation_protocol import EvalProtocol
from evalcore.io.errors import InputErrors
from evalcore.io.text_lines import decode_source
from evalcore.io.trec import parse_qrels, parse_run
from evalcore.io.trec_eval_scope import scope_of_ids
from evalcore.io.trec_mappings import ranked_from_mapping
from tests.trec_observations import trec_observations

QUERIES = ["q1", "q2", "q10", "Q3", "7"]
DOCS = list("abcdefgh")
MEASURES = ["P@3", "nDCG@5", "R@4", "RR@5", "AP@5", "Judged@3", "P(rel=2)@2"]

qrels_dicts = st.dictionaries(
    st.sampled_from(QUERIES),
    st.dictionaries(st.sampled_from(DOCS), st.integers(0, 4), max_size=6),
    min_size=1,
).filter(lambda q: any(q.values()))
run_dicts = st.dictionaries(
    st.sampled_from(QUERIES),
    st.dictionaries(
        st.sampled_from(DOCS), st.sampled_from([-1.0, 0.0, 0.5, 1.0, 2.0, 3.25]), max_size=8
    ),
    min_size=1,
).filter(lambda r: any(r.values()))


def as_files(qrels: dict, run: dict) -> tuple:
    """The same qrels and run as TREC files, read by the careful reader."""
    qtext = "".join(f"{q} 0 {d} {g}\n" for q, docs in qrels.items() for d, g in docs.items())
    rtext = "".join(f"{q} Q0 {d} 1 {s!r} t\n" for q, docs in run.items() for d, s in docs.items())
    return (
        parse_qrels(decode_source(qtext.encode(), "qrels.txt")),
        parse_run(decode_source(rtext.encode(), "run.txt")),
    )


def reference(
    qrels: dict, run: dict, measures: list[str], *, trec_eval: bool, complete: bool = False
):
    """The observation path's report for the same inputs."""
    q, r = as_files(qrels, run)
    k = max(evalcore.parse_measure(m).k for m in measures)
    observations = trec_observations(q, r, k, complete=complete or trec_eval)
    if trec_eval:
        keep = set(scope_of_ids(set(q.doc_ids), set(r.doc_ids), all_queries=False).query_ids)
        observations = [o for o in observations if o.query_id in keep]
    parsed = [evalcore.parse_measure(m) for m in measures]
    return compute_evaluate(observations, EvalProtocol(trec_eval=trec_eval), measures=parsed), r


def frame(mapping: dict, value: str) -> pd.DataFrame:
    rows = [(q, d, v) for q, docs in mapping.items() for d, v in docs.items()]
    return pd.DataFrame(rows, columns=["query_id", "doc_id", value])


def same(result, expected) -> None:
    report = result.report
    assert report.queries == expected.queries
    assert report.aggregates == expected.aggregates
    assert report.diagnostics.tied_score_pairs == expected.diagnostics.tied_score_pairs
    assert report.diagnostics.returned_duplicates == expected.diagnostics.returned_duplicates


@settings(max_examples=80, deadline=None)
@given(
    qrels_dicts,
    run_dicts,
    st.lists(st.sampled_from(MEASURES), min_size=1, max_size=3, unique=True),
    st.booleans(),
    st.booleans(),
)
def test_every_in_memory_form_gives_the_observation_paths_report(
    qrels, run, measures, trec_eval, complete
):
    expected, read_run = reference(qrels, run, measures, trec_eval=trec_eval, complete=complete)
    expected = expected.model_copy(
        update={
            "diagnostics": expected.diagnostics.model_copy(
                update={"tied_score_pairs": read_run.tied_score_pairs}
            )
        }
    )
    options = {"measures": measures, "trec_eval": trec_eval, "complete": complete}
    prepared = evalcore.Qrels(qrels)
    for q, r in [
        (qrels, run),
        (frame(qrels, "relevance"), frame(run, "score")),
        (
            pa.Table.from_pandas(frame(qrels, "relevance")),
            pa.Table.from_pandas(frame(run, "score")),
        ),
        (prepared, run),
        (prepared, frame(run, "score")),
        # gains stored as floats (as pandas stores an integer column with gaps) and in a dict
        (frame(qrels, "relevance").astype({"relevance": float}), frame(run, "score")),
        (frame(qrels, "relevance").astype({"relevance": float}), run),
        (pa.Table.from_pandas(frame(qrels, "relevance").astype({"relevance": float})), run),
        ({q: {d: float(g) for d, g in docs.items()} for q, docs in qrels.items()}, run),
    ]:
        same(evalcore.evaluate(q, r, **options), expected)
    same(prepared.evaluate(run, **options), expected)


@settings(max_examples=40, deadline=None)
@given(
    qrels_dicts,
    st.lists(
        st.tuples(
            st.sampled_from(QUERIES[:3]),
            st.sampled_from(DOCS[:4]),
            st.sampled_from([0.0, 1.0, 2.0]),
        ),
        min_size=1,
        max_size=12,
    ),
)
def test_table_rows_that_repeat_a_doc_keep_every_position_as_a_file_does(qrels, rows):
    """A table (unlike a dict) may rank a doc twice for one query, in any row order."""
    table = pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])
    rtext = "".join(f"{q} Q0 {d} 1 {s!r} t\n" for q, d, s in rows)
    q, _ = as_files(qrels, {"q1": {"a": 1.0}})
    r = parse_run(decode_source(rtext.encode(), "run.txt"))
    expected = compute_evaluate(
        trec_observations(q, r, 5, complete=False),
        EvalProtocol(),
        measures=[evalcore.parse_measure("P@5")],
    )
    result = evalcore.evaluate(qrels, table, measures=["P@5"])
    assert result.report.queries == expected.queries
    duplicates = result.report.diagnostics.returned_duplicates
    assert duplicates == expected.diagnostics.returned_duplicates
    assert result.report.aggregates == expected.aggregates


def test_prepared_qrels_are_read_once_and_evaluate_many_runs():
    qrels = evalcore.Qrels({"q1": {"a": 2, "b": 0}, "q2": {"c": 1}})
    assert len(qrels) == 2 and qrels.query_ids == ["q1", "q2"]
    assert repr(qrels) == "Qrels(qrels (dict): 2 queries, 3 judged docs)"
    first = qrels.evaluate({"q1": {"a": 1.0, "b": 0.5}, "q2": {"c": 1.0}}, measures=["P@2"])
    second = qrels.evaluate({"q1": {"b": 1.0}, "q2": {"x": 1.0}}, measures=["P@1"], trec_eval=True)
    assert first.aggregates["P@2"] == pytest.approx(0.5)
    assert second.aggregates["P@1"] == 0.0
    # Honest by default: an unjudged doc leaves the value unknown, with bounds.
    open_value = qrels.evaluate({"q1": {"b": 1.0}, "q2": {"x": 1.0}}, measures=["P@1"])
    assert open_value.aggregates["P@1"].reasons == {"unlabeled_returned": 1}
    assert (open_value.aggregates["P@1"].lower, open_value.aggregates["P@1"].upper) == (0.0, 0.5)


def test_prepared_qrels_are_checked_at_the_edge_with_the_readers_messages(tmp_path):
    with pytest.raises(InputErrors) as exc:
        evalcore.Qrels({"q1": {"a": 9, "": 1}})
    assert [str(e) for e in exc.value.errors] == [
        "qrels (dict): query 'q1' doc 'a': gain 9 is outside 0..4 "
        "(map it with gain_map={9: N}, N in 0..4)",
        "qrels (dict): query 'q1' doc '': doc ID must be a non-empty string, got ''",
    ]
    with pytest.raises(InputErrors, match=r"query 3.5: query ID must be a non-empty string"):
        evalcore.Qrels({3.5: {"a": 1}})
    assert evalcore.Qrels({"q1": {"a": 9}}, gain_map={9: 4}).judged.gains_of == {"q1": {"a": 4}}
    path = tmp_path / "qrels.txt"
    path.write_text("q1 0 a 1\n")
    from_file = evalcore.Qrels(path)
    assert from_file.evaluate({"q1": {"a": 1.0}}, measures=["P@1"]).aggregates["P@1"] == 1.0
    with pytest.raises(ValueError, match=r"give it to evalcore.Qrels\(..., gain_map=...\)"):
        evalcore.evaluate(from_file, {"q1": {"a": 1.0}}, measures=["P@1"], gain_map={9: 4})
    table_run = pd.DataFrame({"query_id": ["q1"], "doc_id": ["a"], "score": [1.0]})
    with pytest.raises(ValueError, match=r"give it to evalcore.Qrels\(..., gain_map=...\)"):
        evalcore.evaluate(from_file, table_run, measures=["P@1"], gain_map={9: 4})


def test_run_tables_name_the_wrong_row_and_column():
    table = pa.table({"qid": ["q1", "q1"], "docno": ["a", None], "score": [1.0, float("nan")]})
    with pytest.raises(InputErrors) as exc:
        evalcore.evaluate({"q1": {"a": 1}}, table, measures=["P@1"])
    assert [str(e) for e in exc.value.errors] == [
        "run (Table): row 1 (score): score must be a finite number, got nan "
        "(items are ranked by score)",
        "run (Table): row 1 (docno): doc ID must be a non-empty string, got None",
    ]


def test_a_qrels_table_with_a_missing_gain_names_that_row_and_evaluates_once_dropped():
    qrels = pd.DataFrame(
        {"query_id": ["q1"] * 3, "doc_id": ["a", "b", "c"], "relevance": [2, None, 0]}
    )
    run = pd.DataFrame({"query_id": ["q1"] * 2, "doc_id": ["c", "a"], "score": [2.0, 1.0]})
    for make in (
        lambda: evalcore.evaluate(qrels, run, measures=["P@2"]),
        lambda: evalcore.Qrels(qrels),
    ):
        with pytest.raises(InputErrors) as exc:
            make()
        assert [str(e) for e in exc.value.errors] == [
            "qrels (DataFrame): row 1 (relevance): gain is missing, got nan "
            "(give it a gain 0..4 or leave the row out)"
        ]
    dropped = qrels.dropna()
    assert evalcore.evaluate(dropped, run, measures=["RR@2"]).aggregates["RR@2"] == 0.5
    assert evalcore.Qrels(dropped).judged.gains_of == {"q1": {"a": 2, "c": 0}}


def test_numpy_gains_and_scores_in_dicts_are_numbers():
    qrels = {"q1": {"a": np.int64(2), "b": np.int8(0)}}
    run = {"q1": {"a": np.float32(0.5), "b": np.float64(1.5)}}
    result = evalcore.evaluate(qrels, run, measures=["RR@2"])
    assert result.aggregates["RR@2"] == 0.5


def test_a_table_is_read_once_joined_as_columns_when_clean_and_named_row_by_row_when_wrong():
    """Clean tables are joined as columns (no Python object per row); one the words cannot
    hold (a NUL) is joined as Python rows; a wrong one is named by its rows."""
    from evalcore.io.ranked import PackedUnits
    from evalcore.io.trec import WordUnits
    from evalcore.io.trec_mappings import table_input

    qrels = pd.DataFrame(
        {"query_id": ["q1", "q1", "q2"], "doc_id": ["a", "b", "c"], "relevance": [2, 0, 1]}
    )
    run = pd.DataFrame(
        {
            "query_id": ["q2", "q1", "q1", "q3"],
            "doc_id": ["c", "a", "x", "z"],
            "score": [1.0, 1.0, 2.0, 0.5],
        }
    )
    protocol = EvalProtocol()
    taken = table_input(qrels, run, 2, complete=False, protocol=protocol)
    assert isinstance(taken.batch.top_units, WordUnits)
    assert list(taken.batch.top_units) == [["x", "a"], ["c"], ["z"]]
    prepared = evalcore.Qrels(qrels)
    taken = table_input(
        prepared.judged, pa.Table.from_pandas(run), 2, complete=False, protocol=protocol
    )
    assert isinstance(taken.batch.top_units, WordUnits)
    nul = table_input(
        qrels, run.assign(doc_id=["c", "a", "x\0y", "z"]), 2, complete=False, protocol=protocol
    )
    assert isinstance(nul.batch.top_units, PackedUnits)
    assert list(nul.batch.top_units) == [["x\0y", "a"], ["c"], ["z"]]
    for odd_run in (
        run.assign(doc_id=["c", "a", "", "z"]),
        run.assign(score=[1.0, float("nan"), 2.0, 0.5]),
        run.assign(doc_id=["c", "a", None, "z"]),
    ):
        with pytest.raises(InputErrors, match=r"run \(DataFrame\): row [12] "):
            table_input(qrels, odd_run, 2, complete=False, protocol=protocol)
    repeated = pd.concat([qrels, qrels.iloc[:1]])  # the file rules' notes, naming the rows
    taken = table_input(repeated, run, 2, complete=False, protocol=protocol)
    assert taken.notes == [
        "qrels (DataFrame):4: query q1 doc a repeats line 1 with the same gain 2; counted once"
    ]
    with pytest.raises(InputErrors, match=r"run \(DataFrame\): row 2 \(doc_id\): doc ID must"):
        evalcore.evaluate(qrels, run.assign(doc_id=["c", "a", "", "z"]), measures=["P@1"])
    nul = evalcore.evaluate(qrels, run.assign(doc_id=["c", "a", "x\0y", "z"]), measures=["P@2"])
    assert nul.report.queries[0].metrics["P@2"].blocking_ids == ["x\0y"]


@settings(max_examples=150, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(QUERIES),
        st.dictionaries(
            st.sampled_from([*DOCS, "é", "B", "aa"]),
            st.sampled_from([-1.0, 0.0, 0.5, 1.0, 2, 3.25]),
            max_size=9,
        ),
        min_size=1,
    ).filter(lambda r: any(r.values())),
    st.integers(0, 10),
)
def test_dict_runs_held_to_a_depth_are_their_whole_rankings_cut_at_that_depth(run, depth):
    fast, general = ranked_from_mapping(run, depth=depth), ranked_from_mapping(run)
    assert fast.tied_score_pairs == general.tied_score_pairs  # over whole rankings
    want = {q: ranking[:depth] if depth else ranking for q, ranking in general.rankings().items()}
    assert fast.rankings() == want
    # only the kept positions are held (memory grows with what the measures read)
    assert fast.order is not None and fast.order.size == sum(map(len, want.values()))


def test_dict_runs_of_many_lengths_rank_in_one_sort_as_the_file_reader_does():
    run = {f"q{i}": {f"d{j}": float(j % 3) for j in range(i + 1)} for i in range(80)}
    text = "".join(f"{q} Q0 {d} 1 {s!r} t\n" for q, docs in run.items() for d, s in docs.items())
    as_file, as_dict = parse_run(decode_source(text.encode(), "run.txt")), ranked_from_mapping(run)
    assert as_dict.rankings() == as_file.doc_ids
    assert as_dict.tied_score_pairs == as_file.tied_score_pairs > 0


@pytest.mark.parametrize(
    "run",
    [
        {"q1": {"a": True}},
        {"q1": {"": 1.0}},
        {"q1": {1: 1.0}},
        {1: {"a": 1.0}},
        {"q1": {"a": float("nan")}},
        {"q1": {"a": "1.0"}},
        {"q1": {"a": np.float32(1.0)}},
        {"q1": [("a", 1.0)]},
        {"q1": {"a": 10**400}},
        {"q1": {}},
    ],
)
def test_dict_runs_with_anything_unusual_are_named_or_read_alike_at_any_depth(run):
    try:
        whole = ranked_from_mapping(run)
    except InputErrors as error:
        with pytest.raises(InputErrors) as held:
            ranked_from_mapping(run, depth=1)
        assert [str(e) for e in held.value.errors] == [str(e) for e in error.errors]
        return
    held = ranked_from_mapping(run, depth=1)
    assert held.rankings() == {q: ranking[:1] for q, ranking in whole.rankings().items()}
