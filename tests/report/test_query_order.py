"""Query ids sort naturally (q2 before q10) in every table and chart: one key, used everywhere."""

import ast
import re
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from evalcore.contract.evaluation_protocol import EvalProtocol
from evalcore.contract.query_order import natural_key

ROOT = Path(__file__).resolve().parents[2]


def test_numbers_inside_ids_compare_as_numbers() -> None:
    ids = ["q10", "q2", "q1", "10", "2", "1", "Q3", "q", "", "a10b10", "a10b2", "topic-100",
           "topic-20", "02"]
    assert sorted(ids, key=natural_key) == [
        "", "1", "02", "2", "10", "a10b2", "a10b10", "q", "q1", "q2", "Q3", "q10",
        "topic-20", "topic-100",
    ]


def test_a_hostile_run_of_digits_sorts_without_converting_to_int() -> None:
    huge = "9" * 10_000  # int() refuses strings this long
    assert sorted([huge, "q1", "5"], key=natural_key) == ["5", huge, "q1"]


@given(st.lists(st.text(alphabet="aQq0129-_. ", max_size=6), max_size=12))
def test_the_order_is_total_and_stable(ids: list[str]) -> None:
    once = sorted(ids, key=natural_key)
    assert sorted(reversed(ids), key=natural_key) == once  # the input order does not matter
    for a, b in zip(once, once[1:], strict=False):
        assert natural_key(a) < natural_key(b) or a == b  # distinct ids never tie


def test_no_module_sorts_query_ids_as_plain_strings() -> None:
    """Every ``sorted(...)``/``.sort(...)`` call over query ids in evalcore/ and app/ uses
    natural_key (a query id, a query-keyed mapping or conflicts holding query ids).

    TREC file exports (store/exports.py) keep their own order and are not displayed;
    a set of touched queries (live/dashboard.py) is an update order, never shown.
    """
    offenders = []
    mentions = re.compile(r"query|qid", re.IGNORECASE)
    for path in [*ROOT.glob("evalcore/**/*.py"), *ROOT.glob("app/**/*.py")]:
        if path.name == "exports.py":
            continue
        source = path.read_text(encoding="utf-8")
        for node in ast.walk(ast.parse(source)):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            if not ((isinstance(func, ast.Name) and func.id == "sorted")
                    or (isinstance(func, ast.Attribute) and func.attr == "sort")):
                continue
            text = ast.get_source_segment(source, node) or ""
            if mentions.search(text) and "natural_key" not in text and "touched" not in text:
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}: {text}")
    assert not offenders, offenders


def test_report_tables_and_charts_list_queries_naturally() -> None:
    from report_builders import report_from

    from evalcore.report.build import RunInput, build_report
    from evalcore.report.charts import per_query_figure
    from evalcore.report.html import render_html

    cells = {"q10": 0.5, "q2": 0.25, "q1": 1.0}
    report = build_report({"A": RunInput(evaluation=report_from(cells))}, name="r",
                          study_id="s", protocol=EvalProtocol(), created_by="x")
    html = render_html(report)
    rows = [html.index(f"<td>{q}</td>") for q in ("q1", "q2", "q10")]
    assert rows == sorted(rows)
    figure = per_query_figure(report, "precision")
    assert figure["layout"]["xaxis"]["ticktext"] == ["q1", "q2", "q10"]


def test_evaluating_trec_files_lists_queries_naturally(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from evalcore.cli import main

    qrels = tmp_path / "qrels"
    qrels.write_text("".join(f"{q} 0 d 1\n" for q in ("10", "2", "1", "100")))
    run = tmp_path / "run"
    run.write_text("".join(f"{q} Q0 d 1 1.0 t\n" for q in ("10", "2", "1", "100")))
    args = ["evaluate", "--qrels", str(qrels), "--run", str(run), "--k", "1"]
    table = CliRunner().invoke(main, [*args, "--format", "table"]).stdout
    lines = [line.split()[0] for line in table.splitlines()[4:8]]
    assert lines == ["1", "2", "10", "100"]
