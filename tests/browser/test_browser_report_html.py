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
