"""Samples and estimates of stored runs: the store's evidence, the sample design and the
estimator joined (contract section 13).

:func:`draw_stored_sample` evaluates the two runs on the working labels, draws a design
over their unknown units (:func:`~evalcore.estimation.pair_estimate.draw_for_pair`) and
stores it (:mod:`evalcore.store.samples`); :func:`grow_stored_sample` takes more draws of
the same design. :func:`estimate_stored` estimates each measure's mean difference from
the evidence **without the sample's answers** (a sampled unit's current label is taken
out of the evidence and given to the estimator as its answer, so the prediction and the
worst-case intervals are those the design was drawn against) and the non-responses
(skips, "can't judge", or a unit answered but still in conflict: each taken at its worst
case). Each entry point checks access once; estimates are never evidence.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import sqlite_utils

from evalcore.access.roles import Permission
from evalcore.analysis.decision import (
    PairEvaluation,
    evaluate_column_pair,
    require_stored_depth,
    stored_pair,
)
from evalcore.analysis.query_set import resolve_stored_query_set
from evalcore.analysis.shared_evidence import shared_evidence
from evalcore.contract.frozen import FrozenModel
from evalcore.contract.measures import parse_measure
from evalcore.estimation.design import SampleDesign, SampleUnit, grow
from evalcore.estimation.pair_estimate import Estimate, NotEstimable, draw_for_pair, estimate_pair
from evalcore.store.automatic_labels import automatic_labels
from evalcore.store.observations import runs_as_columns
from evalcore.store.samples import (
    StoredSample,
    create_sample,
    get_sample,
    grow_sample,
    nonresponses,
    sample_units,
    units_labeled_since,
)
from evalcore.store.study_handle import Study, open_study

#: The default confidence level of an estimate.
DEFAULT_LEVEL = 0.95


class SampleView(FrozenModel):
    """A stored sample with its design, for ``sample show`` and the app."""

    sample: StoredSample
    design: SampleDesign

    def units(self) -> list[SampleUnit]:
        """The sampled units in order, each with its current inclusion probability."""
        return self.design.sampled_units()


def design_of(sample: StoredSample) -> SampleDesign:
    return SampleDesign.model_validate_json(sample.design_json)


def _stored(design: SampleDesign) -> dict:
    """What the store keeps of a drawn or grown design: its draws, its JSON and its sampled
    units as ``(query_id, unit_id, stratum, draw)`` in order."""
    units = [(u.query_id, u.unit_id, u.stratum, u.order) for u in design.sampled_units()]
    return {"draws": design.draws, "design_json": design.model_dump_json(), "units": units}


def draw_stored_sample(
    db: sqlite_utils.Database,
    *,
    study_id: str,
    name: str,
    candidate: str,
    baseline: str,
    measures: Sequence[str],
    size: int,
    seed: int,
    actor: str | None,
) -> SampleView:
    """Draw and store a sample of the unknown units of ``candidate`` vs ``baseline`` on
    ``measures`` over the study's queries (lead only in team mode). Raises
    ``UnknownMeasure``, ``LookupError`` (study, run), ``ValueError`` (name taken, size)
    or ``PermissionDenied``; nothing is written then."""
    if size < 1:
        raise ValueError(f"--size {size}: a sample needs at least 1 unit")
    parsed = [parse_measure(m) for m in measures]
    names = list(dict.fromkeys(m.canonical for m in parsed))
    study = open_study(db, study_id, actor, Permission.DRAW_SAMPLE)
    require_stored_depth(study, [baseline, candidate], parsed)
    query_set = resolve_stored_query_set(study, [baseline, candidate], "all")
    evaluated = stored_pair(study, candidate, baseline, parsed, query_ids=query_set.scope)
    design = draw_for_pair(evaluated.pair, name=name, run_a=candidate, run_b=baseline,
                           measures=names, size=size, seed=seed)
    if not design.queries:
        raise ValueError(
            f"{candidate} vs {baseline} has no unknown unit that can move {', '.join(names)}: "
            "nothing to sample (the decided verdict needs no estimate)"
        )
    stored = create_sample(db, study_id=study_id, name=name, run_a=candidate, run_b=baseline,
                           measures=names, seed=seed, size=size, actor=actor, **_stored(design))
    return SampleView(sample=stored, design=design)


def grow_stored_sample(
    db: sqlite_utils.Database, *, study_id: str, name: str, size: int, actor: str | None
) -> SampleView:
    """Draw more units into the same design, up to ``size`` labels (lead only in team
    mode); every unit sampled already stays, with its label."""
    study = open_study(db, study_id, actor, Permission.DRAW_SAMPLE)
    design = grow(design_of(get_sample(study, name)), size)
    stored = grow_sample(db, study_id=study_id, name=name, size=size, actor=actor,
                         **_stored(design))
    return SampleView(sample=stored, design=design)


def show_sample(study: Study, name: str) -> SampleView:
    """The stored sample and its design."""
    sample = get_sample(study, name)
    return SampleView(sample=sample, design=design_of(sample))


class QueueUnit(FrozenModel):
    """A sampled unit in the sample's queue, with whether it is answered."""

    position: int
    query_id: str
    unit_id: str
    #: "open" (to label), "labeled", or "non-response" (skipped, can't judge).
    state: str


def sample_queue(study: Study, name: str) -> list[QueueUnit]:
    """The sample's units in order with their state:
    annotators take the first open one (they do not choose)."""
    sample = get_sample(study, name)
    units = sample_units(study, name)
    answers = _responses(study, sample, _current_gains(study, [u.query_id for u in units]))
    # An answer is a gain ("labeled") or None ("non-response"); no answer yet: "open".
    state = {"open": "open", None: "non-response"}
    return [
        QueueUnit(position=u.position, query_id=u.query_id, unit_id=u.unit_id,
                  state=state.get(answers.get((u.query_id, u.unit_id), "open"), "labeled"))
        for u in units
    ]


def _current_gains(
    study: Study, query_ids: Sequence[str]
) -> dict[str, dict[str, int | tuple[int, ...]]]:
    from evalcore.store.resolution import resolved_gains

    wanted = list(dict.fromkeys(query_ids))
    return resolved_gains(study, wanted, conflicts=True) if wanted else {}


def _responses(
    study: Study, sample: StoredSample, gains: dict[str, dict[str, int | tuple[int, ...]]]
) -> dict[tuple[str, str], int | None]:
    """Each answered sampled unit -> its gain, or None for a non-response (a skip or
    "can't judge" not followed by a label that resolves it, or a unit labeled since the
    draw but still in conflict)."""
    skipped = {(r.query_id, r.unit_id) for r in nonresponses(study, sample.name)}
    relabeled = units_labeled_since(study, sample.name)
    out: dict[tuple[str, str], int | None] = {}
    for u in sample_units(study, sample.name):
        key = (u.query_id, u.unit_id)
        gain = gains.get(u.query_id, {}).get(u.unit_id)
        if isinstance(gain, int):
            out[key] = gain
        elif key in skipped or (gain is not None and key in relabeled):
            out[key] = None
    return out


class StoredEstimates(FrozenModel):
    """The estimates of one comparison from a stored sample, oriented as asked."""

    sample: str
    candidate: str
    baseline: str
    estimates: list[Estimate | NotEstimable]

    def by_measure(self) -> dict[str, Estimate | NotEstimable]:
        return {e.measure: e for e in self.estimates}

    def line_estimates(self) -> dict[str, Estimate]:
        """The bottom line's estimates (:func:`evalcore.analysis.bottom_line.bottom_line`)."""
        return {e.measure: e for e in self.estimates if isinstance(e, Estimate)}


def estimate_json(e: Estimate | NotEstimable) -> dict:
    """The ``estimate`` object of a measure in JSON output."""
    if isinstance(e, NotEstimable):
        return {"measure": e.measure, "estimable": False, "reason": e.reason}
    body = e.model_dump(mode="json")
    body["estimable"] = True
    body["direction"] = e.direction
    body["text"] = e.text()
    return body


def _oriented(e: Estimate | NotEstimable, pair: PairEvaluation, flip: bool
              ) -> Estimate | NotEstimable:
    """``e`` cut to the decided interval of the mean difference on ``pair`` (which holds the
    truth, so coverage can only grow), then as ``run_b - run_a`` when ``flip``."""
    if isinstance(e, NotEstimable):
        return e
    point, lo, hi, worst_lo, worst_hi = e.point, e.lower, e.upper, e.worst_lower, e.worst_upper
    lower, upper, _, _ = pair.intervals(e.measure)
    if not (np.isnan(lower).any() or np.isnan(upper).any()):
        worst_lo, worst_hi = float(lower.mean()), float(upper.mean())
        lo, hi = max(lo, worst_lo), min(hi, worst_hi)
        if lo > hi:  # only by rounding: the decided interval holds the truth
            lo = hi = min(max(point, worst_lo), worst_hi)
        point = min(max(point, lo), hi)
    runs = (e.run_a, e.run_b)
    if flip:
        runs, point, lo, hi, worst_lo, worst_hi = runs[::-1], -point, -hi, -lo, -worst_hi, -worst_lo
    ends = {"lower": lo, "upper": hi, "worst_lower": worst_lo, "worst_upper": worst_hi}
    return e.model_copy(update={"run_a": runs[0], "run_b": runs[1], "point": point, **ends})


def estimate_stored(
    study: Study,
    name: str,
    *,
    candidate: str,
    baseline: str,
    measures: Sequence[str] | None = None,
    level: float = DEFAULT_LEVEL,
    query_ids: Sequence[str] | None = None,
    automatic: str | None = None,
) -> StoredEstimates:
    """``candidate`` - ``baseline`` estimated from sample ``name`` on its measures (or
    ``measures``), never evidence (contract section 13); ``automatic``: a source used as
    predictor."""
    if not 0 < level < 1:
        raise ValueError(f"--level {level}: give a confidence level between 0 and 1, e.g. 0.95")
    sample = get_sample(study, name)
    design = design_of(sample)
    if {candidate, baseline} != {design.run_a, design.run_b}:
        raise ValueError(
            f"sample {name!r} was drawn for {design.run_a} vs {design.run_b}, not "
            f"{candidate} vs {baseline}; draw a sample for these runs (evalcore sample draw)"
        )
    wanted = (
        list(design.measures)
        if measures is None
        else [parse_measure(m).canonical for m in measures]
    )
    missing = [m for m in wanted if m not in design.measures]
    if missing:
        raise ValueError(
            f"sample {name!r} was drawn for {', '.join(design.measures)}, not "
            f"{', '.join(missing)}: its units were chosen for those measures; draw a sample "
            "with these measures to estimate them"
        )
    # ``query_ids`` None: the study's queries now, read with the columns
    columns = runs_as_columns(study, [design.run_a, design.run_b], shared_evidence(study),
                              query_ids=query_ids)
    if columns[0].query_ids != design.query_ids:
        raise ValueError(
            f"sample {name!r} was drawn over {len(design.query_ids)} queries (every query of "
            f"the study then); this comparison's query set ({len(columns[0].query_ids)} "
            "queries) differs (a query removed or added since, or --queries): compare over "
            "the same queries or draw a new sample"
        )
    gains = {q: dict(g) for q, g in zip(columns[0].query_ids, columns[0].gains, strict=True)}
    responses = _responses(study, sample, gains)
    # the evidence without the sample's answers: what the design was drawn against
    answered = {}
    for (q, unit), gain in responses.items():
        if gain is not None:
            answered.setdefault(q, set()).add(unit)
    stripped_labels = columns[0].coded_labels.without(columns[0].query_ids, answered)
    stripped = [replace(c, coded_labels=stripped_labels) for c in columns]
    pair = evaluate_column_pair(stripped, wanted, study.settings.protocol())
    predictions = None
    if automatic is not None:
        by_source = automatic_labels(study, design.query_ids, sources=[automatic])
        if automatic not in by_source:
            known = sorted(automatic_labels(study))
            raise ValueError(
                f"no automatic judgments of source {automatic!r} on the queries of sample "
                f"{name!r} (sources of study {study.study_id!r}: {', '.join(known) or 'none'}); "
                "import them with: evalcore import labels FILE --automatic NAME"
            )
        predictions = by_source[automatic]
    found = estimate_pair(pair, design, responses, level=level, measures=wanted,
                          automatic=predictions, automatic_name=automatic)
    # the evidence now (the sample's answers included) holds the truth whatever the rest is
    now = evaluate_column_pair(columns, wanted, study.settings.protocol())
    found = [_oriented(e, now, design.run_a != candidate) for e in found]
    return StoredEstimates(sample=name, candidate=candidate, baseline=baseline, estimates=found)
