"""benchmarks/bench_estimation.py runs end to end (``--quick``) and prints its two tables
and a verdict on each target."""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_estimation.py"


def test_quick_run_prints_coverage_labels_and_targets(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "argv", [str(BENCH), "--quick"])
    runpy.run_path(str(BENCH), run_name="__main__")
    out = capsys.readouterr().out
    assert "1. Coverage and width" in out and "lowest coverage of any setting" in out
    assert "2. Labels to exclude 0" in out
    rows = [line.split() for line in out.splitlines() if line.startswith(("P@10 ", "nDCG@10 "))]
    # Every measure x predictor x size row of table 1, and the two targets x two predictors
    # of table 2 for P@10 and nDCG@10.
    predictors = ("none", "agree90", "agree80", "agree70", "random", "adversarial", "skips")
    assert sum(1 for r in rows if len(r) == 9 and r[1] in predictors) == 2 * 7 * 4
    assert sum(1 for r in rows if len(r) == 9 and r[1] in ("0.02", "0.05")) == 2 * 2 * 2
    # Each target once, with its verdict (a quick run has too few samples to meet them all).
    verdicts = [line for line in out.splitlines() if line.rstrip().endswith(("met", "NOT met"))]
    assert [v.split(":")[0].strip()[:24] for v in verdicts] == [
        "coverage of every 95% in",
        "coverage with adversaria",
        "judgments agreeing >= 80",
        "labels to exclude 0 at a",
        "labels to exclude 0 at a",
    ]
    # The 0.02 difference is reported without a target.
    assert out.count("(reported; no target)") == 2
