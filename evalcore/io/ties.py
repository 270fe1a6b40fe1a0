"""Tied scores: runs of equal adjacent scores in a ranking, and the pairs they hold.

The one home of tied-pair counting: the TREC run reader (which also reorders
each run of ties as trec_eval does) and the store (rankings read back) both
count here. A run of ``s`` equal scores in one ranking holds ``s * (s - 1) / 2``
tied pairs; equal scores in different rankings (queries) never tie.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np


def tied_runs(scores: np.ndarray, same_block: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(start, end) row indices (end exclusive) of every run of two or more equal adjacent
    ``scores``; ``same_block[i]`` says rows i and i + 1 belong to one ranking."""
    tied = np.flatnonzero((scores[1:] == scores[:-1]) & same_block)
    if tied.size == 0:
        return tied, tied
    # Runs of equal scores: group starts where the previous pair is not tied.
    run_start = tied[np.concatenate(([True], np.diff(tied) > 1))]
    run_end = tied[np.concatenate((np.diff(tied) > 1, [True]))] + 2
    return run_start, run_end


def pairs_in_runs(run_start: np.ndarray, run_end: np.ndarray) -> int:
    """Tied pairs held by the runs :func:`tied_runs` found."""
    sizes = run_end - run_start
    return int((sizes * (sizes - 1) // 2).sum())


def tied_score_pairs(rankings: Iterable[Sequence[float | None] | None]) -> int:
    """Tied pairs over rankings given as score lists in rank order (None: no scores)."""
    flat: list[float] = []
    breaks: list[int] = []
    for scores in rankings:
        if scores and None not in scores:
            if flat:
                breaks.append(len(flat) - 1)
            flat.extend(scores)  # type: ignore[arg-type]
    if len(flat) < 2:
        return 0
    same_block = np.ones(len(flat) - 1, dtype=bool)
    same_block[breaks] = False
    return pairs_in_runs(*tied_runs(np.asarray(flat, dtype=np.float64), same_block))
