"""The file side of trec_eval compatibility, and qrels/runs given as dicts or DataFrames.

* run lines with text after the tag: refused by default, read as trec_eval reads
  them (the text ignored, the lines counted in a note) with ``extra_columns``;
* trec_eval's query scope: run queries without qrels are ignored, qrels queries
  without results are ignored unless ``-c`` (all queries) counts them;
* dicts and DataFrames follow the file rules: same ranking, tied pairs, errors.
"""

from types import MappingProxyType

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalcore.io.errors import InputErrors
from evalcore.io.text_lines import decode_source
from evalcore.io.trec import parse_qrels, parse_run
from evalcore.io.trec_eval_scope import scope_of_ids
from evalcore.io.trec_mappings import judged_from_mapping, ranked_from_mapping


def run_text(text: str, **kw):
    return parse_run(decode_source(text.encode(), "run.txt"), **kw)


def qrels_text(text: str):
    return parse_qrels(decode_source(text.encode(), "qrels.txt"))


def messages(fn, *args, **kw) -> list[str]:
    with pytest.raises(InputErrors) as exc:
        fn(*args, **kw)
    return [str(e) for e in exc.value.errors]


# --- trailing columns ----------------------------------------------------------------------


TRUNC = "1 Q0 a 1 2.0 tag more junk at\n1 Q0 b 2 3.0 tag\n2\tQ0\tc\t1\t1.5\ttag\t# end\n"


def test_text_after_the_tag_is_refused_by_default_with_the_line():
    assert messages(run_text, TRUNC) == [
        "run.txt:1: expected 6 fields (query_id Q0 doc_id rank score tag), got 9 "
        "(fields are separated by spaces or tabs)",
        "run.txt:3: expected 6 fields (query_id Q0 doc_id rank score tag), got 8 "
        "(fields are separated by spaces or tabs)",
    ]


def test_text_after_the_tag_is_ignored_and_counted_when_asked():
    run = run_text(TRUNC, extra_columns=True)
    assert run.doc_ids == {"1": ["b", "a"], "2": ["c"]}
    assert run.scores_for("1") == [3.0, 2.0]
    assert run.tags == ["tag"]
    assert run.extra_column_lines == 2
    assert run.notes == [
        "run.txt: 2 line(s) have text after the tag; it was ignored, as trec_eval ignores it"
    ]


def test_extra_columns_still_needs_six_fields_and_a_number():
    text = "1 Q0 a 1 2.0\n1 Q0 b 2 x tag extra\n"
    assert messages(run_text, text, extra_columns=True) == [
        "run.txt:1: expected 6 fields (query_id Q0 doc_id rank score tag), got 5 "
        "(fields are separated by spaces or tabs)",
        "run.txt:2: score: must be a finite number, got 'x' "
        "(the fifth field is the score; items are ranked by it)",
    ]


def test_extra_columns_reads_plain_files_the_same():
    plain = "1 Q0 a 1 2.0 t\n1 Q0 b 2 2.0 t\n2 Q0 c 1 1.0 t\n"
    a, b = run_text(plain), run_text(plain, extra_columns=True)
    assert a.doc_ids == b.doc_ids and a.tied_score_pairs == b.tied_score_pairs == 1
    assert b.extra_column_lines == 0 and b.notes == []


# --- query scope -----------------------------------------------------------------------------


def test_trec_eval_scope_keeps_the_intersection_and_names_what_it_ignores():
    qrels = qrels_text("1 0 a 1\n2 0 b 1\n3 0 c 0\n")
    run = run_text("1 Q0 a 1 1 t\n3 Q0 c 1 1 t\n9 Q0 z 1 1 t\n10 Q0 z 1 1 t\n")
    scope = scope_of_ids(set(qrels.doc_ids), set(run.doc_ids), all_queries=False)
    assert scope.query_ids == ["1", "3"]
    assert scope.notes == [
        "2 run queries without qrels ignored, as trec_eval ignores them: 10, 9",
        "1 qrels query without results ignored, as trec_eval ignores them without -c "
        "(--trec-eval-all-queries counts them as 0): 2",
    ]


def test_trec_eval_scope_with_all_queries_counts_every_qrels_query():
    qrels = qrels_text("1 0 a 1\n2 0 b 1\n")
    run = run_text("1 Q0 a 1 1 t\n7 Q0 z 1 1 t\n")
    scope = scope_of_ids(set(qrels.doc_ids), set(run.doc_ids), all_queries=True)
    assert scope.query_ids == ["1", "2"]
    assert scope.notes[1] == "1 qrels query without results counted as 0 (trec_eval -c): 2"


def test_scope_notes_name_at_most_five_queries():
    qrels = qrels_text("".join(f"q{i} 0 a 1\n" for i in range(8)))
    run = run_text("x Q0 a 1 1 t\n")
    note = scope_of_ids(set(qrels.doc_ids), set(run.doc_ids), all_queries=False).notes[-1]
    assert note.endswith("q0, q1, q2, q3, q4, ... (3 more)")


# --- dicts and DataFrames ----------------------------------------------------------------


def test_dict_run_is_ranked_as_trec_eval_ranks_a_file():
    as_dict = ranked_from_mapping({"q1": {"a": 1.0, "b": 2, "c": 2.0}, "q2": {"x": -1.5}})
    as_file = run_text("q1 Q0 a 1 1.0 t\nq1 Q0 b 2 2 t\nq1 Q0 c 3 2.0 t\nq2 Q0 x 1 -1.5 t\n")
    assert as_dict.rankings() == as_file.doc_ids == {"q1": ["c", "b", "a"], "q2": ["x"]}
    assert as_dict.tied_score_pairs == as_file.tied_score_pairs == 1
    assert not as_dict.may_repeat  # a dict's keys never repeat a doc


def test_dataframe_input_equals_dict_input():
    frame = pd.DataFrame(
        {"query_id": ["q1", "q1", "q2"], "doc_id": ["a", "b", "x"], "score": [1.0, 2.0, 3.0]}
    )
    run = ranked_from_mapping(frame)
    assert run.rankings() == {"q1": ["b", "a"], "q2": ["x"]} and run.may_repeat
    qframe = pd.DataFrame({"qid": [1, 1], "docno": ["a", "b"], "label": np.array([2, 0])})
    qrels = judged_from_mapping(qframe)
    assert qrels.gains_of == {"1": {"a": 2, "b": 0}} and qrels.label_gain.tolist() == [2, 0]


def test_interleaved_table_rows_are_grouped_and_repeats_follow_the_file_rules():
    frame = pd.DataFrame(
        {
            "query_id": ["q2", "q1", "q2", "q1"],
            "doc_id": ["a", "b", "c", "b"],
            "score": [1.0, 2.0, 3.0, 0.5],
        }
    )
    assert ranked_from_mapping(frame).rankings() == {"q2": ["c", "a"], "q1": ["b", "b"]}
    qframe = pd.DataFrame(
        {
            "query_id": ["q2", "q1", "q2", "q1"],
            "doc_id": ["a", "b", "c", "b"],
            "relevance": [1, 2, 0, 3],
        }
    )
    qrels = judged_from_mapping(qframe)
    assert qrels.gains_of == {"q2": {"a": 1, "c": 0}, "q1": {"b": 3}}
    assert qrels.query_ids == ["q2", "q1"] and qrels.duplicate_reference.tolist() == [False, True]
    assert qrels.notes == [
        "qrels (DataFrame):4: query q1 doc b has gain 3 but line 2 gave 2; "
        "both labels kept, so the query is duplicate_reference"
    ]


def test_pyarrow_tables_are_read_as_dataframes_are():
    pa = pytest.importorskip("pyarrow")
    table = pa.table(
        {"query_id": ["q1", "q1", "q2"], "doc_id": ["a", "b", "x"], "score": [1.0, 2.0, 3.0]}
    )
    assert ranked_from_mapping(table).rankings() == {"q1": ["b", "a"], "q2": ["x"]}
    qtable = pa.table({"qid": [1, 1], "docno": ["a", "b"], "relevance": [2, 7]})
    assert messages(judged_from_mapping, qtable) == [
        "qrels (Table): row 1 (relevance): gain 7 is outside 0..4 "
        "(map it with gain_map={7: N}, N in 0..4)"
    ]
    assert judged_from_mapping(qtable, {7: 4}).gains_of == {"1": {"a": 2, "b": 4}}


def test_gains_are_checked_like_a_file_and_every_error_is_named():
    bad = {"q1": {"a": True, "b": 2.5, "c": "3", "d": 7, "e": -1}}
    assert messages(judged_from_mapping, bad) == [
        "qrels (dict): query 'q1' doc 'a': gain must be an integer, got True "
        "(gains are integers 0..4)",
        "qrels (dict): query 'q1' doc 'b': gain must be an integer, got 2.5 "
        "(gains are integers 0..4)",
        "qrels (dict): query 'q1' doc 'c': gain must be an integer, got '3' "
        "(gains are integers 0..4)",
        "qrels (dict): query 'q1' doc 'd': gain 7 is outside 0..4 "
        "(map it with gain_map={7: N}, N in 0..4)",
        "qrels (dict): query 'q1' doc 'e': gain -1 is outside 0..4 "
        "(map it with gain_map={-1: N}, N in 0..4)",
    ]


MISSING = "gain is missing, got {} (give it a gain 0..4 or leave the row out)"


def test_a_missing_gain_in_a_dataframe_names_only_its_rows():
    # one NaN makes pandas store the column as floats: the other rows are still integers
    frame = pd.DataFrame(
        {
            "query_id": ["q1", "q1", "q2", "q2"],
            "doc_id": ["a", "b", "x", "y"],
            "relevance": [2, np.nan, 1, 0],
        }
    )
    assert frame["relevance"].dtype.kind == "f"
    assert messages(judged_from_mapping, frame) == [
        "qrels (DataFrame): row 1 (relevance): " + MISSING.format("nan")
    ]
    dropped = frame.dropna()  # still a float column
    assert dropped["relevance"].dtype.kind == "f"
    assert judged_from_mapping(dropped).gains_of == {"q1": {"a": 2}, "q2": {"x": 1, "y": 0}}
    assert judged_from_mapping(dropped, {2: 4}).gains_of == {"q1": {"a": 4}, "q2": {"x": 1, "y": 0}}
    nullable = frame.astype({"relevance": "Int64"})  # pandas' integers with gaps
    assert messages(judged_from_mapping, nullable) == [
        "qrels (DataFrame): row 1 (relevance): " + MISSING.format("nan")
    ]
    objects = frame.assign(relevance=pd.Series([2, None, 1, 0], dtype=object))
    assert messages(judged_from_mapping, objects) == [
        "qrels (DataFrame): row 1 (relevance): " + MISSING.format("None")
    ]


def test_a_float_column_keeps_refusing_what_is_not_a_whole_number():
    frame = pd.DataFrame(
        {
            "query_id": ["q1"] * 5,
            "doc_id": list("abcde"),
            "relevance": [2.0, 2.5, np.inf, 7.0, np.nan],
        }
    )
    assert messages(judged_from_mapping, frame) == [
        "qrels (DataFrame): row 1 (relevance): gain must be an integer, got 2.5 "
        "(gains are integers 0..4)",
        "qrels (DataFrame): row 2 (relevance): gain must be an integer, got inf "
        "(gains are integers 0..4)",
        "qrels (DataFrame): row 3 (relevance): gain 7 is outside 0..4 "
        "(map it with gain_map={7: N}, N in 0..4)",
        "qrels (DataFrame): row 4 (relevance): " + MISSING.format("nan"),
    ]
    huge = frame.iloc[:1].assign(relevance=[1e300])  # whole, but beyond exact integers
    assert messages(judged_from_mapping, huge) == [
        "qrels (DataFrame): row 0 (relevance): gain must be an integer, got 1e+300 "
        "(gains are integers 0..4)"
    ]


def test_a_missing_gain_in_a_pyarrow_table_names_only_its_rows():
    pa = pytest.importorskip("pyarrow")
    columns = {"qid": ["q1", "q1", "q2"], "docno": ["a", "b", "x"]}
    nulls = pa.table({**columns, "relevance": pa.array([2, None, 1], pa.int64())})
    assert messages(judged_from_mapping, nulls) == [
        "qrels (Table): row 1 (relevance): " + MISSING.format("nan")
    ]
    floats = pa.table({**columns, "relevance": pa.array([2.0, 3.0, 1.0])})
    assert judged_from_mapping(floats).gains_of == {"q1": {"a": 2, "b": 3}, "q2": {"x": 1}}
    assert messages(
        judged_from_mapping,
        floats.drop_columns("relevance").append_column("relevance", pa.array([2.0, 0.5, None])),
    ) == [
        "qrels (Table): row 1 (relevance): gain must be an integer, got 0.5 "
        "(gains are integers 0..4)",
        "qrels (Table): row 2 (relevance): " + MISSING.format("nan"),
    ]


def test_a_dict_reads_gains_by_the_same_rule():
    assert judged_from_mapping({"q1": {"a": 2.0, "b": 1}}).gains_of == {"q1": {"a": 2, "b": 1}}
    assert judged_from_mapping({"q1": {"a": np.float64(3.0)}}).gains_of == {"q1": {"a": 3}}
    assert messages(judged_from_mapping, {"q1": {"a": None, "b": float("nan"), "c": 1}}) == [
        "qrels (dict): query 'q1' doc 'a': " + MISSING.format("None"),
        "qrels (dict): query 'q1' doc 'b': " + MISSING.format("nan"),
    ]


def test_gain_map_applies_to_dicts():
    qrels = judged_from_mapping({"q1": {"a": -1, "b": 7, "c": 2}}, {-1: 0, 7: 4})
    assert qrels.gains_of == {"q1": {"a": 0, "b": 4, "c": 2}}
    assert messages(judged_from_mapping, {"q1": {"a": 7}}, {7: 9}) == [
        "qrels (dict): query 'q1' doc 'a': gain 7 is mapped to 9, outside 0..4 (map it into 0..4)"
    ]


def test_bad_scores_and_ids_in_a_dataframe_name_the_row():
    frame = pd.DataFrame(
        {"query_id": ["q1", None, "q1"], "doc_id": ["a", "b", ""], "score": [np.nan, 1, np.inf]}
    )
    assert messages(ranked_from_mapping, frame) == [
        "run (DataFrame): row 0 (score): score must be a finite number, got nan "
        "(items are ranked by score)",
        "run (DataFrame): row 2 (score): score must be a finite number, got inf "
        "(items are ranked by score)",
        "run (DataFrame): row 1 (query_id): query ID must be a non-empty string, got nan",
        "run (DataFrame): row 2 (doc_id): doc ID must be a non-empty string, got ''",
    ]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (
            [("q1", "a", 1)],
            "qrels: expected a file path, a nested dict, a DataFrame or a pyarrow Table, got list",
        ),
        (
            {"q1": [("a", 1)]},
            "qrels (dict): query 'q1': expected a dict of doc ID -> value, got list",
        ),
        ({}, "qrels (dict): no judgments (give at least one query with one judged doc)"),
        (
            pd.DataFrame({"query_id": ["q"], "doc": ["a"], "relevance": [1]}),
            "qrels (DataFrame): has none of the columns doc_id, docno, docid; its columns are: "
            "query_id, doc, relevance (name the column doc_id)",
        ),
        (
            pd.DataFrame({"query_id": ["q"], "qid": ["q"], "doc_id": ["a"], "relevance": [1]}),
            "qrels (DataFrame): has more than one of the columns query_id, qid, q_id; its columns "
            "are: query_id, qid, doc_id, relevance (name the column query_id)",
        ),
    ],
)
def test_wrong_shapes_say_what_is_expected(value, expected):
    assert messages(judged_from_mapping, value) == [expected]


def test_booleans_and_floats_are_not_scores_or_ids():
    assert messages(ranked_from_mapping, {"q1": {"a": True, 2.5: 1.0}}) == [
        "run (dict): query 'q1' doc 'a': score must be a finite number, got True "
        "(items are ranked by score)",
        "run (dict): query 'q1' doc 2.5: doc ID must be a non-empty string, got 2.5",
    ]


@settings(max_examples=60, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(["q1", "q2", "q3"]),
        st.dictionaries(
            st.sampled_from(list("abcdef")), st.sampled_from([0.0, 0.5, 1.0, 2.0]), min_size=1
        ),
        min_size=1,
    )
)
def test_dict_runs_rank_exactly_as_the_same_run_written_as_a_file(run):
    text = "".join(f"{q} Q0 {d} 0 {s!r} t\n" for q, docs in run.items() for d, s in docs.items())
    as_file, as_dict = run_text(text), ranked_from_mapping(run)
    assert as_dict.rankings() == as_file.doc_ids
    assert as_dict.tied_score_pairs == as_file.tied_score_pairs


def test_a_score_beyond_float_range_is_an_error_not_a_crash():
    assert messages(ranked_from_mapping, {"q1": {"a": 10**400, "b": 1}}) == [
        f"run (dict): query 'q1' doc 'a': score must be a finite number, got {'1' + '0' * 56}... "
        "(items are ranked by score)",
    ]


def test_integer_keys_that_read_alike_follow_the_file_rules():
    """{1: ..., "1": ...}: both are query "1", as in a file, and a doc judged twice with two
    gains is kept twice (duplicate_reference), never silently overwritten."""
    qrels = judged_from_mapping({1: {"a": 1}, "1": {"a": 2, 7: 0}})
    assert qrels.query_ids == ["1"] and set(qrels.gains_of["1"]) == {"a", "7"}
    assert qrels.duplicate_reference.tolist() == [True]
    assert "both labels kept, so the query is duplicate_reference" in qrels.notes[0]
    plain = judged_from_mapping({"q1": {"a": 1, "b": 0}, "q2": {}, "q3": {"c": 2}})
    assert plain.gains_of == {"q1": {"a": 1, "b": 0}, "q3": {"c": 2}}
    assert plain.label_gain.tolist() == [1, 0, 2] and not plain.duplicate_reference.any()
    run = ranked_from_mapping({1: {"a": 1.0}, "1": {"a": 2.0, 7: 0.5}})
    assert run.rankings() == {"1": ["a", "a", "7"]} and run.may_repeat


def test_dict_qrels_are_copied_unless_asked_not_to_and_any_mapping_is_read():
    inner = {"a": 2, "b": np.int64(1)}
    qrels = judged_from_mapping({"q1": inner, "q2": MappingProxyType({"c": 3})})
    inner["a"] = 0
    assert qrels.gains_of == {"q1": {"a": 2, "b": 1}, "q2": {"c": 3}}
    assert {type(g) for labels in qrels.gains_of.values() for g in labels.values()} == {int}
    plain = {"q1": {"a": 1}}
    assert judged_from_mapping(plain, copy=False).gains_of["q1"] is plain["q1"]
    assert judged_from_mapping(plain).gains_of["q1"] is not plain["q1"]
    run = ranked_from_mapping({"q1": MappingProxyType({"a": 1.0, "b": 2.0}), "q2": {}})
    assert run.rankings() == {"q1": ["b", "a"]}


def test_integer_ids_in_an_object_column_are_their_decimal_text():
    ids = pd.Series([1, 1, 2], dtype=object)
    qframe = pd.DataFrame({"query_id": ids, "doc_id": ["a", "b", "c"], "relevance": [2, 0, 1]})
    assert judged_from_mapping(qframe).gains_of == {"1": {"a": 2, "b": 0}, "2": {"c": 1}}
    frame = pd.DataFrame({"query_id": ids, "doc_id": pd.Series([5, 6, 7], dtype=object)})
    run = ranked_from_mapping(frame.assign(score=[1.0, 2.0, 0.5]))
    assert run.rankings() == {"1": ["6", "5"], "2": ["7"]}
