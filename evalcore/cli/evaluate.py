"""``evalcore evaluate``: per-query metrics and aggregates of one run (contract section 7).

    evalcore evaluate --observations run.jsonl
    evalcore evaluate --qrels qrels.txt --run run.txt --k 10 [--complete]
                      [--unjudged-as-nonrelevant] [--gain-map "-1:0,5:4"]
    evalcore evaluate --db store.db --study S --run R [--reference v1]   (see cli.store_source)

Protocol options: ``--relevance-threshold`` (1..4), ``--gain linear|exponential``,
``--unjudged-as-nonrelevant`` (the trec_eval compatibility policy; printed in
every output). ``--complete`` is an assumption about the data and is printed
too: ``"populations_declared_complete": true`` in the JSON ``protocol`` and a
line in the table's header (absent when off, so those outputs are unchanged). ``--format json`` (default) prints the section-7 report on
stdout: ``protocol``, ``queries``, ``aggregates`` and ``diagnostics`` (tied
score pairs, returned duplicates, reader notes). ``--format table`` prints a
plain-text table.

Exit status: 0 success; 2 invalid input or options. On invalid input every
error is printed on stderr as ``file:line: field: message`` and nothing is
printed on stdout.

Input sources are small functions returning an :class:`EvalInput` (a packed
batch plus reader diagnostics); a new source (e.g. a store) adds its options,
a branch in :func:`_choose_source` and one such function. A source that has
:class:`~evalcore.contract.observation.Observation` objects packs them with
:func:`~evalcore.cli.eval_input.packed`.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import click

from evalcore.cli import main
from evalcore.cli.eval_input import EvalInput, packed
from evalcore.cli.store_source import choose_store_source, with_study_settings
from evalcore.compute.batch import ObservationBatch
from evalcore.compute.evaluate import evaluate_batch
from evalcore.contract.evaluation_protocol import EvalProtocol
from evalcore.contract.observation import MAX_K
from evalcore.contract.results import EvaluationReport
from evalcore.io.errors import InputErrors
from evalcore.io.observations_jsonl import read_observations
from evalcore.io.trec import (
    parse_gain_map,
    read_qrels,
    read_run,
    trec_columns,
    trec_diagnostics,
)
from evalcore.report.text_table import render_table


def observations_source(path: Path, protocol: EvalProtocol) -> EvalInput:
    """Observation JSONL (contract section 2)."""
    return packed(read_observations(path), protocol)


def trec_source(
    qrels_path: Path,
    run_path: Path,
    k: int,
    *,
    complete: bool,
    gain_map: dict[int, int] | None,
    protocol: EvalProtocol,
) -> EvalInput:
    """TREC qrels + run (contract section 8), packed without building observations."""
    errors: list[InputErrors] = []
    qrels = run = None
    try:
        qrels = read_qrels(qrels_path, gain_map)
    except InputErrors as exc:
        errors.append(exc)
    try:
        run = read_run(run_path)
    except InputErrors as exc:
        errors.append(exc)
    if errors or qrels is None or run is None:
        raise InputErrors(
            [e for exc in errors for e in exc.errors], sum(exc.total for exc in errors)
        )
    cols = trec_columns(qrels, run, complete=complete)
    batch = ObservationBatch.from_columns(
        cols.query_ids,
        k,
        cols.returned_ids,
        cols.label_ids,
        cols.label_gains,
        cols.population_complete,
        protocol=protocol,
    )
    return EvalInput(batch, trec_diagnostics(qrels, run))


def _choose_source(
    *,
    observations: Path | None,
    qrels: Path | None,
    run: Path | None,
    k: int | None,
    complete: bool,
    gain_map: str | None,
    db: Path | None = None,
    study: str | None = None,
    reference: str | None = None,
) -> Callable[[EvalProtocol], EvalInput]:
    """Check that the options name exactly one input source; return its loader."""
    trec_given = [name for name, v in (("--qrels", qrels), ("--run", run)) if v is not None]
    trec_only = [
        name
        for name, given in (
            ("--k", k is not None),
            ("--complete", complete),
            ("--gain-map", gain_map is not None),
        )
        if given
    ]
    if db is not None or study is not None or reference is not None:
        file_options = [n for n, v in (("--observations", observations), ("--qrels", qrels))
                        if v is not None]
        return choose_store_source(
            db=db, study=study, run=run, reference=reference, file_options=file_options + trec_only
        )
    if observations is not None:
        if trec_given or trec_only:
            raise click.UsageError(
                f"--observations cannot be combined with {', '.join(trec_given + trec_only)}: "
                "an observation file carries its own k, labels and completeness"
            )
        return lambda protocol: observations_source(observations, protocol)
    if qrels is None or run is None:
        if not trec_given and not trec_only:
            raise click.UsageError(
                "no input: give --observations FILE, or --qrels FILE --run FILE --k N"
            )
        missing = [name for name in ("--qrels", "--run") if name not in trec_given]
        raise click.UsageError(f"TREC input needs {' and '.join(missing)} as well")
    if k is None:
        raise click.UsageError("TREC input needs --k N, the cutoff depth (e.g. --k 10)")
    try:
        mapping = parse_gain_map(gain_map) if gain_map is not None else None
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--gain-map") from None
    return lambda protocol: trec_source(
        qrels, run, k, complete=complete, gain_map=mapping, protocol=protocol
    )


def report_json(report: EvaluationReport) -> str:
    """The section-7 JSON; ``unjudged_as_nonrelevant`` appears in ``protocol`` only when on."""
    exclude = None
    if not report.protocol.unjudged_as_nonrelevant:
        exclude = {"protocol": {"unjudged_as_nonrelevant"}}
    return report.model_dump_json(exclude=exclude)


_PATH = click.Path(dir_okay=False, path_type=Path)


@main.command("evaluate")
@click.option("--observations", type=_PATH, help="Observation JSONL file (contract section 2).")
@click.option("--qrels", type=_PATH, help="TREC qrels: query_id iteration doc_id gain.")
@click.option(
    "--run",
    type=_PATH,
    help="TREC run: query_id Q0 doc_id rank score tag (with --db: the stored run's name).",
)
@click.option(
    "--db",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Evidence store: evaluate the stored run --run of --study.",
)
@click.option("--study", help="Study id in the store (with --db).")
@click.option("--reference", help="Frozen reference version (with --db; default: working).")
@click.option("--k", type=click.IntRange(1, MAX_K), help="Cutoff depth for TREC input.")
@click.option(
    "--complete",
    is_flag=True,
    help="Declare every qrels query's relevant population complete (enables recall, nDCG).",
)
@click.option(
    "--unjudged-as-nonrelevant",
    is_flag=True,
    help="Compatibility policy for reproducing trec_eval: count unlabeled returned units "
    "as non-relevant. Printed in every output.",
)
@click.option(
    "--gain-map",
    metavar="SPEC",
    help="Map qrels gains into 0..4, e.g. '-1:0,5:4'.",
)
@click.option(
    "--relevance-threshold",
    type=click.IntRange(1, 4),
    default=1,
    show_default=True,
    help="Smallest gain that counts as relevant.",
)
@click.option(
    "--gain",
    type=click.Choice(["linear", "exponential"]),
    default="linear",
    show_default=True,
    help="nDCG gain: the label value, or 2^g - 1.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["json", "table"]),
    default="json",
    show_default=True,
)
def evaluate_command(
    observations: Path | None,
    qrels: Path | None,
    run: Path | None,
    db: Path | None,
    study: str | None,
    reference: str | None,
    k: int | None,
    complete: bool,
    unjudged_as_nonrelevant: bool,
    gain_map: str | None,
    relevance_threshold: int,
    gain: str,
    fmt: str,
) -> None:
    """Evaluate a run: every metric per query, or why it is unavailable, and the aggregates."""
    load = _choose_source(
        observations=observations,
        qrels=qrels,
        run=run,
        k=k,
        complete=complete,
        gain_map=gain_map,
        db=db,
        study=study,
        reference=reference,
    )
    protocol = EvalProtocol(
        relevance_threshold=relevance_threshold,
        gain=gain,  # type: ignore[arg-type]  # click.Choice guarantees the literal
        unjudged_as_nonrelevant=unjudged_as_nonrelevant,
        populations_declared_complete=complete,
    )
    if db is not None:
        protocol = with_study_settings(db, study, protocol)
    try:
        source = load(protocol)
    except InputErrors as exc:
        click.echo(str(exc), err=True)
        click.echo(
            f"evalcore evaluate: {'at least ' if exc.stopped else ''}{exc.total} input "
            "error(s); nothing was computed",
            err=True,
        )
        sys.exit(2)
    report = evaluate_batch(source.batch, protocol, diagnostics=source.diagnostics)
    text = report_json(report) + "\n" if fmt == "json" else render_table(report)
    click.echo(text, nl=False)
