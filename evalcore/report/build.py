"""Building a :class:`~evalcore.report.model.Report` from evaluated runs.

This layer is pure: it takes each run's :class:`EvaluationReport` and corpus
fingerprint, decides comparability with
:func:`evalcore.analysis.comparability.comparability` (the rule the Compare page
uses too), then compares the comparable runs with
:func:`evalcore.analysis.compare.compare_runs`. :mod:`evalcore.report.from_store` feeds it
from the evidence store.
"""

from collections.abc import Collection, Mapping
from datetime import UTC, datetime

from evalcore.analysis.comparability import (
    NotComparable,
    NotVerified,
    RunTerms,
    comparability,
    cutoff,
)
from evalcore.analysis.compare import ComparisonSettings, compare_runs
from evalcore.contract.evaluation_protocol import EvalProtocol
from evalcore.contract.frozen import FrozenModel
from evalcore.contract.results import EvaluationReport
from evalcore.contract.version import __version__
from evalcore.report.model import Report, ReportInternal, ReportRun


class RunInput(FrozenModel):
    """One run to report: its evaluation and the fingerprint of the corpus it searched."""

    evaluation: EvaluationReport
    corpus_fingerprint: str | None = None


def build_report(
    runs: Mapping[str, RunInput],
    *,
    name: str,
    study_id: str,
    protocol: EvalProtocol,
    created_by: str,
    reference_version: str | None = None,
    reference_hash: str | None = None,
    corpus_fingerprint: str | None = None,
    baseline: str | None = None,
    study_name: str = "",
    query_texts: Mapping[str, str] | None = None,
    internal: ReportInternal | None = None,
    settings: ComparisonSettings | None = None,
    created_at: datetime | None = None,
    accept_unverified: Collection[str] = (),
) -> Report:
    """Decide comparability and compare the comparable runs (see :mod:`evalcore.report.model`).

    ``baseline`` defaults to the first run; ``corpus_fingerprint`` defaults to
    the baseline's; ``settings`` (default :class:`ComparisonSettings`) says how
    the comparable runs are compared. ``accept_unverified`` names runs whose
    comparability is not verified that ``created_by`` accepts for comparison
    (recorded on each run and in the warnings; a run that is comparable or not
    comparable is unaffected). Raises ``ValueError`` on an empty run set, an
    unknown baseline or accepted run, or a blank ``created_by``.
    """
    names = list(runs)
    if not names:
        raise ValueError("a report needs at least one run")
    if not created_by.strip():
        raise ValueError("created_by is empty: say who generates the report")
    base = baseline if baseline is not None else names[0]
    if base not in runs:
        raise ValueError(f"baseline {base!r} is not one of the report's runs {names}")
    strangers = [n for n in accept_unverified if n not in runs]
    if strangers:
        raise ValueError(
            f"cannot accept {', '.join(map(repr, strangers))}: not among the report's runs {names}"
        )
    fingerprint = corpus_fingerprint if corpus_fingerprint is not None else (
        runs[base].corpus_fingerprint
    )
    frame = RunTerms(name=base, corpus_fingerprint=fingerprint, protocol=protocol,
                     k=cutoff(runs[base].evaluation))
    warnings: list[str] = []
    if fingerprint is None:
        warnings.append(
            "No corpus fingerprint is recorded: runs without one are compared, but that they "
            "searched the same corpus is not verified."
        )
    if protocol.unjudged_as_nonrelevant:
        warnings.append(
            "Compatibility policy unjudged_as_nonrelevant is ON: unlabeled returned units were "
            "counted as non-relevant (gain 0), as trec_eval does."
        )
    if protocol.trec_eval:
        warnings.append(
            "Compatibility mode trec_eval is ON: unlabeled returned units were counted as "
            "non-relevant, every population as complete, and queries with no relevant unit as 0."
        )

    report_runs: list[ReportRun] = []
    for run_name in names:
        item = runs[run_name]
        terms = RunTerms.of(run_name, item.evaluation, item.corpus_fingerprint)
        verdict = comparability(terms, frame, owner="the report's")
        unverified = isinstance(verdict, NotVerified)
        accepted = unverified and run_name in accept_unverified
        if accepted:
            warnings.append(
                f"{created_by} accepted run {run_name!r} for comparison although its "
                f"comparability is not verified: {verdict}."
            )
        report_runs.append(
            ReportRun(
                name=run_name,
                corpus_fingerprint=item.corpus_fingerprint,
                k=terms.k,
                n_queries=len(item.evaluation.queries),
                comparable=verdict.admitted(accepted),
                not_comparable_reason=str(verdict) if isinstance(verdict, NotComparable) else None,
                not_verified_reason=str(verdict) if unverified else None,
                accepted_unverified=accepted,
                evaluation=item.evaluation,
            )
        )
    comparable = {r.name: r.evaluation for r in report_runs if r.comparable}
    comparison = None
    note = None
    if len(comparable) >= 2:
        compare_base = base if base in comparable else next(iter(comparable))
        if compare_base != base:
            warnings.append(
                f"The baseline {base!r} is not comparable; comparisons use {compare_base!r}."
            )
        options = settings.model_dump() if settings is not None else {}
        comparison = compare_runs(
            comparable,
            baseline=compare_base if options.get("mode", "baseline") == "baseline" else None,
            **options,
        )
    else:
        note = (
            f"No comparison: {len(comparable)} comparable run(s); a comparison needs two runs "
            "over the same corpus, protocol and cutoff."
        )
    moment = (created_at or datetime.now(UTC)).astimezone(UTC)
    return Report(
        name=name,
        study_id=study_id,
        study_name=study_name,
        protocol=protocol,
        reference_version=reference_version,
        reference_hash=reference_hash,
        corpus_fingerprint=fingerprint,
        evalcore_version=__version__,
        created_at=moment.strftime("%Y-%m-%dT%H:%M:%SZ"),
        created_by=created_by,
        baseline=base,
        runs=report_runs,
        comparison=comparison,
        comparison_note=note,
        query_texts=dict(query_texts or {}),
        warnings=warnings,
        internal=internal,
    )

