"""The annotate page's "to decide A vs B" queue: its target, its state, its next item.

:func:`decide_target` validates a lead's two runs and measure (a bad value names the
parameter and lists the valid ones); :func:`decide_state` reads the store once for every
offered measure's verdict and the target's queue, built again after each label so the
verdict and the labels still needed follow the evidence. Automatic judgments only break
ties of the queue's order (never its items or the verdicts).
"""

from collections.abc import Collection, Sequence

from evalcore.analysis.decision import (
    Decision,
    capped,
    carried,
    carried_note,
    decide_measure,
    depth_note,
    depth_problems,
    stored_depths,
    stored_pair,
)
from evalcore.analysis.decision_queue import DecideItem, decide_queue, mean_automatic_gains
from evalcore.contract.frozen import FrozenModel
from evalcore.contract.measures import UnknownMeasure, parse_measure
from evalcore.store.automatic_labels import automatic_labels
from evalcore.store.resolution import resolve_unit_in_store
from evalcore.store.runs import list_runs
from evalcore.store.study_handle import Study

#: The measures the annotate page offers, each at a cutoff of at most the runs' stored depth
#: (:func:`decide_measures`; any measure of the catalogue within that depth is accepted too).
DECIDE_MEASURES: tuple[str, ...] = ("P@10", "RR@10", "Success@10", "P@5", "nDCG@10", "R@10")
#: Verdicts that settle a comparison: no label can change them.
SETTLED = frozenset({"a_better", "b_better", "tied"})


class DecideTarget(FrozenModel):
    """What the queue decides: ``run_a - run_b`` on ``measure`` (its canonical name)."""

    run_a: str
    run_b: str
    measure: str


class TargetError(ValueError):
    """A parameter of the queue is not valid: names it, says why, lists the valid values."""

    def __init__(self, parameter: str, value: str, problem: str, valid: Sequence[str]) -> None:
        self.parameter = parameter
        self.value = value
        self.valid = list(valid)
        listed = ", ".join(valid) if valid else "(none)"
        super().__init__(f"{parameter}={value!r} {problem}; valid values: {listed}")


def study_run_names(study: Study) -> list[str]:
    return [run.name for run in list_runs(study)]


def decide_measures(study: Study, run_a: str, run_b: str) -> list[str]:
    """:data:`DECIDE_MEASURES` for two runs: a cutoff past the shallower run's stored depth
    taken at that depth (ranks below it were never retrieved and would count as empty)."""
    depth = min(stored_depths(study, [run_a, run_b]).values())
    return list(dict.fromkeys(capped(parse_measure(m), depth).canonical for m in DECIDE_MEASURES))


def decide_depth_note(study: Study, run_a: str, run_b: str) -> str | None:
    """Why the offered measures' cutoffs are shallower than :data:`DECIDE_MEASURES` for two
    runs (:func:`~evalcore.analysis.decision.depth_note`); None when every cutoff fits."""
    depths = stored_depths(study, [run_a, run_b])
    if not depth_problems(depths, [parse_measure(m) for m in DECIDE_MEASURES]):
        return None
    return depth_note(depths)


def decide_carried(study: Study, run_a: str, run_b: str, measure: str) -> tuple[str, str] | None:
    """``measure`` (the panel's choice before its runs changed) carried to two runs' stored
    depth: the same family at that depth, or the first offered measure when that one is not
    offered, with the caption saying so and why; None when ``measure`` fits both runs."""
    depths = stored_depths(study, [run_a, run_b])
    offered = decide_measures(study, run_a, run_b)
    moved = carried([measure], min(depths.values()), offered)
    if not moved:
        return None
    moved[measure] = moved[measure] or offered[0]
    return moved[measure], f"{carried_note(moved)}. {depth_note(depths)}"


def decide_target(study: Study, run_a: str, run_b: str, measure: str) -> DecideTarget:
    """The target named by the three values, or :class:`TargetError` for the first bad one
    (a measure whose cutoff is past either run's stored depth among them)."""
    runs = study_run_names(study)
    for parameter, value in (("run_a", run_a), ("run_b", run_b)):
        if value not in runs:
            raise TargetError(parameter, value, f"is not a run of study {study.study_id!r}", runs)
    if run_a == run_b:
        raise TargetError("run_b", run_b, "is the same run as run_a (compare two different runs)",
                          [r for r in runs if r != run_a])
    try:
        canonical = parse_measure(measure).canonical
    except UnknownMeasure as error:
        raise TargetError("measure", measure, f"is not a measure ({error})",
                          decide_measures(study, run_a, run_b)) from None
    problems = depth_problems(stored_depths(study, [run_a, run_b]), [parse_measure(canonical)])
    if problems:
        raise TargetError("measure", measure, f"cannot be computed: {'; '.join(problems)}",
                          decide_measures(study, run_a, run_b))
    return DecideTarget(run_a=run_a, run_b=run_b, measure=canonical)


class DecideState(FrozenModel):
    """The verdicts and the target measure's queue, read from the store at one moment."""

    target: DecideTarget
    #: The target measure's decision.
    decision: Decision
    #: Every offered measure's decision (the target's included), in the offered order.
    decisions: list[Decision]
    #: The target measure's to-decide queue, in its order (empty when settled or undecidable).
    items: list[DecideItem]
    n_candidates: int
    #: Estimated labels still needed (None: labeling the queue is not expected to decide it).
    labels_to_decide: int | None

    @property
    def settled(self) -> bool:
        return self.decision.verdict in SETTLED

    def next_undecided(self) -> str | None:
        """The first measure after the target (cyclically) whose verdict is undecided."""
        names = [d.measure for d in self.decisions]
        start = names.index(self.target.measure) if self.target.measure in names else -1
        for step in range(1, len(names) + 1):
            decision = self.decisions[(start + step) % len(names)]
            if decision.verdict == "undecided" and decision.measure != self.target.measure:
                return decision.measure
        return None


def decide_state(study: Study, target: DecideTarget, *,
                 query_ids: Sequence[str] | None = None) -> DecideState:
    """Both runs evaluated once on every offered measure (:func:`decide_measures`): the
    verdicts and the target's queue, over the study's queries or the query set ``query_ids`` (:mod:`evalcore.analysis.query_set`)."""
    offered = decide_measures(study, target.run_a, target.run_b)
    names = list(dict.fromkeys([*offered, target.measure]))
    pair = stored_pair(study, target.run_a, target.run_b, names, query_ids=query_ids).pair
    decisions = [decide_measure(pair, name, target.run_a, target.run_b) for name in names]
    decision = decisions[names.index(target.measure)]
    if decision.verdict == "undecided":
        hint = mean_automatic_gains(automatic_labels(study, pair.query_ids))
        queue = decide_queue(pair, target.measure, limit=None, automatic=hint or None)
        items, n, needed = queue.items, queue.n_candidates, queue.labels_to_decide
    else:
        items, n, needed = [], 0, None
    return DecideState(target=target, decision=decision, decisions=decisions, items=items,
                       n_candidates=n, labels_to_decide=needed)


def next_queue_item(
    study: Study,
    items: Sequence[DecideItem],
    annotator: str,
    passed: Collection[tuple[str, str]] = (),
) -> DecideItem | None:
    """The first item of the queue the annotator can label now: not passed (skipped or
    can't-judge in this session) and not already labeled by them (a unit in conflict the
    annotator has a label on waits for a reviewer, not for another label of theirs).
    Passed items come back once nothing else is left."""
    later = None
    for item in items:
        if item.kind == "conflict":
            resolved = resolve_unit_in_store(study, item.query_id, item.unit_id)
            if resolved is not None and annotator in resolved.annotators:
                continue
        if (item.query_id, item.unit_id) in passed:
            later = later or item
            continue
        return item
    return later
