"""Building a report from the evidence store.

Each run is evaluated (:func:`evalcore.analysis.run_evaluation.evaluate_run_measures`)
against the named frozen reference version, or the working labels with a warning that
the numbers can still change, under the study's protocol, on the study's chosen measures
(or those asked for) with Judged@k beside each; a measure deeper than a run's k is left
out for that run, with a warning. Internal data (run row ids, who froze the reference,
annotators per query and their notes) goes to
:class:`~evalcore.report.model.ReportInternal`. For each compared pair
:func:`decisions_of` adds what the evidence decides on the same measures and reference.
"""

from collections.abc import Sequence
from datetime import datetime

from evalcore.analysis.bottom_line import BottomLine, bottom_line
from evalcore.analysis.compare import ComparisonSettings
from evalcore.analysis.decision import fits_depth
from evalcore.analysis.pair_comparison import PairComparison, compare_pair
from evalcore.analysis.query_set import QuerySetSpec, resolve_stored_query_set
from evalcore.analysis.run_evaluation import evaluate_run_measures
from evalcore.contract.measures import DEFAULT_MEASURES, Measure, parse_measure
from evalcore.estimation.stored import estimate_stored
from evalcore.report.build import RunInput, build_report
from evalcore.report.model import AnnotatorNote, Report, ReportInternal
from evalcore.store.labels import noted_label_events, query_annotators
from evalcore.store.population import study_population
from evalcore.store.query_reads import query_texts
from evalcore.store.references import get_reference
from evalcore.store.runs import get_run
from evalcore.store.samples import get_sample
from evalcore.store.study_handle import Study
from evalcore.store.study_measures import shown_measures, study_measures

#: The warning of a report computed on the working labels.
_UNPINNED = ("Not pinned to a frozen reference version: computed on the working labels, which "
             "can change as labeling continues. Freeze a reference version for a report you "
             "can defend.")

def report_from_store(
    study: Study,
    *,
    runs: Sequence[str],
    created_by: str,
    reference: str | None = None,
    name: str | None = None,
    baseline: str | None = None,
    corpus_fingerprint: str | None = None,
    settings: ComparisonSettings | None = None,
    created_at: datetime | None = None,
    accept_unverified: Sequence[str] = (),
    measures: Sequence[Measure | str] | None = None,
    queries: QuerySetSpec | str | None = None,
    sample: str | None = None,
    level: float = 0.95,
) -> Report:
    """Evaluate the named runs of a study and build their report (nothing is stored).

    The ``study`` handle's actor was allowed to read the study when it was opened; a
    report holds no document text. Unknown study, run or reference version raise the
    store's ``LookupError`` subclasses (listing what exists); a measure that does not
    parse, :class:`~evalcore.contract.measures.UnknownMeasure`; a query set ``queries``
    (default ``all``, recorded in the report) that does not resolve,
    :class:`~evalcore.analysis.query_set.QuerySetError`. ``name`` defaults to
    ``"<runs> @ <reference> <created_at>"``; ``accept_unverified``: see
    :func:`~evalcore.report.build.build_report`. ``sample`` names a stored sample
    (contract section 13) whose estimates at confidence ``level`` each pair it was drawn
    for shows apart from the decided verdict.
    """
    chosen = (
        study_measures(study)
        if measures is None
        else [m if isinstance(m, Measure) else parse_measure(m) for m in measures]
    )
    if not chosen:
        raise ValueError("no measure named: give one or more, e.g. 'P@10, nDCG@10'")
    chosen = list(dict.fromkeys(chosen))
    names = list(dict.fromkeys(runs))
    query_set = resolve_stored_query_set(study, names, queries, reference) if names else None
    if sample is not None and reference is not None:
        raise ValueError("a sample estimates from the working labels; leave out --reference")
    if not names:
        raise ValueError("no runs named: give at least one run of the study")
    protocol = study.settings.protocol()
    version = get_reference(study, reference) if reference is not None else None
    run_infos = [get_run(study, run_name) for run_name in names]
    scope = None if query_set is None else query_set.scope
    shown = shown_measures(chosen)
    inputs: dict[str, RunInput] = {}
    chosen_values = {}
    too_deep: list[str] = []
    for info in run_infos:
        fits = [m for m in shown if fits_depth(m, info.k)]
        too_deep += [f"{m.canonical} is deeper than run {info.name!r}'s depth {info.k}: not "
                     "shown for it" for m in chosen if m not in fits]
        evaluation, chosen_values[info.name] = evaluate_run_measures(
            study, info.name, reference, protocol, fits, query_ids=scope
        )
        inputs[info.name] = RunInput(evaluation=evaluation, corpus_fingerprint=info.corpus_fingerprint)
    internal = _internal(study, {i.name: i.run_id for i in run_infos})
    if version is not None:
        internal = internal.model_copy(update={"reference_created_by": version.created_by})
    report = build_report(
        inputs,
        name=name or "",
        study_id=study.study_id,
        study_name=study.settings.name,
        protocol=protocol,
        created_by=created_by,
        reference_version=reference,
        reference_hash=version.content_hash if version is not None else None,
        corpus_fingerprint=corpus_fingerprint,
        baseline=baseline,
        query_texts=query_texts(study),
        internal=internal,
        settings=settings,
        created_at=created_at,
        accept_unverified=accept_unverified,
    )
    runs = [r.model_copy(update={"measure_values": chosen_values[r.name]}) for r in report.runs]
    report = report.model_copy(update={"measures": [m.canonical for m in chosen], "runs": runs})
    decisions = decisions_of(study, report, query_ids=scope)
    updates: dict[str, object] = {
        "decisions": decisions,
        "bottom_lines": [bottom_line(pc) for pc in decisions],
        "query_set": None if query_set is None else query_set.record(),
        "notes": study_population(study).size_notes(),
    }
    if sample is not None:
        updates["bottom_lines"] = sample_bottom_lines(study, sample, decisions, level, scope)
        updates["notes"] = [
            *updates["notes"],
            (  # type: ignore[misc]
                f"estimates from sample {sample!r} ({level:.0%} confidence) are shown apart from "
                "the decided verdicts: they are never evidence"
            ),
        ]
    if not name:
        updates["name"] = f"{', '.join(names)} @ {reference or 'working labels'} {report.created_at}"
    unpinned = [] if reference is not None else [_UNPINNED]
    if unpinned or too_deep:
        updates["warnings"] = [*unpinned, *report.warnings, *too_deep]
    return report.model_copy(update=updates)


def sample_bottom_lines(
    study: Study,
    sample: str,
    decisions: Sequence[PairComparison],
    level: float,
    scope: Sequence[str] | None,
) -> list[BottomLine]:
    """Each pair's bottom line with the estimates of stored ``sample`` for the pair it was
    drawn for (on the measures both name); ValueError when it was drawn for no compared
    pair or none of the report's measures."""
    stored = get_sample(study, sample)
    lines, used = [], False
    for pc in decisions:
        shown = [item.measure for item in pc.measures if item.measure in stored.measures]
        if {pc.run_a, pc.run_b} != {stored.run_a, stored.run_b} or not shown:
            lines.append(bottom_line(pc))
            continue
        found = estimate_stored(
            study,
            sample,
            candidate=pc.run_a,
            baseline=pc.run_b,
            measures=shown,
            level=level,
            query_ids=scope,
        )
        lines.append(bottom_line(pc, found.line_estimates()))
        used = True
    if not used:
        raise ValueError(
            f"sample {sample!r} was drawn for {stored.run_a} vs {stored.run_b} on "
            f"{', '.join(stored.measures)}: the report compares no such pair on those "
            "measures; name those runs and measures, or another sample"
        )
    return lines


#: Items of each measure's to-decide queue a report keeps.
REPORT_QUEUE = 5


def decisions_of(
    study: Study, report: Report, *, query_ids: Sequence[str] | None = None
) -> list[PairComparison]:
    """What the evidence decides for each pair the report compares (candidate − baseline,
    as its comparison orders them: each run minus the baseline), on the report's measures
    (the section-7 ones when it names none) at the compared runs' cutoff; a measure deeper than that cutoff is left out.
    ``query_ids``: the report's query set (None: the study's queries)."""
    if report.comparison is None:
        return []
    pairs = list(dict.fromkeys((c.run_a, c.run_b) for c in report.comparison.comparisons))
    k = report.run(pairs[0][0]).k if pairs else None
    chosen = [parse_measure(name) for name in report.measures] or list(DEFAULT_MEASURES)
    measures = [
        m.canonical if m.k is not None or k is None else f"{m.canonical}@{k}"
        for m in chosen if m.family != "Judged" and (k is None or fits_depth(m, k))
    ]
    if not measures:
        return []
    return [
        compare_pair(
            study,
            a,
            b,
            measures,
            report.reference_version,
            queue_limit=REPORT_QUEUE,
            query_ids=query_ids,
        )
        for a, b in pairs
    ]


def _internal(study: Study, run_ids: dict[str, int]) -> ReportInternal:
    """Run row ids, annotators per query and annotator notes (two indexed scans)."""
    annotators = query_annotators(study)
    notes = [AnnotatorNote.model_validate(e, from_attributes=True) for e in noted_label_events(study)]
    return ReportInternal(run_ids=run_ids, annotators=dict(annotators), notes=notes)
