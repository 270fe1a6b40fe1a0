"""Automatic judgments are never evidence (contract section 13): on a copy of the demo study
with two automatic sources covering every returned unit (one adversarial), every evaluate,
compare and report output is byte for byte what it is without them; the to-decide queue
keeps its items, only their order may follow the hint."""

from __future__ import annotations

import re
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner
from store_fixtures import built_demo

from evalcore.analysis.decision import decide_measure, stored_pair
from evalcore.cli import main
from evalcore.demo.study import DEMO_STUDY_ID
from evalcore.io import clock
from evalcore.live.decide_state import DecideTarget, decide_state
from evalcore.report import build as report_build
from evalcore.store.automatic_labels import automatic_labels
from evalcore.store.completeness import completeness_states
from evalcore.store.connection import open_store
from evalcore.store.imports.automatic_labels import import_automatic_labels
from evalcore.store.resolution import resolve_study
from evalcore.store.runs import list_runs, run_results
from evalcore.store.study_handle import open_study

MEASURES = ["P@10", "nDCG@10", "RR@10", "R@10", "AP@10"]
_UUID = re.compile(rb"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}")


class _FrozenClock(datetime):
    @classmethod
    def now(cls, tz=None):  # noqa: ANN001, ANN206 - datetime's own signature
        return datetime(2026, 12, 6, 8, 0, 0, tzinfo=tz or UTC)


@pytest.fixture(scope="module")
def demo_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return built_demo(tmp_path_factory.mktemp("demo") / "demo.sqlite")


def _with_automatic(path: Path | str, scratch: Path) -> tuple[list[str], int]:
    """Import two automatic sources over every unit either run returned: one that inverts
    the human gain (0 for relevant, 4 for not), one that says 3 everywhere (their files are
    written in the folder ``scratch``)."""
    db = open_store(path)
    runs = list_runs(open_study(db, DEMO_STUDY_ID, None))
    human = {
        (q, u): label.gain
        for q, units in resolve_study(open_study(db, DEMO_STUDY_ID, None)).items()
        for u, label in units.items()
    }
    units = sorted(
        {
            (q, u)
            for r in runs
            for q, ranked in run_results(open_study(db, DEMO_STUDY_ID, None), r.run_id).items()
            for u, _ in ranked
        }
    )
    inverted = scratch / "inverted.qrels"
    inverted.write_text("".join(f"{q} 0 {u} {4 - (human.get((q, u)) or 0)}\n" for q, u in units))
    import_automatic_labels(db, inverted, study_id=DEMO_STUDY_ID, name="inverted", format="qrels")
    flat = "query_id,unit_id,gain\n" + "".join(f"{q},{u},3\n" for q, u in units)
    (scratch / "flat.csv").write_text(flat)
    import_automatic_labels(
        db, scratch / "flat.csv", study_id=DEMO_STUDY_ID, name="flat", format="csv"
    )
    n = sum(len(v) for v in automatic_labels(open_study(db, DEMO_STUDY_ID, None)).values())
    names = [r.name for r in runs]
    db.conn.close()
    return names, n


def _outputs(path: Path, runs: list[str], monkeypatch: pytest.MonkeyPatch) -> dict[str, bytes]:
    """Every output, run from the store's folder with relative paths (printed alike)."""
    monkeypatch.chdir(path.parent)
    runner = CliRunner()
    db = ["--db", path.name, "--study", DEMO_STUDY_ID]
    measures = [x for m in MEASURES for x in ("-m", m)]
    commands = {
        f"evaluate {fmt} {run}": ["evaluate", *db, "--run", run, *measures, "--format", fmt]
        for run in runs
        for fmt in ("json", "table")
    }
    commands |= {
        f"compare {fmt}": [
            "compare",
            *db,
            "--runs",
            ",".join(runs),
            *measures,
            "--queue",
            "50",
            "--format",
            fmt,
        ]
        for fmt in ("json", "table")
    }
    got: dict[str, bytes] = {}
    for name, args in commands.items():
        result = runner.invoke(main, args)
        assert result.exit_code == 0, (name, result.output)
        got[name] = result.stdout_bytes
    for fmt in ("json", "csv", "verdicts-csv", "html"):
        target = Path(f"report.{fmt}")
        result = runner.invoke(
            main,
            [
                "report",
                *db,
                "--runs",
                ",".join(runs),
                "--out",
                str(target),
                "--format",
                fmt,
                "--name",
                f"r-{fmt}",
            ],
        )
        assert result.exit_code == 0, (fmt, result.output)
        written = target.read_bytes()
        if fmt == "html":  # plotly names each chart's element with a random uuid4
            written = _UUID.sub(b"<uuid>", written)
        got[f"report {fmt}"] = written
        got[f"report {fmt} stdout"] = result.stdout_bytes
    return got


def test_every_evaluate_compare_and_report_output_is_byte_identical(
    demo_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for module in (clock, report_build):  # the times written into the outputs
        monkeypatch.setattr(module, "datetime", _FrozenClock)
    plain, judged = tmp_path / "plain" / "d.sqlite", tmp_path / "judged" / "d.sqlite"
    for path in (plain, judged):
        path.parent.mkdir()
        shutil.copy(demo_file, path)
    runs, n = _with_automatic(judged, judged.parent)
    assert n > 200  # both sources cover every returned unit
    before = _outputs(plain, runs, monkeypatch)
    after = _outputs(judged, runs, monkeypatch)
    assert before.keys() == after.keys()
    for name in before:
        assert before[name] == after[name], name
    assert all(before[name] for name in before if not name.endswith("stdout"))


def test_values_bounds_verdicts_completeness_and_queue_items_stay(
    built_store_target, tmp_path: Path
) -> None:
    plain, judged = (built_store_target("demo", built_demo, name)
                     for name in ("p.sqlite", "j.sqlite"))
    runs, _ = _with_automatic(judged, tmp_path)
    a, b = (open_store(p) for p in (plain, judged))
    assert completeness_states(open_study(a, DEMO_STUDY_ID, None)) == completeness_states(
        open_study(b, DEMO_STUDY_ID, None)
    )
    pairs = [
        stored_pair(open_study(db, DEMO_STUDY_ID, None), runs[0], runs[1], MEASURES).pair
        for db in (a, b)
    ]
    for m in MEASURES:
        assert decide_measure(pairs[0], m) == decide_measure(pairs[1], m)
    for m in ("P@10", "nDCG@10"):
        target = DecideTarget(run_a=runs[0], run_b=runs[1], measure=m)
        without, hinted = (
            decide_state(open_study(db, DEMO_STUDY_ID, None), target) for db in (a, b)
        )
        assert without.decisions == hinted.decisions
        assert sorted(without.items, key=repr) == sorted(hinted.items, key=repr)
        assert (without.n_candidates, without.labels_to_decide) == (
            hinted.n_candidates,
            hinted.labels_to_decide,
        )
