"""``evalcore sample draw|grow|list|show`` and ``evalcore compare --sample``: the sampled
units as JSON lines, the design shown, and per measure an estimate apart from the
decided verdict (never "decided"); clear refusals for an unknown sample or measure."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from evalcore.cli import main
from evalcore.store.connection import open_store
from evalcore.store.labels import record_label
from evalcore.store.samples import sample_units
from evalcore.store.study_handle import open_study

RUNS = "bm25-plain,bm25-title-boost"


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory):
    path = tmp_path_factory.mktemp("demo") / "demo.db"
    result = CliRunner().invoke(main, ["demo", "--db", str(path)])
    assert result.exit_code == 0, result.output
    drawn = _cli(
        "sample",
        "draw",
        "--db",
        path,
        "--study",
        "demo",
        "--runs",
        RUNS,
        "-m",
        "P@10",
        "-m",
        "nDCG@10",
        "--size",
        30,
        "--seed",
        7,
        "--name",
        "s1",
    )
    assert drawn.exit_code == 0, drawn.output
    db = open_store(path)
    for i, unit in enumerate(sample_units(open_study(db, "demo", None), "s1")):
        if i < 12:
            record_label(
                db,
                study_id="demo",
                query_id=unit.query_id,
                unit_id=unit.unit_id,
                gain=i % 3,
                annotator="ann",
            )
    db.conn.close()
    return path


def _cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_draw_prints_the_units_as_json_lines_in_order(tmp_path, new_store_target) -> None:
    path = new_store_target("d.db")
    assert _cli("demo", "--db", path).exit_code == 0
    result = _cli(
        "sample",
        "draw",
        "--db",
        path,
        "--study",
        "demo",
        "--runs",
        RUNS,
        "-m",
        "P@10",
        "-m",
        "nDCG@10",
        "--size",
        100,
        "--seed",
        7,
        "--name",
        "s1",
    )
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert rows and all({"query_id", "unit_id", "inclusion_probability"} <= set(r) for r in rows)
    assert [r["position"] for r in rows] == list(range(1, len(rows) + 1))
    assert all(0 < r["inclusion_probability"] <= 1 for r in rows)
    assert "sample 's1':" in result.stderr and "seed 7" in result.stderr
    grown = _cli("sample", "grow", "--db", path, "--study", "demo", "--name", "s1", "--size", 150)
    assert grown.exit_code == 0, grown.output
    more = [json.loads(line) for line in grown.stdout.splitlines()]
    assert [(r["query_id"], r["unit_id"]) for r in more[: len(rows)]] == [
        (r["query_id"], r["unit_id"]) for r in rows
    ]
    again = _cli(
        "sample",
        "draw",
        "--db",
        path,
        "--study",
        "demo",
        "--runs",
        RUNS,
        "-m",
        "P@10",
        "--size",
        10,
        "--seed",
        1,
        "--name",
        "s1",
    )
    assert again.exit_code == 2 and "has a sample 's1' already" in again.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-m", "P@ten"], "-m:"),
        (["-m", "P@10", "--runs", "bm25-plain"], "two different run names"),
        (["-m", "P@10", "--runs", "bm25-plain,nope"], "no run 'nope'"),
        (["-m", "P@20"], "stored to depth 10; P@20 would need ranks that were never retrieved"),
    ],
)
def test_draw_refuses_bad_input_with_a_clear_message(tmp_path, args, message, new_store_target) -> None:
    path = new_store_target("d.db")
    assert _cli("demo", "--db", path).exit_code == 0
    base = [
        "sample",
        "draw",
        "--db",
        path,
        "--study",
        "demo",
        "--size",
        5,
        "--seed",
        1,
        "--name",
        "x",
    ]
    if "--runs" not in args:
        base += ["--runs", RUNS]
    result = _cli(*base, *args)
    assert result.exit_code == 2, result.output
    assert message in result.output and "Traceback" not in result.output
    assert (
        "no sample in study demo" in _cli("sample", "list", "--db", path, "--study", "demo").output
    )  # nothing was written


def test_list_and_show_give_the_design_and_the_units_states(demo_db) -> None:
    listed = _cli("sample", "list", "--db", demo_db, "--study", "demo")
    assert listed.exit_code == 0 and listed.output.startswith("s1\tbm25-plain,bm25-title-boost\t")
    shown = _cli(
        "sample", "show", "--db", demo_db, "--study", "demo", "--name", "s1", "--format", "json"
    )
    body = json.loads(shown.output)
    assert body["seed"] == 7 and body["measures"] == ["P@10", "nDCG@10"]
    assert body["candidate"] == "bm25-title-boost" and body["baseline"] == "bm25-plain"
    assert len(body["query_ids"]) == 25 and body["strata"]
    drawn = [(q["query_id"], u) for q in body["population"] for u in q["units"]]
    assert [(u["query_id"], u["unit_id"]) for u in body["units"]] == drawn[: len(body["units"])]
    assert sum(len(q["units"]) for q in body["population"]) == body["n_unknown"]
    states = [u["state"] for u in body["units"]]
    assert states[:12] == ["labeled"] * 12 and "open" in states
    text = _cli("sample", "show", "--db", demo_db, "--study", "demo", "--name", "s1").output
    assert "inclusion probability" in text and "12 labeled" in text
    unknown = _cli("sample", "show", "--db", demo_db, "--study", "demo", "--name", "nope")
    assert (
        unknown.exit_code == 2
        and "no sample 'nope' in study 'demo' (samples: s1)" in unknown.output
    )


def test_compare_json_holds_an_estimate_object_per_measure(demo_db) -> None:
    result = _cli(
        "compare",
        "--db",
        demo_db,
        "--study",
        "demo",
        "--runs",
        RUNS,
        "-m",
        "P@10",
        "-m",
        "nDCG@10",
        "--sample",
        "s1",
        "--level",
        0.9,
        "--format",
        "json",
    )
    assert result.exit_code == 0, result.output
    body = json.loads(result.output)
    assert body["sample"] == "s1"
    for item in body["measures"]:
        e = item["estimate"]
        assert {
            "point",
            "lower",
            "upper",
            "level",
            "n_sampled",
            "n_labeled",
            "n_unknown",
            "method",
        } <= set(e)
        assert e["level"] == 0.9 and e["lower"] <= e["point"] <= e["upper"]
        assert e["predictor_weight"] is None  # no automatic source named
        assert 0 < e["n_labeled"] <= e["n_sampled"] <= e["n_unknown"]
        assert "finite-population" in e["method"]
        assert e["text"].startswith("estimated: ") and "decided" not in e["text"]
        # the decided verdict is the evidence's alone
        assert item["decision"]["verdict"] in {"a_better", "b_better", "tied", "undecided"}
    plain = json.loads(
        _cli(
            "compare",
            "--db",
            demo_db,
            "--study",
            "demo",
            "--runs",
            RUNS,
            "-m",
            "P@10",
            "--format",
            "json",
        ).output
    )
    assert "estimate" not in plain["measures"][0]
    assert plain["measures"][0]["decision"] == body["measures"][0]["decision"]


def test_compare_text_shows_the_estimate_apart_from_the_verdict(demo_db) -> None:
    result = _cli(
        "compare",
        "--db",
        demo_db,
        "--study",
        "demo",
        "--runs",
        RUNS,
        "-m",
        "P@10",
        "--sample",
        "s1",
    )
    assert result.exit_code == 0, result.output
    sentence, *rest = result.output.splitlines()
    assert "estimated" not in sentence
    (line,) = [r for r in rest if "estimated:" in r]
    assert line.strip().startswith("note: P@10: estimated: ")
    assert "95% CI" in line and "of 117 unknown units sampled" in line
    assert "non-response" in line and "difference estimator" in line


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-m", "P@10", "--sample", "nope"], "no sample 'nope' in study 'demo' (samples: s1)"),
        (["-m", "RR@10", "--sample", "s1"], "was drawn for P@10, nDCG@10, not RR@10"),
        (["-m", "P@10", "--sample", "s1", "--level", 1.5], "--level 1.5"),
        (["-m", "P@10", "--sample", "s1", "--queries", "q01,q02"], "query set (2 queries) differs"),
    ],
)
def test_compare_refuses_an_unknown_sample_or_measure(demo_db, args, message) -> None:
    result = _cli("compare", "--db", demo_db, "--study", "demo", "--runs", RUNS, *args)
    assert result.exit_code == 2, result.output
    assert message in result.output and "Traceback" not in result.output


def test_report_shows_the_estimate_in_html_json_and_csv(demo_db, tmp_path) -> None:
    for suffix, fmt in (("html", "html"), ("json", "json"), ("csv", "verdicts-csv")):
        out = tmp_path / f"r.{suffix}"
        result = _cli(
            "report",
            "--db",
            demo_db,
            "--study",
            "demo",
            "--runs",
            RUNS,
            "-m",
            "P@10",
            "--sample",
            "s1",
            "--out",
            out,
            "--format",
            fmt,
            "--name",
            f"r-{suffix}",
        )
        assert result.exit_code == 0, result.output
        text = out.read_text(encoding="utf-8")
        assert "estimated: " in text and "unknown units sampled" in text, fmt
        if fmt == "json":
            lines = [m for b in json.loads(text)["bottom_lines"] for m in b["measures"]]
            assert lines and all(m["predictor_weight"] is None for m in lines)


def test_automatic_judgments_serve_the_estimate_only(demo_db, tmp_path) -> None:
    from evalcore.demo.corpus import demo_documents
    from evalcore.demo.study import simulated_gain

    docs = {d.doc_id: d for d in demo_documents()}
    body = json.loads(
        _cli(
            "sample", "show", "--db", demo_db, "--study", "demo", "--name", "s1", "--format", "json"
        ).output
    )
    rows = ["query_id,unit_id,gain"] + [
        f"{q['query_id']},{u},{simulated_gain(q['query_id'], docs[u])}"
        for q in body["population"]
        for u in q["units"]
    ]
    path = tmp_path / "judge.csv"
    path.write_text("\n".join(rows) + "\n")
    imported = _cli(
        "import",
        "labels",
        "--db",
        demo_db,
        "--study",
        "demo",
        path,
        "--automatic",
        "judge",
        "--format",
        "csv",
    )
    assert imported.exit_code == 0, imported.output
    args = [
        "compare",
        "--db",
        demo_db,
        "--study",
        "demo",
        "--runs",
        RUNS,
        "-m",
        "P@10",
        "--sample",
        "s1",
        "--format",
        "json",
    ]
    plain = json.loads(_cli(*args).output)["measures"][0]
    helped = json.loads(_cli(*args, "--automatic", "judge").output)["measures"][0]
    assert helped["decision"] == plain["decision"]  # never evidence
    assert helped["estimate"]["automatic"] == "judge" and plain["estimate"]["automatic"] is None
    assert "automatic judgments 'judge' as predictor" in helped["estimate"]["method"]
    weight = helped["estimate"]["predictor_weight"]
    assert 0 <= weight <= 1 and plain["estimate"]["predictor_weight"] is None
    assert f"weighted {weight:.2f} by the sample" in helped["estimate"]["method"]
    assert f"weighted {weight:.2f} by the sample" in helped["estimate"]["text"]
    assert "weighted" not in plain["estimate"]["text"]
    unknown = _cli(*args, "--automatic", "nope")
    assert unknown.exit_code == 2
    assert "no automatic judgments of source 'nope'" in unknown.output and "judge" in unknown.output
    alone = _cli(
        "compare",
        "--db",
        demo_db,
        "--study",
        "demo",
        "--runs",
        RUNS,
        "-m",
        "P@10",
        "--automatic",
        "judge",
    )
    assert alone.exit_code == 2 and "name the sample with --sample" in alone.output
