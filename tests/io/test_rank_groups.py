"""The one ranker (:func:`evalcore.io.trec.rank_groups`) against a plain sort.

Both readers rank through it: a TREC run file (packed doc-ID words) and a run held as
Python rows (:func:`evalcore.io.ranked.rank_rows`). trec_eval's order is score descending,
then doc ID descending (``strcmp``). The sort's batching (``_SORT_ROWS``) and its switch to
one sort of every row (more than ``MAX_SORT_GROUPS`` distinct lengths) are made small here so
that generated runs reach both.
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import evalcore.io.trec as trec
from evalcore.io.ranked import DictKeys, rank_rows
from evalcore.io.text_lines import SourceText
from evalcore.io.trec import read_run

_DOC = st.text(alphabet="abcxyz019é", min_size=1, max_size=4)
#: query -> {doc id: score}; few distinct scores, so that ties are common
_RUNS = st.dictionaries(
    st.sampled_from([f"q{i}" for i in range(12)]),
    st.dictionaries(_DOC, st.sampled_from([0.0, 0.5, 1.0, 2.0, -1.0]), min_size=1, max_size=9),
    min_size=1,
    max_size=12,
)


#: the fixture sets two module constants for the whole test: nothing to reset between inputs
_CONSTANTS_ONLY = [HealthCheck.function_scoped_fixture]


def _expected(run: dict[str, dict[str, float]]) -> dict[str, list[str]]:
    return {
        q: [d for d, _ in sorted(docs.items(), key=lambda item: (item[1], item[0].encode()),
                                 reverse=True)]
        for q, docs in run.items()
    }


@pytest.fixture(params=[(7, 2), (1 << 18, 64)], ids=["small-batches", "defaults"])
def sort_limits(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    rows, groups = request.param
    monkeypatch.setattr(trec, "_SORT_ROWS", rows)
    monkeypatch.setattr(trec, "MAX_SORT_GROUPS", groups)


@settings(max_examples=150, deadline=None, suppress_health_check=_CONSTANTS_ONLY)
@given(run=_RUNS)
def test_a_run_file_is_ranked_as_a_plain_sort_ranks_it(sort_limits, run) -> None:
    lines = [f"{q} Q0 {d} 0 {s} tag" for q, docs in run.items() for d, s in docs.items()]
    read = read_run(SourceText("run.txt", "\n".join(lines) + "\n"))
    assert {q: list(read.doc_ids[q]) for q in read.doc_ids} == _expected(run)


@settings(max_examples=150, deadline=None, suppress_health_check=_CONSTANTS_ONLY)
@given(run=_RUNS, depth=st.sampled_from([0, 1, 3]))
def test_rows_are_ranked_as_a_plain_sort_ranks_them(sort_limits, run, depth) -> None:
    names = [d for docs in run.values() for d in docs]
    scores = np.array([s for docs in run.values() for s in docs.values()], dtype=np.float64)
    offsets = np.zeros(len(run) + 1, dtype=np.int64)
    np.cumsum([len(docs) for docs in run.values()], out=offsets[1:])
    positions, order, _ = rank_rows(scores, offsets, DictKeys.of(names, offsets), depth)
    expected = _expected(run)
    for i, q in enumerate(run):
        ranked = [names[r] for r in order[positions[i]:positions[i + 1]]]
        assert ranked == (expected[q][:depth] if depth else expected[q]), q
