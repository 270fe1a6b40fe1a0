"""TREC qrels/run readers: validation, trec_eval ordering, tied pairs, joining into observations."""

from collections import defaultdict
from unittest.mock import patch

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from shared_data import require_shared

from evalcore.compute.evaluate import evaluate
from evalcore.contract.evaluation_protocol import EvalProtocol
from evalcore.io import trec
from evalcore.io.errors import InputErrors
from evalcore.io.text_lines import decode_source
from evalcore.io.trec import (
    parse_gain_map,
    parse_qrels,
    parse_run,
    read_qrels,
    read_run,
)
from tests.trec_observations import trec_columns, trec_diagnostics, trec_observations


def src(text: str, name: str = "f.txt"):
    return decode_source(text.encode("utf-8"), name)


def run_of(text: str):
    return parse_run(src(text, "run.txt"))


def qrels_of(text: str, gain_map=None):
    return parse_qrels(src(text, "qrels.txt"), gain_map)


def errors(fn, *args) -> list[str]:
    with pytest.raises(InputErrors) as info:
        fn(*args)
    return [str(e) for e in info.value.errors]


# --- runs ----------------------------------------------------------------------------------


def test_run_is_ordered_by_score_then_doc_id_descending_ignoring_rank():
    run = run_of(
        "q1 Q0 a 1 1.0 t\n"
        "q1 Q0 c 2 3.0 t\n"
        "q1 Q0 b 3 1.0 t\n"
        "q1 Q0 B 4 1.0 t\n"  # 'B' < 'a' < 'b' in byte order
        "q1 Q0 d 5 2.5 t\n"
    )
    assert run.doc_ids == {"q1": ["c", "d", "b", "a", "B"]}
    assert run.scores_for("q1") == [3.0, 2.5, 1.0, 1.0, 1.0]
    assert run.tied_score_pairs == 3  # three items tied at 1.0: 3 pairs


def test_tied_pairs_are_counted_within_queries_only():
    run = run_of("1 Q0 a 1 5 t\n1 Q0 b 2 5 t\n2 Q0 c 1 5 t\n2 Q0 d 1 4 t\n2 Q0 e 1 4 t\n")
    assert run.tied_score_pairs == 2
    assert trec_diagnostics(qrels_of("1 0 a 1\n"), run).tied_score_pairs == 2


def test_interleaved_queries_are_regrouped_in_first_appearance_order():
    run = run_of("2 Q0 x 1 1 t\n1 Q0 y 1 3 t\n2 Q0 z 2 2 t\n1 Q0 w 2 4 t\n")
    assert list(run.doc_ids) == ["2", "1"]
    assert run.doc_ids == {"2": ["z", "x"], "1": ["w", "y"]}
    assert run.scores_for("1") == [4.0, 3.0] and run.scores_for("nope") == []


def test_run_field_and_score_errors_are_all_reported_with_lines():
    text = (
        "q1 Q0 a 1 1.0 t\nq1 Q0 b 2 t\nq1 Q0 c 3 abc t\n\nq1 Q0 d 4 inf t\nq1 Q0 e 5 1.0 t extra\n"
    )
    assert errors(run_of, text) == [
        "run.txt:2: expected 6 fields (query_id Q0 doc_id rank score tag), got 5 "
        "(fields are separated by spaces or tabs)",
        "run.txt:3: score: must be a finite number, got 'abc' "
        "(the fifth field is the score; items are ranked by it)",
        "run.txt:5: score: must be a finite number, got 'inf' "
        "(the fifth field is the score; items are ranked by it)",
        "run.txt:6: expected 6 fields (query_id Q0 doc_id rank score tag), got 7 "
        "(fields are separated by spaces or tabs)",
    ]


def test_compensating_short_and_long_lines_are_caught():
    # 5 + 7 fields: the token count is still a multiple of 6.
    text = "q1 Q0 a 1 1.0 t\nq1 Q0 b 2 2.0\nq1 Q0 c 3 3.0 t t2\n"
    assert [e.split(":")[1] for e in errors(run_of, text)] == ["2", "3"]


def test_empty_run_is_an_error():
    assert errors(run_of, "# only a comment\n\n") == [
        "run.txt: no results (a run line is: query_id Q0 doc_id rank score tag)"
    ]


def test_a_comment_line_with_six_words_is_still_a_comment():
    run = run_of("1 Q0 a 1 3 t\n# Q0 b 2 2 t\n1 Q0 c 3 1 t\n")
    assert run.doc_ids == {"1": ["a", "c"]}
    q = qrels_of("#x 0 a 1\n1 0 b 1\n")
    assert q.doc_ids == {"1": ["b"]}


def test_comments_tabs_crlf_and_hash_inside_doc_ids():
    text = "# header\r\n1\tQ0\tdoc#1\t1\t  2.5\tSTD\r\n   # indented comment\r\n1 Q0  doc#2 2 3 STD\r\n"
    run = run_of(text)
    assert run.doc_ids == {"1": ["doc#2", "doc#1"]}


def test_duplicate_doc_in_run_keeps_both_positions():
    run = run_of("1 Q0 a 1 3 t\n1 Q0 b 2 2 t\n1 Q0 a 3 1 t\n")
    assert run.doc_ids["1"] == ["a", "b", "a"]
    assert run.duplicate_ids == 1


def test_several_tags_are_noted():
    run = run_of("1 Q0 a 1 3 t1\n1 Q0 b 2 2 t2\n")
    assert run.tags == ["t1", "t2"]
    assert run.notes == ["run.txt: 2 different run tags: t1, t2"]


def test_non_separator_whitespace_stays_inside_a_doc_id():
    run = run_of("1 Q0 a\u00a0b 1 3 t\n1 Q0 c 2 2 t\n")
    assert run.doc_ids["1"] == ["a\u00a0b", "c"]


def test_invalid_utf8_line_is_reported(tmp_path):
    p = tmp_path / "run.txt"
    p.write_bytes(b"1 Q0 a 1 3 t\n1 Q0 \xc3\x28 2 2 t\n1 Q0 c 3 1 t\n")
    assert errors(read_run, p) == [
        f"{p}:2: not valid UTF-8 (byte 0xc3 at column 6) (save the file as UTF-8)"
    ]


def naive_order(rows: list[tuple[str, str, float]]) -> dict[str, list[str]]:
    """Reference: trec_eval's qsort comparator (score desc, then docno strcmp desc)."""
    by_q: dict[str, list[tuple[float, bytes, str]]] = defaultdict(list)
    for q, d, s in rows:
        by_q[q].append((s, d.encode("utf-8"), d))
    return {q: [d for _, _, d in sorted(items, reverse=True)] for q, items in by_q.items()}


_tok = st.text(
    st.characters(codec="utf-8", exclude_categories=("Cs", "Zs", "Zl", "Zp", "Cc")),
    min_size=1,
    max_size=4,
)


@st.composite
def run_rows(draw):
    # A line whose first field starts with "#" is a comment, so no query ID does.
    qids = draw(
        st.lists(_tok.filter(lambda t: not t.startswith("#")), min_size=1, max_size=4, unique=True)
    )
    rows = []
    for q in qids:
        n = draw(st.integers(1, 8))
        for _ in range(n):
            rows.append((q, draw(_tok), float(draw(st.integers(0, 3)) / 2)))
    if draw(st.booleans()):
        rows = draw(st.permutations(rows))
    return rows


@settings(max_examples=200, deadline=None)
@given(run_rows(), st.booleans(), st.sampled_from([1, 40, 1 << 20]))
def test_ordering_matches_trec_eval_comparator_on_fast_and_slow_paths(rows, add_comment, chunk):
    lines = [f"{q} Q0 {d} {i} {s!r} tag" for i, (q, d, s) in enumerate(rows)]
    if add_comment:  # forces the per-line path for the chunk holding it
        lines.insert(len(lines) // 2, "# comment")
    with patch.object(trec, "BLOCK_BYTES", chunk):  # small chunks: runs span chunks
        run = run_of("\n".join(lines) + "\n")
    expected = naive_order(rows)
    assert run.doc_ids == expected
    ties = 0
    for q in expected:
        counts: dict[float, int] = defaultdict(int)
        for r in rows:
            if r[0] == q:
                counts[r[2]] += 1
        ties += sum(c * (c - 1) // 2 for c in counts.values())
    assert run.tied_score_pairs == ties
    assert run.n_rows == len(rows)


# --- qrels ---------------------------------------------------------------------------------


def test_errors_and_lines_are_right_across_chunks():
    lines = [f"q{i // 3} Q0 d{i} {i} {i / 7!r} t" for i in range(60)]
    lines[10] = "q3 Q0 bad 1 notanumber t"
    lines[40] = "q13 Q0 short 1 2.0"
    lines.insert(25, "")
    with patch.object(trec, "BLOCK_BYTES", 50):
        got = errors(run_of, "\n".join(lines) + "\n")
    assert [e.split(":")[1] for e in got] == ["11", "42"]
    with patch.object(trec, "BLOCK_BYTES", 50):
        q = qrels_of("1 0 a 1\n\n" + "".join(f"1 0 d{i} 1\n" for i in range(30)) + "1 0 a 2\n")
    assert q.notes[-1].startswith("qrels.txt:33: query 1 doc a has gain 2 but line 1 gave 1")


def test_qrels_iteration_column_is_any_token_and_gains_in_file_order():
    q = qrels_of("1 0 a 1\n1 Q0 b 0\n2 x c 4\n")
    assert q.doc_ids == {"1": ["a", "b"], "2": ["c"]}
    assert q.gains == {"1": [1, 0], "2": [4]}


def test_qrels_errors_all_reported():
    text = "1 0 a 1\n1 0 b 5\n1 0 c 2.5\n1 0 d\n1 0 e -1\n1 0 f true\n"
    assert errors(qrels_of, text) == [
        "qrels.txt:2: gain: gain 5 is outside 0..4 (map it with --gain-map '5:N', N in 0..4)",
        "qrels.txt:3: gain: gain 2.5 is not an integer (map it with --gain-map '2.5:N', N in "
        "0..4)",
        "qrels.txt:4: expected 4 fields (query_id iteration doc_id gain), got 3 "
        "(fields are separated by spaces or tabs)",
        "qrels.txt:5: gain: gain -1 is outside 0..4 (map it with --gain-map '-1:N', N in 0..4)",
        "qrels.txt:6: gain: must be an integer, got 'true' (gains are integers 0..4)",
    ]


def test_gain_map_applies_before_the_range_check():
    q = qrels_of("1 0 a -1\n1 0 b 5\n1 0 c 2\n2 0 d -1\n", {-1: 0, 5: 4, 7: 4})
    assert q.gains == {"1": [0, 4, 2], "2": [0]}
    assert q.notes == ["qrels.txt: gain map applied: -1->0 (2 rows), 5->4 (1 rows)"]


def test_repeated_qrels_rows_same_gain_collapse_conflicts_keep_both():
    q = qrels_of("1 0 a 1\n1 0 a 1\n1 0 b 2\n1 0 b 3\n1 0 b 3\n")
    assert q.doc_ids == {"1": ["a", "b", "b"]} and q.gains == {"1": [1, 2, 3]}
    assert (q.collapsed_duplicates, q.conflicting_duplicates) == (2, 1)
    assert q.notes == [
        "qrels.txt:2: query 1 doc a repeats line 1 with the same gain 1; counted once",
        "qrels.txt:4: query 1 doc b has gain 3 but line 3 gave 2; both labels kept, "
        "so the query is duplicate_reference",
        "qrels.txt:5: query 1 doc b repeats line 4 with the same gain 3; counted once",
    ]
    report = evaluate(trec_observations(q, run_of("1 Q0 a 1 1 t\n"), 1, complete=True))
    assert report.queries[0].reasons == ["duplicate_reference"]


def test_qrels_with_comments_read_in_place():
    data = require_shared()
    plain = read_qrels(data / "qrels.test")
    commented = read_qrels(data / "qrels.test.with-comments")
    assert "CR#93E-1860" in commented.doc_ids["301"]
    assert sum(map(len, plain.doc_ids.values())) == plain.n_rows == 3681


def test_empty_qrels_is_an_error():
    assert errors(qrels_of, "\n") == [
        "qrels.txt: no judgments (a qrels line is: query_id iteration doc_id gain)"
    ]


def test_parse_gain_map():
    assert parse_gain_map("-1:0, 5:4,") == {-1: 0, 5: 4}
    for bad, msg in [
        ("5", "not FROM:TO"),
        ("a:1", "not FROM:TO"),
        ("5:7", "into 0..4"),
        ("1:0,1:2", "mapped twice"),
        ("", "empty gain map"),
    ]:
        with pytest.raises(ValueError, match=msg):
            parse_gain_map(bad)


# --- joining -------------------------------------------------------------------------------


def test_join_rules_sorted_queries_missing_run_is_zero_missing_qrels_is_missing_reference():
    qrels = qrels_of("b 0 d1 1\nb 0 d2 0\na 0 d3 2\n")
    run = run_of("c Q0 x 1 1 t\nb Q0 d2 1 2 t\nb Q0 d1 2 1 t\n")
    cols = trec_columns(qrels, run, complete=True)
    assert cols.query_ids == ["a", "b", "c"]
    assert cols.population_complete == [True, True, False]
    obs = trec_observations(qrels, run, 2, complete=True)
    assert [o.returned_ids for o in obs] == [[], ["d2", "d1"], ["x"]]
    assert obs[1].scores == [2.0, 1.0]
    report = evaluate(obs)
    by_q = {q.query_id: q for q in report.queries}
    assert by_q["a"].metrics["precision"].value == 0.0  # a real zero, not missing
    assert by_q["b"].metrics["reciprocal_rank"].value == 0.5
    assert by_q["c"].reasons == ["missing_reference"]


def test_observations_equal_validated_models():
    qrels = qrels_of("1 0 a 1\n")
    run = run_of("1 Q0 a 1 1 t\n1 Q0 b 2 0.5 t\n")
    built = trec_observations(qrels, run, 5, complete=False)[0]
    from evalcore.contract.observation import Observation

    assert Observation.model_validate(built.model_dump()) == built
    assert built.model_dump(exclude_none=True) == {
        "query_id": "1",
        "k": 5,
        "returned_ids": ["a", "b"],
        "scores": [1.0, 0.5],
        "labels": [{"id": "a", "gain": 1}],
        "population_complete": False,
        "retrieval_unit": "document",
        "scan_complete": True,
    }


def test_trec_observations_rejects_bad_k():
    with pytest.raises(ValueError, match="k must be an integer >= 1"):
        trec_observations(qrels_of("1 0 a 1\n"), run_of("1 Q0 a 1 1 t\n"), 0, complete=True)


def test_compatibility_policy_evaluates_unjudged_as_zero():
    qrels = qrels_of("1 0 a 1\n")
    run = run_of("1 Q0 a 1 2 t\n1 Q0 u 2 1 t\n")
    obs = trec_observations(qrels, run, 2, complete=True)
    strict = evaluate(obs).queries[0].metrics["precision"]
    compat = evaluate(obs, EvalProtocol(unjudged_as_nonrelevant=True)).queries[0]
    assert strict.status == "unavailable" and strict.blocking_ids == ["u"]
    assert compat.metrics["precision"].value == 0.5


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from("abc"), st.sampled_from("uvwxyz"), st.integers(0, 4)),
        min_size=1,
        max_size=25,
    ),
    st.sampled_from([1, 30, 1 << 20]),
)
def test_qrels_grouping_matches_a_naive_reading(rows, chunk):
    with patch.object(trec, "BLOCK_BYTES", chunk):
        q = qrels_of("".join(f"{a} 0 {d} {g}\n" for a, d, g in rows))
    first: dict[str, dict[str, int]] = {}
    extra: dict[str, list[tuple[str, int]]] = defaultdict(list)
    seen: dict[tuple[str, str], set[int]] = defaultdict(set)
    for a, d, g in rows:
        labels = first.setdefault(a, {})
        if d not in labels:
            labels[d] = g
        elif g not in seen[(a, d)]:
            extra[a].append((d, g))
        seen[(a, d)].add(g)
    assert list(q.doc_ids) == list(first)
    for a, labels in first.items():
        assert q.doc_ids[a] == [*labels, *(d for d, _ in extra[a])]
        assert q.gains[a] == [*labels.values(), *(g for _, g in extra[a])]
    assert q.conflicting_duplicates == sum(map(len, extra.values()))
    assert q.collapsed_duplicates == len(rows) - sum(map(len, q.doc_ids.values()))
