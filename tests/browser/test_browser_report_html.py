"""The exported HTML report opens in Chromium with no network and draws every chart."""

from pathlib import Path

import pytest

from evalcore.compute.evaluate import evaluate
from evalcore.contract.evaluation_protocol import EvalProtocol
from evalcore.contract.observation import Label, Observation
from evalcore.report.build import RunInput, build_report
from evalcore.report.html import render_html

pytestmark = pytest.mark.browser
XSS = "<script>alert(1)</script>"


def _observations(order: list[str]) -> list[Observation]:
    labels = [Label(id="A", gain=2), Label(id="B", gain=1), Label(id="X", gain=0)]
    out = []
    for i, query_id in enumerate(["q1", "q2", "q3", XSS]):
        returned = order if i != 3 else ["A", "unlabeled", "B"]
        out.append(Observation(query_id=query_id, k=3, returned_ids=returned, labels=labels,
                               population_complete=i != 2))
    return out


def test_report_html_draws_its_charts_offline(tmp_path: Path, browser_page) -> None:
    runs = {
        name: RunInput(evaluation=evaluate(_observations(order), EvalProtocol()),
                       corpus_fingerprint="sha256:same")
        for name, order in (("bm25", ["A", "X", "B"]), ("dense", ["B", "A", "X"]))
    }
    report = build_report(runs, name=f"offline {XSS}", study_id="s", protocol=EvalProtocol(),
                          created_by="lead")
    path = tmp_path / "report.html"
    path.write_text(render_html(report), encoding="utf-8")
    expected_charts = 2 + len(report.comparison.comparisons)

    requested: list[str] = []
    dialogs: list[str] = []

    def block_network(route) -> None:
        if not route.request.url.startswith("file://"):
            requested.append(route.request.url)
            route.abort()
        else:
            route.continue_()

    page = browser_page
    page.context.route("**/*", block_network)
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.goto(path.as_uri())
    page.wait_for_function(
        f"document.querySelectorAll('.js-plotly-plot .main-svg').length >= {expected_charts}",
        timeout=30_000,
    )
    assert page.evaluate("typeof window.Plotly") == "object"
    assert page.locator(".js-plotly-plot").count() == expected_charts
    assert requested == []
    assert dialogs == []
    assert XSS in page.locator("h1").inner_text()  # shown as text, not executed
    # The per-query chart's metric menu switches the drawn metric.
    per_query = page.locator(".js-plotly-plot").nth(1)
    assert "P@3 (available values)" in per_query.inner_text()
    per_query.locator(".updatemenu-button", has_text="nDCG@3").click()
    page.wait_for_function(
        "[...document.querySelectorAll('.js-plotly-plot')][1].innerText"
        ".includes('nDCG@3 (available values)')"
    )


#: Text a chart draws: tick labels, legend entries, titles and annotations.
_CHART_TEXT = (".xaxislayer-above text, .yaxislayer-above text, .legendtext, .gtitle, "
               ".annotation-text, .g-xtitle text, .g-x2title text, .g-ytitle text, "
               ".g-y2title text, .bartext")


def _texts(locator) -> list[str]:
    """The text of SVG elements (which have no innerText)."""
    return locator.evaluate_all("els => els.map(e => e.textContent)")


def test_report_charts_are_readable(tmp_path: Path, browser_page) -> None:
    """Query ids on the query axis, no text outside its chart, a non-empty aggregate chart."""
    runs = {
        name: RunInput(evaluation=evaluate(_observations(order), EvalProtocol()),
                       corpus_fingerprint="sha256:same")
        for name, order in (("bm25", ["A", "X", "B"]), ("dense", ["A", "X", "B"]))
    }  # the same ranking: equal values on every query
    report = build_report(runs, name="readable", study_id="s", protocol=EvalProtocol(),
                          created_by="lead")
    assert not report.runs[0].evaluation.aggregates["precision"].available
    path = tmp_path / "report.html"
    path.write_text(render_html(report), encoding="utf-8")
    page = browser_page
    page.set_viewport_size({"width": 640, "height": 900})
    page.goto(path.as_uri())
    page.wait_for_function("document.querySelectorAll('.js-plotly-plot .main-svg').length >= 2",
                           timeout=30_000)
    page.wait_for_timeout(300)
    aggregate, per_query = page.locator(".js-plotly-plot").nth(0), page.locator(".js-plotly-plot").nth(1)
    # unavailable aggregates still show how many queries they stand on
    bar_texts = _texts(aggregate.locator(".bartext"))
    assert "3/4" in bar_texts and "2/4" in bar_texts, bar_texts
    assert aggregate.locator(".bars .point path").count() > 0
    ticks = _texts(per_query.locator(".xaxislayer-above text"))
    assert {"q1", "q2", "q3", XSS} <= set(ticks), ticks  # query ids, not 0..3
    # both runs' markers are drawn side by side: no two points on the same spot
    values = per_query.locator(".subplot.xy .scatterlayer .trace")  # the values' row
    assert values.count() == 2
    points, other = values.nth(0).locator(".point"), values.nth(1).locator(".point")
    assert points.count() == other.count() > 0
    first = {tuple(round(v) for v in (b["x"], b["y"])) for b in
             (points.nth(i).bounding_box() for i in range(points.count()))}
    second = {tuple(round(v) for v in (b["x"], b["y"])) for b in
              (other.nth(i).bounding_box() for i in range(other.count()))}
    assert not first & second
    clipped = page.evaluate(
        """sel => [...document.querySelectorAll('.js-plotly-plot')].flatMap(plot => {
             const frame = plot.querySelector('.main-svg').getBoundingClientRect();
             return [...plot.querySelectorAll(sel)].filter(t => {
               const b = t.getBoundingClientRect();
               return b.width > 0 && (b.left < frame.left - 1 || b.right > frame.right + 1
                                      || b.top < frame.top - 1 || b.bottom > frame.bottom + 1);
             }).map(t => t.textContent);
           })""",
        _CHART_TEXT,
    )
    assert clipped == []
    overlaps = page.evaluate(
        """() => [...document.querySelectorAll('.js-plotly-plot')].flatMap(plot => {
             const legend = plot.querySelector('.legend');
             if (!legend) return [];
             const l = legend.getBoundingClientRect();
             const axis = plot.querySelectorAll(
               '.xaxislayer-above text, .g-xtitle text, .g-x2title text');
             return [...axis].filter(t => {
               const b = t.getBoundingClientRect();
               return b.width > 0 && b.left < l.right && l.left < b.right
                      && b.top < l.bottom && l.top < b.bottom;
             }).map(t => t.textContent);
           })"""
    )
    assert overlaps == []  # the legend covers no axis label or title
    shot = tmp_path / "report-charts.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 10_000
