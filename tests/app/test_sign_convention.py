"""One sign convention on every surface: a comparison is candidate − baseline, the baseline
named, and the bottom line comes first. Walks ``evalcore compare`` (text and JSON),
``evalcore report`` (JSON, verdicts CSV, HTML and its printed summary) and the Compare
page on the demo study, and checks each says what ``evalcore compare`` says."""

import csv
import io
import json
import re
from html import escape
from pathlib import Path

import pytest
from click.testing import CliRunner

from evalcore.cli import main

#: The first run is the baseline everywhere unless named otherwise.
BASELINE, CANDIDATE = "bm25-plain", "bm25-title-boost"
MEASURES = ["P@10", "R@10", "nDCG@10", "RR@10"]
PAGE = "views/compare.py"


def _run(*args) -> str:
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return result.output


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> tuple[Path, dict]:
    """The demo store and what ``evalcore compare`` says about it (JSON and text)."""
    root = tmp_path_factory.mktemp("signs")
    path = root / "demo.db"
    _run("demo", "--db", path)
    measures = [a for m in MEASURES for a in ("-m", m)]
    common = [
        "compare",
        "--db",
        path,
        "--study",
        "demo",
        "--runs",
        f"{BASELINE},{CANDIDATE}",
        *measures,
    ]
    body = json.loads(_run(*common, "--format", "json"))
    text = _run(*common)
    return path, {"json": body, "text": text}


def _intervals(bottom: dict) -> dict[str, tuple]:
    return {m["measure"]: (m["lower"], m["upper"], m["interval"]) for m in bottom["measures"]}


def test_compare_names_the_baseline_and_prints_the_bottom_line_first(demo) -> None:
    _, said = demo
    body, text = said["json"], said["text"]
    assert (body["candidate"], body["baseline"]) == (CANDIDATE, BASELINE)
    assert body["difference"] == "candidate − baseline"
    sentence = body["bottom_line"]["sentence"]
    assert sentence.startswith(f"{CANDIDATE} vs {BASELINE} (baseline): ")
    assert text.splitlines()[0] == sentence
    for item in body["measures"]:
        d = item["decision"]
        assert (d["run_a"], d["run_b"]) == (CANDIDATE, BASELINE)
        assert f"mean {CANDIDATE} - {BASELINE}" in d["summary"]
    for name, (lower, upper, shown) in _intervals(body["bottom_line"]).items():
        decision = next(i["decision"] for i in body["measures"] if i["decision"]["measure"] == name)
        assert (lower, upper) == (decision["lower"], decision["upper"])
        assert re.search(rf"\n  {re.escape(name)} +\S.* {re.escape(shown)} ", text), name
    # at least one interval is lopsided, so a flipped sign would show
    assert any(abs(lo + hi) > 1e-9 for lo, hi, _ in _intervals(body["bottom_line"]).values())


def test_the_report_says_the_same_in_every_export(demo, tmp_path) -> None:
    path, said = demo
    expected = said["json"]["bottom_line"]
    measures = [a for m in MEASURES for a in ("-m", m)]
    outputs = {}
    for i, (fmt, suffix) in enumerate(
        (("json", "json"), ("verdicts-csv", "csv"), ("html", "html"))
    ):
        out = tmp_path / f"report.{suffix}"
        printed = _run(
            "report",
            "--db",
            path,
            "--study",
            "demo",
            "--runs",
            f"{BASELINE},{CANDIDATE}",
            "--out",
            out,
            "--format",
            fmt,
            "--name",
            f"signs {i}",
            *measures,
        )
        assert printed.splitlines()[0] == expected["sentence"]  # printed first too
        outputs[fmt] = out.read_text(encoding="utf-8")

    report = json.loads(outputs["json"])
    assert list(report)[:2] == ["report_format", "bottom_lines"]  # first in the JSON
    (line,) = report["bottom_lines"]
    assert (line["candidate"], line["baseline"]) == (CANDIDATE, BASELINE)
    assert report["baseline"] == BASELINE
    assert line["sentence"] == expected["sentence"]
    assert _intervals(line) == _intervals(expected)
    (pc,) = report["decisions"]
    assert (pc["run_a"], pc["run_b"]) == (CANDIDATE, BASELINE)
    assert {(c["run_a"], c["run_b"]) for c in report["comparison"]["comparisons"]} == {
        (CANDIDATE, BASELINE)
    }

    rows = list(csv.DictReader(io.StringIO(outputs["verdicts-csv"])))
    assert [r["measure"] for r in rows] == MEASURES
    for row in rows:
        lower, upper, _ = _intervals(expected)[row["measure"]]
        assert (row["candidate"], row["baseline"]) == (CANDIDATE, BASELINE)
        assert (float(row["lower"]), float(row["upper"])) == (lower, upper)
        assert row["sentence"] == expected["sentence"]

    html = outputs["html"]
    body = html[html.index("<body>") :]
    first = body.index("<h2>")
    assert body[first:].startswith("<h2>Bottom line</h2>")
    assert body.index(escape(expected["sentence"])) < body.index("<h2>", first + 1)
    table = html[html.index('class="bottomline-table"') :]
    table = table[: table.index("</table>")]
    for name, (_, _, shown) in _intervals(expected).items():
        assert f"<td>{escape(name)}</td><td>" in table and f"<td>{shown}</td>" in table
    assert f"{CANDIDATE} − {BASELINE} (baseline) per paired query" in html  # the charts
    visible = re.sub(r"<script.*?</script>", "", html, flags=re.S)
    assert "(A)" not in visible and "A − B" not in visible
    assert f"<h3>{BASELINE} vs {CANDIDATE}" not in visible


def test_the_compare_page_says_it_first_with_the_same_signs(demo, new_app, monkeypatch) -> None:
    path, said = demo
    expected = said["json"]["bottom_line"]
    monkeypatch.setenv("RELEVANCE_LEDGER_DB", str(path))
    at = new_app(annotator="lead", page=PAGE)
    assert not at.exception, at.exception
    assert at.multiselect(key="rl_compare_runs").value == [BASELINE, CANDIDATE]
    assert at.multiselect(key="rl_compare_measures").value == MEASURES
    first = next(m for m in at.main if getattr(m, "type", "") == "markdown")
    assert first.value.replace("\\", "") == f"**{expected['sentence']}**"
    table = at.table[0].value
    for name, (_, _, shown) in _intervals(expected).items():
        assert table.loc[name, "candidate − baseline (mean)"] == shown
    headings = [m.value.replace("\\", "") for m in at.markdown if " on " in m.value]
    assert f"**{CANDIDATE} − {BASELINE} (baseline)** on P@10" in headings
    links = [p for p in at.get("page_link") if p.proto.label.startswith("Label these")]
    assert links and all(
        f"run_a={CANDIDATE}&run_b={BASELINE}" in p.proto.query_string for p in links
    )
    (compat,) = [d.value for e in at.expander if "trec_eval" in e.label for d in e.dataframe]
    assert list(compat.columns)[1:4] == [
        f"{CANDIDATE} (compat.)",
        f"{BASELINE} (baseline, compat.)",
        "candidate − baseline (compat.)",
    ]
