"""A sample design for one comparison: which unknown units a random sample labels
(docs/estimation.md, "The sample design").

The design samples **queries** (clusters): a sampled query has every unknown unit of its
population labeled, so its difference becomes known (or bounded, section 12) for every
measure, nDCG, AP and R included. The population (queries with an unknown unit in the
cuts) is sorted by a score known before any label
(:func:`evalcore.estimation.pair_estimate.spread_scores`) and cut into strata; within a
stratum queries follow a random priority from the seed (the first ``m`` are a simple random
sample without replacement); the strata are interleaved, and a size turned into a number
of draws, by rules that depend only on the strata, never on the priorities or a label.
A larger size takes more draws of the same order: every sampled unit and its label stays.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from pydantic import Field

from evalcore.contract.frozen import FrozenModel

#: At most this many strata (fewer on a small population: :func:`strata_count`).
MAX_STRATA = 4
#: Queries per stratum, at least, when the population is cut into strata.
MIN_STRATUM = 8

METHOD = "stratified query-cluster sample without replacement"


class DesignQuery(FrozenModel):
    """One query of the design's population, with its unknown units at draw time."""

    query_id: str
    stratum: int
    #: The query's place in the draw order (1 = drawn first).
    order: int = Field(ge=1)
    units: list[str]


class SampleStratum(FrozenModel):
    """One stratum: its population ``N_h`` and how many of its queries are sampled."""

    index: int
    n_queries: int
    n_sampled: int
    n_units: int
    #: The allocation weight (size x mean score / sqrt(mean units)).
    weight: float

    @property
    def inclusion_probability(self) -> float:
        return self.n_sampled / self.n_queries if self.n_queries else 0.0


class SampleUnit(FrozenModel):
    """A sampled unit, as annotators see it, in order."""

    query_id: str
    unit_id: str
    stratum: int
    order: int
    inclusion_probability: float


class SampleDesign(FrozenModel):
    """A named sample of a comparison's unknown units (see the module docstring)."""

    name: str
    run_a: str
    run_b: str
    measures: list[str]
    #: Every query of the comparison, in order (the estimate is over all of them).
    query_ids: list[str]
    seed: int
    #: The requested number of labels (units); the draws reach it in expectation.
    size: int = Field(ge=0)
    #: Draws taken so far (queries sampled), in :attr:`queries`' order.
    draws: int = Field(ge=0)
    method: str = METHOD
    strata: list[SampleStratum]
    #: The population (queries with unknown units at draw time), in draw order.
    queries: list[DesignQuery]

    @property
    def n_unknown(self) -> int:
        """Unknown units of the population at draw time."""
        return sum(len(q.units) for q in self.queries)

    def sampled_queries(self) -> list[DesignQuery]:
        return self.queries[: self.draws]

    def sampled_units(self) -> list[SampleUnit]:
        """The sample's units in the order annotators take them."""
        prob = {s.index: s.inclusion_probability for s in self.strata}
        return [
            SampleUnit(
                query_id=q.query_id,
                unit_id=u,
                stratum=q.stratum,
                order=q.order,
                inclusion_probability=prob[q.stratum],
            )
            for q in self.sampled_queries()
            for u in q.units
        ]


def strata_count(n_population: int, expected_draws: int) -> int:
    """Strata for a population of ``n_population`` queries when about ``expected_draws``
    are sampled first: at least :data:`MIN_STRATUM` queries each, and as many draws
    per stratum, so that every stratum has a variance of its own from the start."""
    by_size = n_population // MIN_STRATUM
    by_draws = max(expected_draws, 1) // MIN_STRATUM
    return int(max(1, min(MAX_STRATA, by_size, by_draws)))


def interleave(sizes: Sequence[int], weights: Sequence[float]) -> list[int]:
    """The stratum of each draw, in order, for every query of every stratum: at each draw
    the stratum with the fewest draws relative to its weight (ties: the lower index)."""
    taken = [0] * len(sizes)
    out: list[int] = []
    total = sum(sizes)
    share = [max(w, 1e-12) for w in weights]
    while len(out) < total:
        best, key = -1, math.inf
        for h, n in enumerate(sizes):
            if taken[h] >= n:
                continue
            k = (taken[h] + 1) / share[h]
            if k < key:
                best, key = h, k
        taken[best] += 1
        out.append(best)
    return out


def draws_for_size(sequence: Sequence[int], mean_units: Sequence[float], size: int) -> int:
    """The fewest draws of ``sequence`` whose expected number of units reaches ``size``
    (every draw when the population holds fewer)."""
    expected = 0.0
    for t, h in enumerate(sequence, start=1):
        expected += mean_units[h]
        if expected >= size - 1e-9:
            return t
    return len(sequence)


def draw_design(
    *,
    name: str,
    run_a: str,
    run_b: str,
    measures: Sequence[str],
    query_ids: Sequence[str],
    units: dict[str, list[str]],
    widths: dict[str, float],
    size: int,
    seed: int,
) -> SampleDesign:
    """A design over the queries of ``units`` (query id -> its unknown unit ids, queries
    with none left out), stratified by ``widths`` (query id -> a score of how much its
    residual may vary)."""
    population = [q for q in query_ids if units.get(q)]
    mean_all = (sum(len(units[q]) for q in population) / len(population)) if population else 1.0
    n_strata = strata_count(len(population), math.ceil(size / max(mean_all, 1e-9)))
    place = {q: i for i, q in enumerate(query_ids)}
    ranked = sorted(population, key=lambda q: (widths.get(q, 0.0), place[q]))
    bounds = np.linspace(0, len(ranked), n_strata + 1).round().astype(int)
    members = [ranked[bounds[h] : bounds[h + 1]] for h in range(n_strata)]
    rng = np.random.default_rng(seed)
    priority = {q: float(p) for q, p in zip(population, rng.random(len(population)), strict=True)}
    weights, mean_units = [], []
    for group in members:
        w = sum(widths.get(q, 0.0) for q in group) / max(len(group), 1)
        c = sum(len(units[q]) for q in group) / max(len(group), 1)
        mean_units.append(c)
        weights.append(len(group) * max(w, 1e-9) / math.sqrt(max(c, 1.0)))
    ordered = [sorted(group, key=lambda q: priority[q]) for group in members]
    sequence = interleave([len(g) for g in members], weights)
    position = [0] * n_strata
    queries = []
    for t, h in enumerate(sequence, start=1):
        q = ordered[h][position[h]]
        position[h] += 1
        queries.append(DesignQuery(query_id=q, stratum=h, order=t, units=list(units[q])))
    draws = draws_for_size(sequence, mean_units, size)
    design = SampleDesign(
        name=name,
        run_a=run_a,
        run_b=run_b,
        measures=list(measures),
        query_ids=list(query_ids),
        seed=seed,
        size=size,
        draws=0,
        strata=[
            SampleStratum(
                index=h,
                n_queries=len(g),
                n_sampled=0,
                n_units=sum(len(units[q]) for q in g),
                weight=weights[h],
            )
            for h, g in enumerate(members)
        ],
        queries=queries,
    )
    return with_draws(design, draws, size)


def with_draws(design: SampleDesign, draws: int, size: int | None = None) -> SampleDesign:
    """The same design with ``draws`` queries sampled (the strata's counts updated)."""
    draws = max(0, min(draws, len(design.queries)))
    taken = [0] * len(design.strata)
    for q in design.queries[:draws]:
        taken[q.stratum] += 1
    strata = [s.model_copy(update={"n_sampled": taken[s.index]}) for s in design.strata]
    return design.model_copy(
        update={"draws": draws, "strata": strata, "size": design.size if size is None else size}
    )


def grow(design: SampleDesign, size: int) -> SampleDesign:
    """The design drawn to ``size`` labels: more draws of the same order (never fewer:
    a sample does not shrink), so every sampled unit and its label stays in it."""
    if size < design.size:
        raise ValueError(
            f"sample {design.name!r} has size {design.size}; a sample only "
            f"grows: ask for {design.size} or more"
        )
    members: list[list[DesignQuery]] = [[] for _ in design.strata]
    for q in design.queries:
        members[q.stratum].append(q)
    mean_units = [sum(len(q.units) for q in g) / max(len(g), 1) for g in members]
    sequence = [q.stratum for q in design.queries]
    draws = draws_for_size(sequence, mean_units, size)
    return with_draws(design, max(draws, design.draws), size)
