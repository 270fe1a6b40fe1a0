"""Generated comparisons with known truth for the estimation tests: both runs' top units,
every true gain, and a share of the labels hidden."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from evalcore.analysis.decision import PairEvaluation, evaluate_pair
from evalcore.compute.batch import ObservationBatch
from evalcore.contract.evaluation_protocol import EvalProtocol
from evalcore.contract.measures import parse_measure

PROTOCOL = EvalProtocol()
MEASURES = ["P@5", "RR@5", "nDCG@5", "AP@5", "R@5", "RBP(p=0.8)@5"]


@dataclass
class Generated:
    qids: list[str]
    run_a: list[list[str]]
    run_b: list[list[str]]
    truth: list[dict[str, int]]
    hidden: set[tuple[str, str]]

    def pair(
        self,
        measures: list[str],
        *,
        reveal: dict[tuple[str, str], int] | None = None,
        hide_all: bool = False,
        complete: bool = True,
        conflicts: bool = False,
    ) -> PairEvaluation:
        """The pair with the hidden labels unknown (``reveal``: given back with these gains;
        ``conflicts``: every other hidden unit in conflict between its true gain and
        another, instead of unlabeled)."""
        reveal = reveal or {}
        if conflicts:
            return self._conflict_pair(measures, reveal)
        ids, gains = [], []
        for q, labels in zip(self.qids, self.truth, strict=True):
            row_ids, row_gains = [], []
            for unit, g in labels.items():
                key = (q, unit)
                if key in reveal:
                    row_ids.append(unit)
                    row_gains.append(reveal[key])
                elif not hide_all and key not in self.hidden:
                    row_ids.append(unit)
                    row_gains.append(g)
            ids.append(row_ids)
            gains.append(row_gains)
        parsed = [parse_measure(m) for m in measures]
        depth = max(m.k or 0 for m in parsed)
        batches = [
            ObservationBatch.from_gain_maps(
                self.qids, depth, run,
                [dict(zip(i, g, strict=True)) for i, g in zip(ids, gains, strict=True)],
                [complete] * len(self.qids), protocol=PROTOCOL, min_depth=depth,
            )
            for run in (self.run_a, self.run_b)
        ]
        return evaluate_pair(batches[0], batches[1], parsed, PROTOCOL)

    def _conflict_pair(
        self, measures: list[str], reveal: dict[tuple[str, str], int]
    ) -> PairEvaluation:
        maps = []
        for q, labels in zip(self.qids, self.truth, strict=True):
            row: dict[str, int | tuple[int, ...]] = {}
            for i, (unit, g) in enumerate(labels.items()):
                key = (q, unit)
                if key in reveal:
                    row[unit] = reveal[key]
                elif key not in self.hidden:
                    row[unit] = g
                elif i % 2 == 0:
                    row[unit] = (g, 4 - g) if g != 2 else (1, 2)
            maps.append(row)
        parsed = [parse_measure(m) for m in measures]
        depth = max(m.k or 0 for m in parsed)
        batches = [
            ObservationBatch.from_gain_maps(
                self.qids,
                depth,
                run,
                maps,
                [True] * len(self.qids),
                protocol=PROTOCOL,
                min_depth=depth,
            )
            for run in (self.run_a, self.run_b)
        ]
        return evaluate_pair(batches[0], batches[1], parsed, PROTOCOL)

    def true_pair(self, measures: list[str]) -> PairEvaluation:
        return self.pair(
            measures,
            reveal={
                (q, u): g
                for q, labels in zip(self.qids, self.truth, strict=True)
                for u, g in labels.items()
            },
        )


def generate(
    seed: int, n: int = 30, pool: int = 10, depth: int = 5, hidden_share: float = 0.4
) -> Generated:
    """``n`` queries over a pool of ``pool`` units; run A ranks by quality plus noise, run B
    with more noise; every unit of the pool labeled, ``hidden_share`` of the returned ones
    hidden."""
    rng = np.random.default_rng(seed)
    quality = rng.normal(size=(n, pool))
    gains = np.clip(np.rint(quality * 1.3 - 0.3), 0, 4).astype(int)
    a = np.argsort(-(quality + 0.5 * rng.normal(size=(n, pool))), axis=1)[:, :depth]
    b = np.argsort(-(quality + 1.5 * rng.normal(size=(n, pool))), axis=1)[:, :depth]
    qids = [f"q{i:03d}" for i in range(n)]
    truth = [{f"d{u}": int(gains[i, u]) for u in range(pool)} for i in range(n)]
    hidden = set()
    for i, q in enumerate(qids):
        for u in sorted(set(a[i].tolist()) | set(b[i].tolist())):
            if rng.random() < hidden_share:
                hidden.add((q, f"d{u}"))
    return Generated(
        qids,
        [[f"d{u}" for u in row] for row in a.tolist()],
        [[f"d{u}" for u in row] for row in b.tolist()],
        truth,
        hidden,
    )
