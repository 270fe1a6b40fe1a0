"""``evalcore compare``: what the evidence decides about two stored runs.

Always candidate − baseline (the baseline is the first of ``--runs`` unless ``--baseline``;
the output names it): the bottom line (:mod:`evalcore.analysis.bottom_line`) first, then
per measure the bounds, the head of the "to decide" queue and the paired tests on the
queries where both runs have the measure. Exit status: 0 success, 2 invalid input
(unknown store, study, run, measure).
"""

from __future__ import annotations

import json

import click

from evalcore.cli import main
from evalcore.cli.input_options import Args, command, option
from evalcore.cli.report_cmds import _fail, checked_inputs, level_option, queries_option
from evalcore.cli.store_cmds import actor_option, store
from evalcore.cli.store_location import NEW_OR_EXISTING_STORE
from evalcore.store.study_handle import open_study

FORMATS = ("table", "json")
#: The paired tests' fields in the JSON output, in this order.
PAIRED_FIELDS = (
    "n_queries",
    "n_paired",
    "n_excluded",
    "exclusions",
    "mean_delta",
    "tests",
    "summary",
    "selection_note",
)


def _json_output(pc, record, estimates, lines) -> dict:  # type: ignore[no-untyped-def]
    """The ``--format json`` document: the bottom line, the query set, then per measure the
    decision, the to-decide queue, the estimate (with --sample) and the paired tests."""
    from evalcore.analysis.bottom_line import DIFFERENCE, bottom_line
    from evalcore.estimation.stored import estimate_json

    found = {} if estimates is None else estimates.by_measure()
    measures = []
    for item in pc.measures:
        entry = {
            "decision": item.decision.model_dump(mode="json"),
            "to_decide": item.queue.model_dump(mode="json") if item.queue else None,
        }
        if estimates is not None:
            entry["estimate"] = estimate_json(found[item.measure])
        paired = item.paired.model_dump(mode="json")
        entry["paired_tests"] = {key: paired[key] for key in PAIRED_FIELDS}
        measures.append(entry)
    output = {
        "candidate": pc.run_a,
        "baseline": pc.run_b,
        "difference": DIFFERENCE,
        "bottom_line": bottom_line(pc, lines).model_dump(mode="json"),
        "query_set": record.model_dump(mode="json"),
        "measures": measures,
        "notes": pc.notes,
    }
    if estimates is not None:
        output["sample"] = estimates.sample
    return output


@command(main, "compare")
@option(
    "--db db_path",
    "The evidence store (a file or a postgresql:// URL).",
    required=True,
    type=NEW_OR_EXISTING_STORE,
)
@option("--study study_id", "Study id.", required=True)
@option(
    "--runs",
    "Two run names, comma-separated; the first is the baseline unless --baseline.",
    required=True,
)
@option(
    "--baseline",
    "Which of the two runs is the baseline (default: the first of --runs); "
    "every difference is candidate - baseline.",
)
@option(
    "-m --measure measures",
    "A measure, e.g. nDCG@10, P@5, RR@10 (repeat for several).",
    multiple=True,
    required=True,
)
@option("--reference", "A frozen reference version (default: working labels).")
@option(
    "--queue queue_size",
    "How many items of the to-decide queue to print per measure.",
    shown=5,
    type=click.IntRange(0, 1000),
)
@option("--format fmt", shown="table", choices=FORMATS)
@queries_option("both runs")
@option(
    "--sample sample_name",
    "A sample drawn for these runs (evalcore sample draw): also show, per "
    "measure and apart from the decided verdict, the estimate from its labels.",
)
@level_option
@option(
    "--automatic automatic",
    "With --sample: automatic judgments of source NAME as the estimator's "
    "predictions (never evidence: a wrong source widens the interval).",
    metavar="NAME",
)
@actor_option
def compare_command(a: Args) -> None:
    """The bottom line of a candidate run against the baseline, then the details."""
    from evalcore.analysis.decision import require_stored_depth, stored_pair
    from evalcore.analysis.pair_comparison import PairComparison, measure_verdicts
    from evalcore.analysis.query_set import QuerySetError, resolve_stored_query_set
    from evalcore.report.decision_text import render_pair

    runs, baseline, reference, sample_name = a.runs, a.baseline, a.reference, a.sample_name
    names = [r.strip() for r in runs.split(",") if r.strip()]
    if len(names) != 2 or names[0] == names[1]:
        _fail(
            f"--runs takes two different run names, comma-separated (e.g. --runs A,B); got {runs!r}"
        )
    if baseline is not None and baseline not in names:
        _fail(f"--baseline {baseline!r} is not one of --runs {names[0]!r}, {names[1]!r}")
    base = baseline if baseline is not None else names[0]
    candidate = names[1] if base == names[0] else names[0]
    parsed, spec = checked_inputs(a.db_path, a.measures, a.queries)
    if sample_name is not None and reference is not None:
        _fail("--sample estimates from the working labels; leave out --reference")
    if not 0 < a.level < 1:
        _fail(f"--level {a.level}: give a confidence level between 0 and 1, e.g. 0.95")
    if a.automatic is not None and sample_name is None:
        _fail("--automatic serves an estimate only: name the sample with --sample")
    estimates = None
    # an actor who may not see the study learns nothing of it (not even its run names)
    with store(a, read=True) as db:
        try:
            handle = open_study(db, a.study_id, a.actor)
            require_stored_depth(handle, names, parsed)
            query_set = resolve_stored_query_set(handle, names, spec, reference)
            scope = query_set.scope
            evaluated = stored_pair(handle, candidate, base, parsed, reference, query_ids=scope)
            if sample_name is not None:
                from evalcore.estimation.stored import estimate_stored

                estimates = estimate_stored(
                    handle,
                    sample_name,
                    candidate=candidate,
                    baseline=base,
                    measures=[m.canonical for m in parsed],
                    query_ids=evaluated.pair.query_ids,
                    **a.pick("level", "automatic"),
                )
        except QuerySetError as err:
            _fail(f"--queries: {err}")
        except LookupError as err:
            _fail(str(err.args[0]) if err.args else str(err))
        except ValueError as err:
            _fail(str(err))
    pair, notes = evaluated.pair, evaluated.notes()
    verdicts = measure_verdicts(pair, candidate, base, queue_limit=a.queue_size)
    record = query_set.record()
    pc = PairComparison(
        run_a=candidate,
        run_b=base,
        reference=reference,
        measures=verdicts,
        compat=[],
        compat_notes=[],
        notes=notes,
    )
    lines = None if estimates is None else estimates.line_estimates()
    if a.fmt == "json":
        click.echo(
            json.dumps(_json_output(pc, record, estimates, lines), indent=2, ensure_ascii=False)
        )
        return
    # the bottom line first; the query set it is over just before the details
    head, details = render_pair(pc, lines).split("\nDetails: ", 1)
    click.echo(f"{head}\n{record.describe()}\nDetails: {details}", nl=False)
    for note in notes:  # the corpus size that bounds open populations
        click.echo(f"note: {note}")
