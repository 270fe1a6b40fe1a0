"""``evalcore report``: generate, store and export a report of stored runs.

The report is stored (immutable) and exported as HTML, JSON, CSV or the verdicts' CSV;
each compared pair's bottom line is printed first (candidate − baseline). Exports hold no
annotator names, notes or row ids unless ``--include-internal``. Exit status: 0 success,
1 refused, 2 invalid input (unknown study, run, reference or report; bad options).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import click

from evalcore.cli import main
from evalcore.cli.actor import default_actor
from evalcore.cli.input_options import Args, command, option
from evalcore.cli.store_location import NEW_OR_EXISTING_STORE
from evalcore.io.atomic import atomic_writer, private_mode
from evalcore.store.location import store_exists
from evalcore.store.study_handle import open_study

if TYPE_CHECKING:
    from evalcore.analysis.query_set import QuerySetSpec
    from evalcore.contract.measures import Measure

FORMATS = ("html", "json", "csv", "verdicts-csv")


def _infer_format(out: Path, fmt: str | None) -> str:
    if fmt is not None:
        return fmt
    suffix = out.suffix.lower().lstrip(".")
    return suffix if suffix in FORMATS else "html"


def _fail(message: str) -> NoReturn:
    click.echo(f"error: {message}", err=True)
    raise SystemExit(2)


def checked_inputs(
    db_path: Path, measures: tuple[str, ...], queries: str
) -> tuple[list[Measure], QuerySetSpec]:
    """The measures and the query set named, the store checked to exist: exit 2 if not."""
    from evalcore.analysis.query_set import QuerySetError, QuerySetSpec
    from evalcore.contract.measures import UnknownMeasure, parse_measure

    try:
        parsed = [parse_measure(m) for m in measures]
    except UnknownMeasure as err:
        _fail(str(err))
    try:
        spec = QuerySetSpec.parse(queries)
    except QuerySetError as err:
        _fail(f"--queries: {err}")
    if not store_exists(db_path):
        _fail(f"no store at {db_path}; give the path of an existing evidence store (--db)")
    return parsed, spec


def queries_option(answered_by: str) -> Callable:
    """``--queries SPEC``, the query set (``answered_by``: the runs "answered" asks of)."""
    return option(
        "--queries queries",
        f"The query set: all, judged (a relevant label), answered ({answered_by} "
        "returned a result), comma-separated query ids, or @FILE (one id a line).",
        shown="all",
        metavar="SPEC",
    )


level_option = option(
    "--level", "The confidence level of the --sample estimates.", shown=0.95, type=float
)


@command(main, "report")
@option(
    "--db db_path", "The evidence store (SQLite file).", required=True, type=NEW_OR_EXISTING_STORE
)
@option("--study", "Study id.", required=True)
@option("--runs", "Comma-separated run names; the first is the baseline unless --baseline.")
@option(
    "--reference",
    "Frozen reference version to evaluate against (omit: working labels, "
    "with a warning in the report).",
)
@option("--out", "Output file.", required=True, type=click.Path(dir_okay=False, path_type=Path))
@option("--format fmt", "Export format (default: from --out's suffix, else html).", choices=FORMATS)
@option(
    "--include-internal",
    "Include annotator names, notes and database row ids in the export.",
    flag=True,
)
@option("--name", "Report name (unique in the study).")
@option("--baseline", "Baseline run (default: the first of --runs).")
@option(
    "--pairwise",
    "Mark significance between every pair of runs (the earlier run of each pair is its baseline).",
    flag=True,
)
@option(
    "--test",
    "The test behind the table's significance marks.",
    shown="randomization",
    choices=["randomization", "paired_t"],
)
@option("--alpha", "Significance threshold after correction.", shown=0.05, type=float)
@option(
    "--correction",
    "Multiple-comparison correction per metric.",
    shown="holm",
    choices=["holm", "bonferroni", "none"],
)
@option(
    "--permutations",
    "Random sign assignments of the randomization test (above 20 pairs).",
    shown=10_000,
    type=click.IntRange(min=1),
)
@option("--seed", "Seed of the randomization test.", shown=0, type=int)
@option("--by created_by", "Who generates the report (default: $USER).")
@option("--stored", "Export the stored report of this name instead.")
@option(
    "--accept-unverified accept_unverified",
    "Compare RUN although its comparability is not verified (no corpus "
    "fingerprint recorded); the acceptance is recorded in the report. Repeatable.",
    multiple=True,
    metavar="RUN",
)
@option(
    "-m --measure measures",
    "A measure to report instead of the study's chosen ones, e.g. nDCG@10, "
    "Success@2, RBP(p=0.8)@3 (repeat for several; Judged@k is added beside each).",
    multiple=True,
    metavar="MEASURE",
)
@queries_option("every run")
@option(
    "--sample sample_name",
    "A sample drawn for a compared pair (evalcore sample draw): show its "
    "estimates apart from the decided verdicts.",
)
@level_option
def report_command(a: Args) -> None:
    """Generate a pinned report of stored runs, store it, and export it."""
    from evalcore.analysis.bottom_line import render_text
    from evalcore.analysis.compare import ComparisonSettings
    from evalcore.analysis.query_set import QuerySetError
    from evalcore.report.csv_export import render_csv, render_verdicts_csv
    from evalcore.report.from_store import report_from_store
    from evalcore.report.html import render_html
    from evalcore.report.measure_table import render_measures_text
    from evalcore.report.model import render_json
    from evalcore.report.stored import load_report, save_report
    from evalcore.report.text_table import clean
    from evalcore.store.connection import open_store
    from evalcore.store.reports import find_report
    from evalcore.store.scoping import require_study_view

    out, runs = a.out, a.runs
    parsed, spec = checked_inputs(a.db_path, a.measures, a.queries)
    if not out.parent.is_dir():  # before the report is stored: nothing half done
        _fail(
            f"--out {out}: the folder {out.parent} does not exist; create it first "
            "(nothing creates folders for you)"
        )
    author = a.created_by or default_actor()
    db = open_store(a.db_path)
    try:
        # the author must see the study (an unknown id lists only the studies they may see)
        require_study_view(db, author, a.study)
        handle = open_study(db, a.study, author)
        if a.stored is not None:
            runs_options = a.accept_unverified or a.measures or spec.kind != "all"
            if runs_options or runs is not None or a.sample_name is not None:
                _fail(
                    "give either --stored (export a stored report) or --runs "
                    "(with --accept-unverified, -m, --queries, --sample), not both"
                )
            row = find_report(handle, a.stored)
            report = load_report(handle, row.report_id)
            digest = row.content_hash
        else:
            names = [r.strip() for r in (runs or "").split(",") if r.strip()]
            if not names:
                _fail("--runs is required: comma-separated run names of the study, e.g. --runs A,B")
            mode = "pairwise" if a.pairwise else "baseline"
            tests = a.pick("test", "alpha", "correction", "permutations", "seed")
            report = report_from_store(
                handle,
                runs=names,
                created_by=author,
                settings=ComparisonSettings(mode=mode, **tests),
                accept_unverified=list(a.accept_unverified),
                measures=parsed or None,
                queries=spec,
                sample=a.sample_name,
                **a.pick("reference", "name", "baseline", "level"),
            )
            digest = save_report(db, report).content_hash
    except LookupError as err:  # KeyError quotes str(err): show the message itself
        _fail(str(err.args[0]) if err.args else str(err))
    except QuerySetError as err:
        _fail(f"--queries: {err}")
    except ValueError as err:
        _fail(str(err))
    except PermissionError as err:  # evalcore.access.PermissionDenied: not allowed
        click.echo(f"refused: {err}", err=True)
        sys.exit(1)
    finally:
        db.conn.close()
    kind = _infer_format(out, a.fmt)
    if kind in ("html", "json"):
        render = render_html if kind == "html" else render_json
        text = render(report, include_internal=a.include_internal)
    else:
        text = (render_csv if kind == "csv" else render_verdicts_csv)(report)
    # via a temporary file (a failure leaves no partial file), no more readable than the store
    with atomic_writer(out, newline="", mode=private_mode(a.db_path)) as target:
        target.write(text)
    compared = sum(1 for r in report.runs if r.comparable)
    for line in report.pair_bottom_lines():
        click.echo(render_text(line, clean))
    click.echo(
        f"report {report.name!r} ({digest}): {len(report.runs)} run(s), {compared} comparable; "
        f"{kind.upper()} written to {out}"
    )
    if report.query_set is not None:
        click.echo(report.query_set.describe())
    click.echo(render_measures_text(report), nl=False)
    for run in report.runs:
        label, reason = run.status()
        if label == "comparability not verified":
            reason = f"{reason} (--accept-unverified {run.name} to compare it)"
        if reason is not None:
            click.echo(f"  {label}: {run.name}: {reason}")
    for note in report.notes:
        click.echo(f"note: {note}")
    for warning in report.warnings:
        click.echo(f"warning: {warning}", err=True)
