"""A large study's dashboard: each run's distribution of available values, unavailable counted
apart (never binned as 0), and the per-query chart of a chosen subset of queries."""

from pathlib import Path

import plotly.graph_objects as go
import pytest

from evalcore.contract.measures import Measure
from evalcore.live import query_subsets
from evalcore.live.charts import SUMMARY_FROM, per_query_figure, shows_summary, summary_figure
from evalcore.live.dashboard import LiveDashboard
from evalcore.store.connection import open_store
from evalcore.store.labels import record_label
from evalcore.store.runs import add_run
from evalcore.store.studies import QueryIn, StudyIn
from evalcore.store.study_handle import open_study
from evalcore.store.study_setup import add_queries, create_study

P1 = Measure("P", k=1)


@pytest.fixture
def state(tmp_path: Path, new_store_target) -> LiveDashboard:
    """Queries a..e, k=1. Run <b>A</b>: a=0, b=1, c=1, d unavailable (no label), e=0.
    Run B returns other units: a=1, b=1, c=0, d unavailable, e unavailable (unlabeled)."""
    db = open_store(new_store_target("s.sqlite"))
    create_study(db, StudyIn(study_id="s", name="s", corpus_id="c"))
    queries = ["a", "b", "c", "d", "e"]
    add_queries(db, "s", [QueryIn(query_id=q, text=q) for q in queries])
    add_run(db, study_id="s", name="<b>A</b>", source="imported", k=1,
            results=[(q, 1, f"{q}1", 1.0) for q in queries])
    add_run(db, study_id="s", name="B", source="imported", k=1,
            results=[(q, 1, f"{q}2", 1.0) for q in queries])
    for query, unit, gain in [("a", "a1", 0), ("b", "b1", 1), ("c", "c1", 2), ("e", "e1", 0),
                              ("a", "a2", 1), ("b", "b2", 1), ("c", "c2", 0)]:
        record_label(db, study_id="s", query_id=query, unit_id=unit, gain=gain, annotator="ann")
    return LiveDashboard.build(open_study(db, "s", None))


def test_unavailable_values_are_counted_apart_never_binned_as_zero(state) -> None:
    fig = go.Figure(summary_figure(state, P1, "P@1"))  # validated: the app does not
    bars = {t.name: t for t in fig.data if t.orientation != "h"}
    a = bars["&lt;b&gt;A&lt;/b&gt; (4 available, 1 unavailable)"]
    b = bars["B (3 available, 2 unavailable)"]
    assert sum(a.y) == 4 and a.y[0] == 2 and a.y[-1] == 2  # a and e at 0; b and c at 1
    assert sum(b.y) == 3 and b.y[0] == 1 and b.y[-1] == 2  # d and e are not in any bin
    counts = [(t.y[0], t.x[0], t.base) for t in fig.data if t.orientation == "h"]
    assert ("&lt;b&gt;A&lt;/b&gt;", 4, None) in counts
    assert ("&lt;b&gt;A&lt;/b&gt;", 1, (4,)) in counts  # drawn from where the available end
    assert ("B", 2, (3,)) in counts
    unavailable = [t for t in fig.data if t.orientation == "h" and t.base is not None]
    assert {t.text[0] for t in unavailable} == {"1 unavailable", "2 unavailable"}
    hover = {t.y[0]: t.hovertemplate for t in unavailable}
    assert ("reasons (a query may have several):<br>no label at all: 1<extra>"
            in hover["&lt;b&gt;A&lt;/b&gt;"])
    assert "no label at all: 1<br>unlabeled results in the top k: 1<extra>" in hover["B"]
    assert "<b>A</b>" not in fig.to_json()


def test_summary_only_for_large_studies(state, monkeypatch) -> None:
    assert not shows_summary(state) and SUMMARY_FROM > 5
    monkeypatch.setattr("evalcore.live.charts.SUMMARY_FROM", 5)
    assert shows_summary(state)


def test_subsets_compare_available_values_only(state) -> None:
    assert query_subsets.lowest(state, P1, "<b>A</b>", 2) == ["a", "e"]
    assert query_subsets.lowest(state, P1, "B", 5) == ["a", "b", "c"]  # d, e unavailable
    assert query_subsets.unavailable(state, P1, "B") == ["d", "e"]
    # a (0 vs 1) and c (1 vs 0) differ; e is available in one run only: not compared
    assert query_subsets.most_different(state, P1, 5) == ["a", "b", "c"]
    assert query_subsets.most_different(state, P1, 2) == ["a", "c"]
    assert query_subsets.page(state, 2, 2) == ["c", "d"]
    assert query_subsets.page(state, 3, 2) == ["e"]
    assert query_subsets.n_pages(state, 2) == 3


def test_per_query_chart_of_a_subset_places_only_those_queries(state) -> None:
    fig = go.Figure(per_query_figure(state, P1, "P@1", ["c", "d"], "page 2"))
    values = fig.data[0]
    assert list(values.x) == [0] and list(values.y) == [1.0] and list(values.text) == ["c"]
    strips = [t for t in fig.data if t.yaxis == "y2"]
    assert [list(t.x) for t in strips] == [[1], [1]]  # d, unavailable in both runs
    assert list(fig.layout.xaxis2.ticktext) == ["c", "d"]
    assert "page 2: 2 queries" in fig.layout.xaxis2.title.text


def test_a_run_too_shallow_for_the_cutoff_is_a_valid_not_computed_bar(state) -> None:
    fig = go.Figure(summary_figure(state, Measure("P", k=5), "P@5"))  # validated
    assert [t.name for t in fig.data] == ["&lt;b&gt;A&lt;/b&gt;: not computed", "B: not computed"]
    assert all(t.orientation == "h" and t.yaxis == "y2" for t in fig.data)
