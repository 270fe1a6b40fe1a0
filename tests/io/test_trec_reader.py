"""The one TREC reader: a block split in bulk and the same block walked line by line give
one outcome (the same batch and diagnostics, or the same ``file:line`` errors), wherever
the blocks are cut; plain files never take the line walk."""

import tempfile
from pathlib import Path
from unittest.mock import patch

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalcore.api.inputs import trec_input
from evalcore.contract.evaluation_protocol import EvalProtocol
from evalcore.io import trec, trec_bytes
from evalcore.io.errors import InputErrors
from evalcore.io.trec_bytes import Decline

ARRAYS = ("k", "pos_offsets", "pos_gain", "pos_dup", "dup_first", "label_offsets", "label_gain",
          "population_complete", "scan_complete", "permission_violation", "duplicate_reference")


def outcome(qrels, run, k, **options):
    try:
        return trec_input(qrels, run, k, **options)
    except InputErrors as exc:
        return str(exc)


def walked(qrels, run, k, **options):
    """``trec_input`` with every block walked line by line (the bulk split declines all)."""

    def decline(chunk, width):
        raise Decline("walk")

    with patch.object(trec, "_bulk_split", decline):
        return outcome(qrels, run, k, **options)


def same(fast, slow) -> None:
    if isinstance(slow, str):
        assert fast == slow
        return
    assert not isinstance(fast, str), fast
    a, b = fast.batch, slow.batch
    assert a.query_ids == b.query_ids
    for name in ARRAYS:
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    assert [list(u) for u in a.top_units] == [list(u) for u in b.top_units]
    assert a.depth == b.depth and a.conflict_labels == b.conflict_labels
    assert fast.diagnostics == slow.diagnostics


def write(folder: Path, name: str, text: str | bytes) -> Path:
    path = folder / name
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


# --- random files ----------------------------------------------------------------------------

QUERIES = st.sampled_from(["q1", "q2", "q10", "Q1", "7", "07", "qé", "#c"])
DOCS = st.sampled_from(["a", "b", "B", "d1", "d10", "é", "doc#1", "x_y", "zz"])
SCORES = st.one_of(
    st.sampled_from(["1", "1.0", "2", "0.5", ".5", "-1", "+3", "1e2", "1E-2", "-0", "0",
                     "1.", "3.25"]),
    st.sampled_from(["inf", "nan", "-inf", "1_0", "١", "1e999", "x", "", "0x1"]),
    st.integers(-3, 3).map(str),
)
GAINS = st.sampled_from(["0", "1", "2", "3", "4", "-1", "5", "+2", "02", "x", "1.0", ""])


@st.composite
def trec_files(draw, plain: bool = False):
    """A qrels and a run file as bytes, with the separators, line ends and oddities TREC
    files have (``plain``: only what the bulk split reads itself)."""
    sep = draw(st.sampled_from([" ", "\t"])) if plain else draw(
        st.sampled_from([" ", " ", "\t", "  ", " \t", "\t\t"]))
    end = draw(st.sampled_from(["\n", "\r\n"])) if plain else draw(
        st.sampled_from(["\n", "\n", "\r\n", "\r"]))
    queries = draw(st.lists(QUERIES if not plain else QUERIES.filter(lambda q: q != "#c"),
                            min_size=1, max_size=4, unique=True))

    def line(fields: list[str]) -> str:
        text = sep.join(fields)
        if not plain:
            extra = draw(st.sampled_from(["", "", "", "lead", "trail", "blank", "comment"]))
            if extra == "lead":
                text = sep + text
            elif extra == "trail":
                text = text + sep
            elif extra == "blank":
                text = end + text
            elif extra == "comment":
                text = "# a comment" + end + text
        return text + end

    qrels_lines, run_lines = [], []
    for q in queries:
        docs = draw(st.lists(DOCS, min_size=int(plain and q == queries[0]), max_size=5,
                             unique=not draw(st.booleans()) or plain))
        for d in docs:
            g = draw(GAINS if not plain else st.sampled_from(["0", "1", "2", "3", "4", "02"]))
            qrels_lines.append(line([q, "0", d, g]))
        first = len(queries) == 1 or (plain and q == queries[0])
        returned = draw(st.lists(DOCS, min_size=int(first), max_size=8))
        for r, d in enumerate(returned, start=1):
            s = draw(SCORES if not plain else st.sampled_from(["1", "2", "0.5", "2.0", "-1"]))
            fields = [q, "Q0", d, str(r), s, draw(st.sampled_from(["t", "t", "u"]))]
            if not plain and draw(st.integers(0, 9)) == 0:
                fields.append("extra")
            run_lines.append(line(fields))
    if draw(st.booleans()):  # queries need not be on consecutive lines
        run_lines = draw(st.permutations(run_lines))
    if draw(st.booleans()):
        qrels_lines = draw(st.permutations(qrels_lines))
    bom = "\ufeff" if draw(st.booleans()) else ""
    return (bom + "".join(qrels_lines)).encode(), (bom + "".join(run_lines)).encode()


OPTIONS = st.fixed_dictionaries({
    "k": st.integers(1, 6),
    "complete": st.booleans(),
    "trec_eval": st.booleans(),
    "all_queries": st.booleans(),
    "gain_map": st.sampled_from([None, {-1: 0}, {5: 4, -1: 0}]),
    "min_depth": st.sampled_from([0, 3, 10]),
    "block": st.sampled_from([64, 100, 200, 1 << 20]),
    # distinct values: sorted hashes, or the hash table (a shuffled run's many queries)
    "sorted_heads": st.sampled_from([0, 1 << 16]),
})


def run_both(qrels_bytes: bytes, run_bytes: bytes, opts: dict, *, never_walk: bool = False):
    """The outcome read with the options' block size (``never_walk``: the line walk must not
    be taken), and the outcome of every block walked line by line."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        qrels, run = write(folder, "qrels.txt", qrels_bytes), write(folder, "run.txt", run_bytes)
        protocol = EvalProtocol(trec_eval=opts["trec_eval"],
                                unjudged_as_nonrelevant=opts["trec_eval"])
        options = dict(complete=opts["complete"], protocol=protocol,
                       all_queries=opts["all_queries"] and opts["trec_eval"],
                       gain_map=opts["gain_map"], min_depth=opts["min_depth"])
        with patch.object(trec, "BLOCK_BYTES", opts["block"]), \
                patch.object(trec_bytes, "SORTED_HEADS", opts["sorted_heads"]):
            if never_walk:
                with patch.object(trec, "_walk_block", None):  # calling it fails the test
                    bulk = outcome(qrels, run, opts["k"], **options)
            else:
                bulk = outcome(qrels, run, opts["k"], **options)
        slow = walked(qrels, run, opts["k"], **options)
    return bulk, slow


@settings(max_examples=120, deadline=None)
@given(trec_files(), OPTIONS)
def test_bulk_split_and_line_walk_give_one_outcome(files, opts):
    same(*run_both(*files, opts))


@settings(max_examples=80, deadline=None)
@given(trec_files(plain=True), OPTIONS)
def test_plain_files_are_split_in_bulk(files, opts):
    bulk, slow = run_both(*files, opts, never_walk=True)
    same(bulk, slow)


# --- what the bulk split leaves to the line walk, one by one ----------------------------------

GOOD_QRELS = "q1 0 a 1\nq1 0 b 0\nq2 0 c 2\n"
GOOD_RUN = "q1 Q0 a 1 2.5 t\nq1 Q0 c 2 2.5 t\nq2 Q0 c 1 1 t\n"


@pytest.mark.parametrize(("qrels", "run", "why"), [
    (GOOD_QRELS, GOOD_RUN.replace("2.5 t\nq1", "2.5 t\n# note\nq1"), "comment line"),
    (GOOD_QRELS, GOOD_RUN.replace(" 1 t", " 1_0 t"), "1_000"),
    (GOOD_QRELS, GOOD_RUN.replace(" 1 t", " \u0661 t"), "non-ASCII digit"),
    (GOOD_QRELS, GOOD_RUN.replace(" 1 t", " inf t"), "inf"),
    (GOOD_QRELS, GOOD_RUN.replace(" 1 t", " nan t"), "nan"),
    (GOOD_QRELS, GOOD_RUN.replace(" 1 t", " 1e999 t"), "overflow"),
    (GOOD_QRELS, GOOD_RUN.replace("q2 Q0", "q2  Q0"), "two separators"),
    (GOOD_QRELS, GOOD_RUN.replace("q2 Q0", " q2 Q0"), "separator at a line's start"),
    (GOOD_QRELS, GOOD_RUN.replace("1 t\n", "1 t \n"), "separator at a line's end"),
    (GOOD_QRELS, GOOD_RUN.replace("\n", " \r\n"), "separator before CRLF"),
    (GOOD_QRELS, GOOD_RUN.rstrip("\n") + " ", "separator at the file's end"),
    (GOOD_QRELS.replace(" ", "\t").replace("q2\t0", "q2\t\t0"),
     GOOD_RUN.replace(" ", "\t"), "two tabs"),
    (GOOD_QRELS.replace("q1 0 b", "q1  b"), GOOD_RUN, "empty iteration field"),
    (GOOD_QRELS, GOOD_RUN.replace("q2 Q0 c 1 1 t", "q2 Q0 c 1 1"), "five fields"),
    (GOOD_QRELS, GOOD_RUN.replace("q2 Q0 c 1 1 t", "q2 Q0 c 1 1 t x"), "text after the tag"),
    (GOOD_QRELS.replace("q1 0 b 0", "q1 0\nb 0"), GOOD_RUN, "a line cut in two halves"),
    (GOOD_QRELS, GOOD_RUN.replace("q2 Q0 c 1 1 t", "q2 Q0 c\n1 1 t"), "a run line cut in two"),
    (GOOD_QRELS.replace("q1 0 b 0", "q1 0 b\n0"), GOOD_RUN, "lines of 3 and 1 fields"),
    (GOOD_QRELS, GOOD_RUN.replace("q2 Q0", "q2\tQ0"), "spaces and tabs"),
    (GOOD_QRELS, GOOD_RUN.replace("\n", "\r"), "lone CR"),
    (GOOD_QRELS, GOOD_RUN.replace("c 1 1", "c\xa0 1 1"), "Unicode blank"),
    (GOOD_QRELS, GOOD_RUN.replace("c 1 1", "c\x0b 1 1"), "vertical tab"),
    (GOOD_QRELS + "q1 0 a 1\n", GOOD_RUN, "repeated judgment"),
    (GOOD_QRELS + "q1 0 a 2\n", GOOD_RUN, "conflicting judgment"),
    (GOOD_QRELS.replace(" 2\n", " 7\n"), GOOD_RUN, "gain outside 0..4"),
    (GOOD_QRELS.replace(" 2\n", " 2.0\n"), GOOD_RUN, "gain not an integer"),
    ("", GOOD_RUN, "empty qrels"),
    (GOOD_QRELS, "\n\n", "empty run"),
])
def test_every_oddity_gives_the_outcome_of_the_line_walk(tmp_path, qrels, run, why):
    q, r = write(tmp_path, "qrels.txt", qrels), write(tmp_path, "run.txt", run)
    protocol = EvalProtocol()
    same(outcome(q, r, 2, complete=True, protocol=protocol),
         walked(q, r, 2, complete=True, protocol=protocol))


def test_invalid_utf8_and_nul_bytes_keep_their_line_numbers(tmp_path):
    protocol = EvalProtocol()
    q = write(tmp_path, "qrels.txt", GOOD_QRELS)
    for bad in (b"q2 Q0 \xff 1 1 t\n", b"q2 Q0 c\x00 1 1 t\n"):
        r = write(tmp_path, "run.txt", GOOD_RUN.encode() + bad)
        message = outcome(q, r, 2, complete=True, protocol=protocol)
        assert f"{r}:4:" in message


def test_a_missing_file_or_a_directory_is_named(tmp_path):
    protocol = EvalProtocol()
    q = write(tmp_path, "qrels.txt", GOOD_QRELS)
    for r in (tmp_path / "absent.txt", tmp_path):
        assert str(r) in outcome(q, r, 2, complete=True, protocol=protocol)


def test_errors_of_both_files_are_reported_together(tmp_path):
    q = write(tmp_path, "qrels.txt", GOOD_QRELS.replace(" 2\n", " 9\n"))
    r = write(tmp_path, "run.txt", GOOD_RUN.replace(" 1 t", " x t"))
    message = outcome(q, r, 2, complete=True, protocol=EvalProtocol())
    assert f"{q}:3: gain: gain 9 is outside 0..4" in message
    assert f"{r}:3: score: must be a finite number, got 'x'" in message


def test_ties_are_ordered_by_doc_id_descending_in_the_packed_positions(tmp_path):
    q = write(tmp_path, "qrels.txt", "q1 0 b 1\nq1 0 B 2\n")
    r = write(tmp_path, "run.txt", "q1 Q0 a 1 1 t\nq1 Q0 b 2 1 t\nq1 Q0 B 3 1 t\n"
                                   "q1 Q0 c 4 0.5 t\nq1 Q0 z 5 2 t\n")
    taken = trec.files_input(q, r, 3, complete=True, protocol=EvalProtocol())
    assert list(taken.batch.top_units[0]) == ["z", "b", "a"]  # 'B' < 'a' < 'b' in byte order
    assert taken.batch.pos_gain.tolist() == [-1, 1, -1]
    assert taken.tied_score_pairs == 3


def test_a_query_cut_by_a_block_and_a_query_that_comes_back(tmp_path):
    q = write(tmp_path, "qrels.txt", GOOD_QRELS)
    lines = [f"q{1 + i % 2} Q0 d{i} {i} {i % 5} t\n" for i in range(40)]
    r = write(tmp_path, "run.txt", "".join(sorted(lines)) + "".join(lines))
    protocol = EvalProtocol()
    whole = outcome(q, r, 5, complete=False, protocol=protocol)
    for block in (8, 64, 100):  # 8: every line longer than a block
        with patch.object(trec, "BLOCK_BYTES", block):
            same(outcome(q, r, 5, complete=False, protocol=protocol), whole)
            same(walked(q, r, 5, complete=False, protocol=protocol), whole)


# --- odd bytes -------------------------------------------------------------------------------

#: IDs with the bytes that trip a byte-level reader: multi-byte UTF-8, invalid UTF-8, blanks
#: str.split takes, '#', and lengths around the reader's 8-byte words (shared prefixes).
ODD_IDS = st.sampled_from([
    "a", "b", "ab", "abc", "abcdefgh", "abcdefghi", "abcdefgh1", "abcdefghabcdefgh",
    "abcdefghabcdefgh1", "é", "docé", "d\u00a0x", "x\x0by", "#x", "x#", "日本語の文書", "Z", "0",
    "d\xff", "q\x00",
])
RAW_SCORES = st.sampled_from(["1", "2.5", "-0", "+0.5", "1e3", "1E-3", "12345678901234567",
                              "0.30000000000000004", "007.50", "1.", ".5", "nan", "1e", "--1",
                              "3", "3.0", "30e-1"])


@st.composite
def raw_trec_files(draw, valid: bool):
    """Qrels and run as bytes: ``valid`` files only hold what the reader accepts."""
    sep = draw(st.sampled_from([" ", "\t"]))
    end = draw(st.sampled_from(["\n", "\r\n"]))
    ids = ODD_IDS.filter(lambda s: s.isascii() and s.isprintable() and "#" not in s
                         and " " not in s) if valid else ODD_IDS
    queries = draw(st.lists(ids, min_size=1, max_size=3, unique=True))
    qrels_lines, run_lines = [], []
    for q in queries:
        for d in draw(st.lists(ids, max_size=6, unique=valid)):
            gain = draw(st.sampled_from(["0", "1", "2", "4"] if valid else ["0", "1", "9", "x"]))
            qrels_lines.append(sep.join([q, "0", d, gain]))
        for r, d in enumerate(draw(st.lists(ids, min_size=1, max_size=8)), start=1):
            score = draw(RAW_SCORES.filter(lambda s: s not in ("nan", "1e", "--1"))
                         if valid else RAW_SCORES)
            run_lines.append(sep.join([q, "Q0", d, str(r), score, "tag"]))
    if draw(st.booleans()):  # duplicate lines
        pick = draw(st.sampled_from(run_lines))
        run_lines.insert(draw(st.integers(0, len(run_lines))), pick)
    if not valid and qrels_lines and draw(st.booleans()):
        qrels_lines.append(draw(st.sampled_from(qrels_lines)))
    if not valid and draw(st.booleans()):  # tabs and spaces in one file
        run_lines[0] = run_lines[0].replace(sep, " \t"[sep == " "], 1)
    for lines in (qrels_lines, run_lines):  # a line cut in two: its fields add up to one line
        if not valid and lines and draw(st.booleans()):
            i = draw(st.integers(0, len(lines) - 1))
            fields = lines[i].split(sep)
            cut = draw(st.integers(1, len(fields) - 1))
            lines[i] = sep.join(fields[:cut]) + end + sep.join(fields[cut:])
    if draw(st.booleans()):
        qrels_lines.insert(0, "")  # an empty line
    if draw(st.booleans()):
        run_lines = draw(st.permutations(run_lines))

    def text(lines: list[str]) -> bytes:
        body = end.join(lines) + (end if draw(st.booleans()) else "")  # final line end or not
        return body.encode("utf-8", "surrogateescape").replace(b"\xc3\xbf", b"\xff")

    return text(qrels_lines or ["q 0 d 1"]), text(run_lines)


@settings(max_examples=150, deadline=None)
@given(raw_trec_files(valid=False), OPTIONS)
def test_odd_bytes_give_one_outcome(files, opts):
    same(*run_both(*files, opts))


@settings(max_examples=150, deadline=None)
@given(raw_trec_files(valid=True), OPTIONS)
def test_valid_files_with_long_ids_and_odd_scores_are_split_in_bulk(files, opts):
    same(*run_both(*files, opts, never_walk=True))


def test_hash_collisions_are_resolved_exactly(tmp_path):
    """Every row hashing alike: the join probes on and compares words; distinct values are
    compared exactly. The outcome is the line walk's either way."""
    qrels = write(tmp_path, "qrels.txt", "q1 0 abcdefghX 1\nq1 0 abcdefghY 2\nq2 0 a 1\n")
    run = write(tmp_path, "run.txt", "q1 Q0 abcdefghY 1 3 t\nq1 Q0 abcdefghX 2 2 t\n"
                                     "q1 Q0 zz 3 1 t\nq2 Q0 a 1 1 t\n")
    protocol = EvalProtocol()
    slow = walked(qrels, run, 3, complete=True, protocol=protocol)

    def constant(words, seed=None):
        return np.zeros(len(words), dtype=np.uint64)

    with patch.object(trec, "hash_rows", constant):
        same(outcome(qrels, run, 3, complete=True, protocol=protocol), slow)
    with patch("evalcore.io.trec_bytes.hash_rows", constant):
        # Query IDs compared one by one, or in the hash table: exact.
        for sorted_heads in (1 << 16, 0):
            with patch.object(trec_bytes, "SORTED_HEADS", sorted_heads):
                same(outcome(qrels, run, 3, complete=True, protocol=protocol), slow)


def test_scores_are_what_float_gives(tmp_path):
    from evalcore.io.trec_bytes import padded, parse_scores, split_block

    tokens = ["1", "-1.5", "+.5", "1.", "1e5", "0.30000000000000004", "123456789012345",
              "1234567890123456", "9007199254740993", "-0", "00012.500", "3.14159265358979",
              "2.2250738585072014e-308", "0.1", "179769313486231570000000"]
    block = split_block(padded("".join(f"q Q0 d 1 {t} x\n" for t in tokens).encode()), 6)
    assert parse_scores(block, 4).tolist() == [float(t) for t in tokens]


WORDS = st.lists(st.sampled_from(["q1", "q2", "q10", "abcdefgh", "abcdefghi", "é", "7", "t"]),
                 min_size=1, max_size=60)


@settings(max_examples=150, deadline=None)
@given(WORDS, st.sampled_from([0, 1, 1 << 16]), st.sampled_from([0, 16]))
def test_distinct_values_are_numbered_in_order_of_first_appearance(tokens, sorted_heads, few):
    """Every way :func:`distinct` finds values (compared one by one, sorted hashes, the hash
    table; on stretch heads or on every row) gives the codes a dict numbering gives."""
    from evalcore.io.trec_bytes import distinct, padded, split_block

    block = split_block(padded("".join(f"{t}\n" for t in tokens).encode()), 1)
    with patch.object(trec_bytes, "SORTED_HEADS", sorted_heads), \
            patch.object(trec_bytes, "FEW", few):
        codes, values = distinct(block.words(0))
    numbering = dict.fromkeys(tokens)
    assert values == list(numbering)
    assert codes.dtype == np.int64
    assert codes.tolist() == [list(numbering).index(t) for t in tokens]


@settings(max_examples=120, deadline=None)
@given(trec_files(), OPTIONS)
def test_the_word_join_equals_the_join_of_the_read_files(files, opts):
    """Two TREC files joined on their doc IDs' words (repeated judgments included) give the
    batch of the files read whole and joined through Python strings (io/ranked.py)."""
    from evalcore.api.inputs import EvalInput
    from evalcore.contract.results import Diagnostics
    from evalcore.io.ranked import join, judged_from_qrels, ranked_from_run

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        qrels, run = write(folder, "qrels.txt", files[0]), write(folder, "run.txt", files[1])
        protocol = EvalProtocol(trec_eval=opts["trec_eval"],
                                unjudged_as_nonrelevant=opts["trec_eval"])
        options = dict(complete=opts["complete"], protocol=protocol,
                       all_queries=opts["all_queries"] and opts["trec_eval"],
                       min_depth=opts["min_depth"])
        words = outcome(qrels, run, opts["k"], gain_map=opts["gain_map"], **options)
        try:
            joined = join(judged_from_qrels(trec.read_qrels(qrels, opts["gain_map"])),
                          ranked_from_run(trec.read_run(run, extra_columns=opts["trec_eval"])),
                          opts["k"], **options)
        except InputErrors:
            assert isinstance(words, str)
            return
    strings = EvalInput(joined.batch, Diagnostics(tied_score_pairs=joined.tied_score_pairs,
                                                  notes=joined.notes))
    same(words, strings)
