"""``evalcore evaluate``: per-query metrics and aggregates of one run (contract section 7).

Input: observation JSONL, TREC qrels and run files, or a stored run (``--db``,
:mod:`evalcore.cli.store_source`). ``-m NAME`` names measures of the catalogue (contract
section 10), keyed by canonical name; without ``-m`` the section-7 set at ``--k`` keeps its
section-7 keys. ``--trec-eval`` is trec_eval's behaviour in one switch (unjudged units
non-relevant, populations complete, run queries without qrels ignored) and, like
``--complete`` and ``--unjudged-as-nonrelevant``, is printed in the output's ``protocol``.
Exit status: 0 success; 2 invalid input or options (every error on stderr as
``file:line: field: message``, nothing on stdout).

Each input source is a small function returning an :class:`~evalcore.api.inputs.EvalInput`
for a protocol and the named measures. JSON is written from the computed arrays by
:mod:`evalcore.api.report_text`: from clean TREC files to JSON the command never imports
pydantic.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import click

from evalcore.cli import main
from evalcore.cli.input_options import Args, command, option
from evalcore.cli.process_setup import skip_final_collection
from evalcore.cli.store_location import EXISTING_STORE
from evalcore.compute.evaluate import packing_depth
from evalcore.contract.gains import MAX_GAIN
from evalcore.contract.limits import MAX_K
from evalcore.contract.measures import Measure, UnknownMeasure, parse_measure
from evalcore.contract.protocol_choices import ProtocolChoices
from evalcore.io.trec_format import parse_gain_map

# The pydantic side (the report and error models) is imported by the
# paths that need it: TREC files to JSON (evalcore.api.report_text) need none of it.
if TYPE_CHECKING:
    from evalcore.api.inputs import EvalInput
    from evalcore.contract.evaluation_protocol import EvalProtocol
    from evalcore.io.errors import InputErrors

Measures = tuple[Measure, ...] | None
Loader = Callable[["EvalProtocol", Measures], "EvalInput"]


def observations_source(path: Path, protocol: EvalProtocol, measures: Measures) -> EvalInput:
    """Observation JSONL (contract section 2)."""
    from evalcore.api.inputs import packed
    from evalcore.io.observations_jsonl import read_observations  # only this source reads JSONL

    return packed(read_observations(path), protocol, min_depth=packing_depth(measures))


def _choose_source(given: Args) -> Loader:
    """Check that the options name exactly one input source; return its loader."""
    qrels, run, k, measures = given.qrels, given.run, given.k, given.measures
    trec_given = [name for name, v in (("--qrels", qrels), ("--run", run)) if v is not None]
    trec_only = [
        name
        for name, named in (
            ("--k", k is not None),
            ("--complete", given.complete),
            ("--gain-map", given.gain_map is not None),
            ("--trec-eval", given.trec_eval),
            ("--trec-eval-all-queries", given.all_queries),
        )
        if named
    ]
    if given.all_queries and not given.trec_eval:
        raise click.UsageError(
            "--trec-eval-all-queries is trec_eval's -c within --trec-eval: give --trec-eval too"
        )
    if given.db is not None or given.study is not None or given.reference is not None:
        from evalcore.cli.store_source import choose_store_source  # the store: only for --db

        file_options = [n for n, v in (("--observations", given.observations), ("--qrels", qrels))
                        if v is not None]
        return choose_store_source(given, file_options + trec_only)
    if (observations := given.observations) is not None:
        if trec_given or trec_only:
            raise click.UsageError(
                f"--observations cannot be combined with {', '.join(trec_given + trec_only)}: "
                "an observation file carries its own k, labels and completeness"
            )
        return lambda protocol, measures: observations_source(observations, protocol, measures)
    if qrels is None or run is None:
        if not trec_given and not trec_only:
            raise click.UsageError(
                "no input: give --observations FILE, or --qrels FILE --run FILE --k N"
            )
        missing = [name for name in ("--qrels", "--run") if name not in trec_given]
        raise click.UsageError(f"TREC input needs {' and '.join(missing)} as well")
    if k is None:
        uncut = [str(m) for m in measures or () if m.k is None]
        if measures is None:
            raise click.UsageError("TREC input needs --k N, the cutoff depth (e.g. --k 10)")
        if uncut:
            raise click.UsageError(
                f"-m {', '.join(uncut)} has no cutoff: give --k N, or name it with @k "
                f"(e.g. {uncut[0]}@10)"
            )
        k = packing_depth(measures)
    try:
        mapping = parse_gain_map(given.gain_map) if given.gain_map is not None else None
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--gain-map") from None
    return TrecFiles(qrels, run, k, complete=given.complete, all_queries=given.all_queries,
                     gain_map=mapping)


@dataclass(frozen=True)
class TrecFiles:
    """The TREC source: a loader (the Python API's :func:`~evalcore.api.inputs.trec_input`)
    and, for JSON out, the report text written without the models
    (:func:`~evalcore.api.report_text.trec_files_json`); its fields are both's arguments."""

    qrels: Path
    run: Path
    k: int
    complete: bool
    all_queries: bool
    gain_map: Mapping[int, int] | None

    def __call__(self, protocol: EvalProtocol, measures: Measures) -> EvalInput:
        from evalcore.api.inputs import trec_input

        return trec_input(**vars(self), protocol=protocol, min_depth=packing_depth(measures))

    def report_json(self, choices: ProtocolChoices, measures: Measures) -> str:
        """The report's JSON; raises :class:`~evalcore.io.errors.InputErrors`."""
        from evalcore.api.report_text import trec_files_json

        return trec_files_json(**vars(self), protocol=choices, measures=measures)


def _parse_measures(
    ctx: click.Context, param: click.Parameter, values: tuple[str, ...]
) -> Measures:
    """``-m`` values as measures (None when none is given); an unknown name exits 2."""
    if not values:
        return None
    try:
        return tuple(dict.fromkeys(parse_measure(v) for v in values))
    except UnknownMeasure as exc:
        raise click.BadParameter(str(exc), ctx=ctx, param=param) from None


_PATH = click.Path(dir_okay=False, path_type=Path)


@command(main, "evaluate")
@option("--observations", "Observation JSONL file (contract section 2).", type=_PATH)
@option("--qrels", "TREC qrels: query_id iteration doc_id gain.", type=_PATH)
@option(
    "--run",
    "TREC run: query_id Q0 doc_id rank score tag (with --db: the stored run's name).",
    type=_PATH,
)
@option(
    "--db",
    "Evidence store (a file or a postgresql:// URL): evaluate the stored run --run of --study.",
    type=EXISTING_STORE,
)
@option("--study", "Study id in the store (with --db).")
@option(
    "--actor",
    "Who is reading (with --db; default: the current user): they must be allowed to see "
    "the study.",
)
@option("--reference", "Frozen reference version (with --db; default: working).")
@option(
    "-m --measure measures",
    "A measure to compute (repeatable), e.g. -m nDCG@10 -m P@5 -m R@100; known: "
    "P@k, P(rel=r)@k, R@k, nDCG@k, RR@k (MRR@k), AP@k, Success@k, Judged@k, RBP(p=0.8)@k. "
    "Default: precision, recall, ndcg and reciprocal_rank at --k.",
    multiple=True,
    callback=_parse_measures,
    metavar="NAME",
)
@option(
    "--k",
    "Cutoff depth for TREC input (with -m: the cutoff of measures named without @k).",
    type=click.IntRange(1, MAX_K),
)
@option(
    "--complete",
    "Declare every qrels query's relevant population complete (enables recall, nDCG).",
    flag=True,
)
@option(
    "--corpus-size",
    "Units in the corpus (files only): on a population not declared complete, at most "
    "N minus the labeled and returned-unlabeled units outside the top k may be relevant, "
    "which bounds R, nDCG and AP (contract section 12; without it that number is "
    "unbounded). Replaces any corpus_size of the observations.",
    type=click.IntRange(0, MAX_K),
    metavar="N",
)
@option(
    "--unjudged-as-nonrelevant",
    "Compatibility policy for reproducing trec_eval: count unlabeled returned units "
    "as non-relevant. Printed in every output.",
    flag=True,
)
@option(
    "--trec-eval",
    "trec_eval's behaviour in one switch (TREC files): unjudged units non-relevant, "
    "every population complete, run queries without qrels and qrels queries without results "
    "ignored, queries without relevant units valued 0, text after a run line's tag ignored. "
    "Printed in every output.",
    flag=True,
)
@option(
    "--trec-eval-all-queries all_queries",
    "With --trec-eval: trec_eval's -c, every qrels query counts (no results: 0).",
    flag=True,
)
@option("--gain-map", "Map qrels gains into 0..4, e.g. '-1:0,5:4'.", metavar="SPEC")
@option(
    "--relevance-threshold",
    "Smallest gain that counts as relevant.",
    shown=1,
    type=click.IntRange(1, MAX_GAIN),
)
@option("--gain", "nDCG gain: the label value, or 2^g - 1.", shown="linear",
        choices=["linear", "exponential"])
@option("--format fmt", None, shown="json", choices=["json", "table"])
def evaluate_command(a: Args) -> None:
    """Evaluate a run: every metric per query, or why it is unavailable, and the aggregates."""
    load = _choose_source(a)
    choices = ProtocolChoices(
        relevance_threshold=a.relevance_threshold,
        gain=a.gain,  # type: ignore[arg-type]  # click.Choice guarantees the literal
        unjudged_as_nonrelevant=a.unjudged_as_nonrelevant,
        trec_eval=a.trec_eval,
        populations_declared_complete=a.complete,
    )
    if a.db is None:  # files in, text out: nothing for the exit's last collection to finalise
        skip_final_collection()
    elif a.corpus_size is not None:
        raise click.UsageError("--corpus-size is for files: a store knows its own corpus")
    if a.fmt == "json" and isinstance(load, TrecFiles) and a.corpus_size is None:
        from evalcore.io.trec import input_errors

        try:
            click.echo(load.report_json(choices, a.measures) + "\n", nl=False)
        except input_errors() as exc:  # (imports the error models only on an error)
            _input_failed(exc)
        return
    from evalcore.compute.evaluate import compute
    from evalcore.contract.evaluation_protocol import EvalProtocol
    from evalcore.io.errors import InputErrors

    protocol = EvalProtocol.of(choices)
    if a.db is not None:
        from evalcore.cli.store_source import with_study_settings

        protocol = with_study_settings(a.db, a.study, protocol)
    try:
        source = load(protocol, a.measures)
    except InputErrors as exc:
        _input_failed(exc)
    batch, diagnostics = source.batch, source.diagnostics
    if a.corpus_size is not None:  # an assumption about the data: recorded beside the numbers
        batch = batch.with_corpus_size(a.corpus_size)
        diagnostics = diagnostics.model_copy(update={"notes": [
            *diagnostics.notes, f"corpus size {a.corpus_size} (--corpus-size): bounds R, nDCG "
            "and AP on populations not declared complete"]})
    result = compute(batch, protocol, a.measures)
    if a.fmt == "json":
        from evalcore.api.report_text import report_text

        text = report_text(result, diagnostics.tied_score_pairs, diagnostics.notes) + "\n"
    else:
        from evalcore.report.text_table import render_table  # not needed for JSON

        text = render_table(result.to_report(diagnostics))
    click.echo(text, nl=False)


def _input_failed(exc: InputErrors) -> NoReturn:
    """Print every input error and what was done (nothing), and exit 2."""
    click.echo(str(exc), err=True)
    click.echo(
        f"evalcore evaluate: {'at least ' if exc.stopped else ''}{exc.total} input "
        "error(s); nothing was computed",
        err=True,
    )
    sys.exit(2)
