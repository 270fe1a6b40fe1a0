"""Evidence-store commands: init, study, import, export, complete, reference.

Exit status: 0 success; 1 refused; 2 invalid input (every error on stderr as
``file:line: field: message``; each import is one transaction, so nothing is written) or
an unknown study, run or reference (named, with the known ones).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click
import sqlite_utils
from pydantic import ValidationError

from evalcore.access.decisions import PermissionDenied
from evalcore.cli import SharedGroup, main
from evalcore.cli.actor import default_actor
from evalcore.cli.input_options import (
    Args,
    command,
    command_name,
    limit_options,
    option,
    quiet_option,
)
from evalcore.cli.store_location import EXISTING_STORE, NEW_OR_EXISTING_STORE
from evalcore.contract.gains import MAX_GAIN
from evalcore.contract.limits import clipped
from evalcore.contract.observation import MAX_K
from evalcore.io.errors import InputErrors, validation_messages
from evalcore.io.progress import reporter
from evalcore.io.text_lines import read_source
from evalcore.io.tool_labels import TOOL_FORMATS
from evalcore.io.trec import parse_gain_map
from evalcore.io.trec_format import QRELS_FIELDS, RUN_FIELDS
from evalcore.store.authorize import require_known_study
from evalcore.store.connection import open_store
from evalcore.store.exports import (
    ExportRefusedError,
    export_labels,
    export_qrels,
    export_run,
    export_tool_labels,
)
from evalcore.store.imports import (
    ImportSummary,
    import_beir,
    import_labels,
    import_observations,
    import_qrels,
    import_run,
)
from evalcore.store.location import describe_store, is_postgres_url
from evalcore.store.references import ReferenceNotFoundError, freeze_reference, list_references
from evalcore.store.runs import RunNotFoundError
from evalcore.store.schema import SchemaTooNewError, schema_version
from evalcore.store.scoping import require_study_view
from evalcore.store.studies import StudyIn, StudyNotFoundError
from evalcore.store.study_handle import open_study
from evalcore.store.study_setup import create_study

_FILE = click.Path(exists=True, dir_okay=False, path_type=Path)
#: The input file every import but ``beir`` and ``study`` reads.
path_argument = click.argument("path", type=_FILE)


db_option = option(
    "--db db_path", "The store (created with `evalcore init`).", required=True, type=EXISTING_STORE
)
actor_option = option(
    "--actor",
    "Who does this (recorded in the audit log).",
    default=default_actor,
    show_default="the current user",
)


def study_options(fn: Callable) -> Callable:
    """--db and --study: the options of every command on one study."""
    return db_option(option("--study study_id", "The study id.", required=True)(fn))


def import_options(fn: Callable) -> Callable:
    """The read limits, --quiet and --actor: the last options of every import."""
    return limit_options(quiet_option(actor_option(fn)))


def fail(lines: list[str], summary: str) -> None:
    reporter().done()  # the progress bar's line, before the messages
    for line in lines:
        click.echo(line, err=True)
    click.echo(summary, err=True)
    sys.exit(2)


#: The store's errors whose message names the unknown study, run or reference, or the refusal.
NAMED_ERRORS = (StudyNotFoundError, RunNotFoundError, ReferenceNotFoundError, ExportRefusedError)


@contextmanager
def store(
    args: Args, *, read: bool = False, refused: str = "written", command: str | None = None
) -> Iterator[sqlite_utils.Database]:
    """Open the store ``args.db_path``; turn the store's user errors into exit status 2 with a
    clear message naming ``command`` (default: the one running).

    With ``args.study_id``, an unknown study is reported listing only the studies
    ``args.actor`` may see; with ``read`` too, the actor must be allowed to see the
    study before anything is read (writes are authorised by the store itself).
    Every command that names a study passes it, so none prints a study's data,
    or the ids of studies they may not see, to a non-member. A refusal says nothing was
    ``refused`` ("written", or "changed" for the access commands) or shown.
    """
    command = command or command_name()
    study_id, actor = getattr(args, "study_id", None), getattr(args, "actor", None)
    try:
        db = open_store(args.db_path)
    except SchemaTooNewError as exc:
        fail([f"error: {exc}"], f"evalcore {command}: cannot open {describe_store(args.db_path)}")
    try:
        if study_id is not None:
            require_known_study(db, actor, study_id)
            if read:
                require_study_view(db, actor, study_id)
        yield db
    except InputErrors as exc:
        at_least = "at least " if exc.stopped else ""
        summary = f"{at_least}{exc.total} input error(s); nothing was written"
        fail(str(exc).splitlines(), f"evalcore {command}: {summary}")
    except ValidationError as exc:  # values typed on the command line
        fail(
            [f"error: {m}" for m in validation_messages(exc)],
            f"evalcore {command}: nothing was written",
        )
    except (*NAMED_ERRORS, ValueError) as exc:
        fail([f"error: {clipped(str(exc))}"], f"evalcore {command}: nothing was written")
    except PermissionDenied as exc:
        click.echo(f"refused: {exc}", err=True)
        click.echo(f"evalcore {command}: nothing was {refused} or shown", err=True)
        sys.exit(1)
    finally:
        db.conn.close()


def gain_map(args: Args) -> dict[int, int] | None:
    """``--gain-map`` parsed (None when not given)."""
    if args.gain_map is None:
        return None
    try:
        return parse_gain_map(args.gain_map)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--gain-map") from None


def report_import(summary: ImportSummary) -> None:
    reporter().done()
    for line in summary.lines():
        click.echo(line)


def import_file(
    a: Args,
    importer: Callable,
    *names: str,
    fields: Sequence[str] = (),
    command: str | None = None,
    **given: Any,
) -> None:
    """Read the file ``a.path`` and import it with ``importer``, which takes
    :data:`IMPORT_KEYWORDS` and ``names`` from ``a``, and ``given``; print the summary."""
    with store(a, command=command) as db:
        source = read_source(a.path, limits=a.limits, fields=fields)
        report_import(importer(db, source, **a.pick(*IMPORT_KEYWORDS, *names), **given))


# --- init / study ---------------------------------------------------------------------------


@command(main, "init")
@option(
    "--db db_path",
    "Path (or postgresql:// URL) of the store to create (or to migrate, if it exists).",
    type=NEW_OR_EXISTING_STORE,
    required=True,
)
@option("--study study_id", "Also create this study (with --corpus), as `study create` does.")
@option("--corpus corpus_id", "The corpus of the study to create.")
@actor_option
def init_command(a: Args) -> None:
    """Create an evidence store (an SQLite file or a PostgreSQL database given by its URL),
    or bring an existing one up to date."""
    if (a.study_id is None) != (a.corpus_id is None):
        raise click.UsageError("give --study and --corpus together (or neither)")
    if is_postgres_url(a.db_path):
        probe = open_store(a.db_path, migrate=False)
        existed = schema_version(probe) > 0
        probe.conn.close()
    else:
        existed = Path(a.db_path).exists()
    with store(Args(db_path=a.db_path)) as db:
        version = schema_version(db)
    created = "migrated" if existed else "created"
    click.echo(f"{created} store {describe_store(a.db_path)} (schema version {version})")
    if a.study_id is not None:
        _create_study(a)


@main.group("study")
def study_group() -> None:
    """Create and list studies."""


@command(study_group, "create")
@study_options
@option("--corpus corpus_id", "The corpus id the study judges.", required=True)
@option("--name", "A readable name (default: the study id).", default="")
@option(
    "--unit retrieval_unit", "The retrieval unit (document, passage, chunk, ...).", shown="document"
)
@option(
    "--threshold relevance_threshold",
    "Smallest gain that counts as relevant.",
    shown=1,
    type=click.IntRange(1, MAX_GAIN),
)
@option("--gain", "nDCG gain mode.", shown="linear", choices=["linear", "exponential"])
@option("--org org_id", "Owning organisation id.")
@actor_option
def study_create(a: Args) -> None:
    """Create a study (an existing study id is refused, never overwritten)."""
    _create_study(a)


def _create_study(a: Args) -> None:
    """Create the study the options but --db and --actor describe (named like
    :class:`StudyIn`'s fields)."""
    from evalcore.store.audit import record_audit
    from evalcore.store.transaction import write_transaction

    settings = {k: v for k, v in vars(a).items() if k not in ("db_path", "actor")}
    with store(Args(db_path=a.db_path), command="study create") as db:
        study = StudyIn(**settings)
        with write_transaction(db):
            create_study(db, study, actor=a.actor)
            record_audit(
                db,
                actor=a.actor,
                action="study.create",
                study_id=study.study_id,
                detail=study.model_dump(),
            )
    click.echo(f"created study {study.study_id} on corpus {study.corpus_id}")


@command(study_group, "measures")
@study_options
@option(
    "--set chosen",
    "Comma-separated measures, e.g. 'P@10,nDCG@10,MRR@10' (lead only). "
    "Without it, list the study's measures.",
    metavar="NAMES",
)
@actor_option
def study_measures_command(a: Args) -> None:
    """List the measures the study reports, or set them (--set; recorded in the audit log).

    Judged@k is shown beside them wherever they are shown.
    """
    from evalcore.store.study_measures import (
        measure_label,
        parse_measure_list,
        set_study_measures,
        shown_measures,
        study_measures,
    )

    with store(a, read=True) as db:
        if a.chosen is not None:
            chosen = parse_measure_list(a.chosen)
            set_study_measures(db, study_id=a.study_id, measures=chosen, actor=a.actor)
        measures = study_measures(open_study(db, a.study_id, a.actor))
    if a.chosen is not None:
        click.echo(f"measures of study {a.study_id} set")
    for m in shown_measures(measures):
        note = "" if m.k is not None else " (k: each run's cutoff)"
        shown = "" if m in measures else " (shown beside the others)"
        click.echo(f"{measure_label(m, aggregate=True)}{note}{shown}")


@command(study_group, "list")
@db_option
@actor_option
def study_list(a: Args) -> None:
    """List the studies --actor may see (JSON lines): local-mode ones and their team studies."""
    from evalcore.store.scoping import visible_studies

    with store(a) as db:
        for study in visible_studies(db, a.actor):
            click.echo(study.model_dump_json())


# --- import ---------------------------------------------------------------------------------


@main.group("import", cls=SharedGroup)
def import_group() -> None:
    """Import evidence into a study (each import is all or nothing)."""


unknown_ids_option = option(
    "--allow-unknown-ids",
    "Accept unit ids that are not in the study's corpus (checked only when it has documents).",
    flag=True,
)
gain_map_option = option("--gain-map", "Map gains into 0..4, e.g. '-1:0,5:4'.", metavar="SPEC")
#: What every import into a study passes on to its importer, named alike.
IMPORT_KEYWORDS = ("study_id", "allow_unknown_ids", "actor")


@command(import_group, "qrels")
@study_options
@path_argument
@option("--annotator", "Annotator of the labels (default qrels:<file>).")
@option("--complete", "Declare every qrels query's population complete.", flag=True)
@gain_map_option
@unknown_ids_option
@import_options
def import_qrels_command(a: Args) -> None:
    """TREC qrels (query_id iteration doc_id gain) -> label events; plain or compressed."""
    mapping = gain_map(a)
    import_file(a, import_qrels, "annotator", "complete", fields=QRELS_FIELDS, gain_map=mapping)


@command(import_group, "run")
@study_options
@path_argument
@option("--k", "The run's cutoff depth.", type=click.IntRange(1, MAX_K), required=True)
@option("--name", "Run name (default: the run tag, or the file name).")
@option("--corpus-fingerprint", "Fingerprint of the corpus searched.")
@option(
    "--partial-scan",
    "The retrieval did not scan the whole corpus (every metric unavailable).",
    flag=True,
)
@unknown_ids_option
@import_options
def import_run_command(a: Args) -> None:
    """TREC run (query_id Q0 doc_id rank score tag) -> a stored run; plain or compressed."""
    names = ("k", "name", "corpus_fingerprint")
    import_file(a, import_run, *names, fields=RUN_FIELDS, scan_complete=not a.partial_scan)


@command(import_group, "beir")
@study_options
@click.argument("folder", type=click.Path(exists=True, file_okay=False, path_type=Path))
@option(
    "--split splits",
    "Import only these qrels splits (repeatable; default: all qrels/*.tsv).",
    multiple=True,
)
@option("--complete", "Declare every judged query's population complete.", flag=True)
@gain_map_option
@unknown_ids_option
@option("--owner-org", "Organisation that owns the new documents (default: the corpus's owner).")
@import_options
def import_beir_command(a: Args) -> None:
    """BEIR folder (corpus.jsonl, queries.jsonl, qrels/*.tsv) -> documents, queries, labels."""
    mapping = gain_map(a)
    with store(a) as db:
        given = a.pick(*IMPORT_KEYWORDS, "complete", "owner_org", "limits")
        splits = list(a.splits) or None
        report_import(import_beir(db, a.folder, splits=splits, gain_map=mapping, **given))


@command(import_group, "observations")
@study_options
@path_argument
@option("--run run_name", "Name of the run to store (default: the file name; '' for labels only).")
@option("--annotator", "Annotator (default observations:<file>).")
@unknown_ids_option
@import_options
def import_observations_command(a: Args) -> None:
    """Observation JSONL -> queries, a run, label events and completeness claims."""
    import_file(a, import_observations, "run_name", "annotator")


def _labels_command(fmt: str) -> Callable:
    @study_options
    @path_argument
    @option("--annotator", f"Annotator for rows without one (default {fmt}:<file>).")
    @gain_map_option
    @unknown_ids_option
    @option(
        "--keep-annotators",
        "Record the annotators, times and sources the file names (you vouch "
        "for them); without it a file naming annotators is refused.",
        flag=True,
    )
    @import_options
    def labels_import(a: Args) -> None:
        mapping = gain_map(a)
        names = ("annotator", "keep_annotators")
        import_file(a, import_labels, *names, format=fmt, gain_map=mapping)

    return labels_import


for _fmt, _help in (
    ("csv", "CSV with a header: query_id,unit_id,gain[,annotator] (or an exported event log)."),
    ("jsonl", "One label event per line, as `evalcore export labels --format jsonl` writes."),
):
    command(import_group, f"labels-{_fmt}", help=_help)(_labels_command(_fmt))


# --- export ---------------------------------------------------------------------------------


@main.group("export", cls=SharedGroup)
def export_group() -> None:
    """Export evidence in formats the imports read back exactly."""


def export_options(fn: Callable) -> Callable:
    """-o, --quiet and --actor: the last options of every export but ``study``."""
    output = option(
        "-o --output",
        "Write to this file (default: stdout).",
        type=click.Path(dir_okay=False, path_type=Path),
    )
    return output(quiet_option(actor_option(fn)))


def _export(a: Args, write: Callable) -> None:
    """Run ``write(study, out)`` on --study read as --actor, to -o (``output``) or stdout."""
    with store(a, read=True) as db:
        out = a.output if a.output is not None else sys.stdout
        summary = write(open_study(db, a.study_id, a.actor), out)
    reporter().done()
    for warning in summary.warnings:
        click.echo(f"warning: {warning}", err=True)
    if a.output is not None:
        click.echo(f"wrote {summary.rows} {summary.kind} row(s) to {a.output}", err=True)


@command(export_group, "qrels")
@study_options
@option("--reference", "A frozen reference version (default: the working reference).")
@export_options
def export_qrels_command(a: Args) -> None:
    """Resolved labels as TREC qrels, sorted (units in conflict are left out)."""
    _export(a, lambda study, out: export_qrels(study, out, reference=a.reference))


@command(export_group, "labels")
@study_options
@option(
    "--format fmt",
    "csv/jsonl: every event; quepid/rre/rank-eval: the reference's ratings.",
    shown="csv",
    choices=["csv", "jsonl", *TOOL_FORMATS],
)
@option("--reference", "quepid/rre/rank-eval: a frozen reference version (default: working).")
@option("--index", "rre/rank-eval: the index name written (default: the corpus id).")
@export_options
def export_labels_command(a: Args) -> None:
    """Every label event, with annotators, kinds and times (or another tool's ratings)."""
    if a.fmt in TOOL_FORMATS:
        given = a.pick("reference", "index")
        _export(a, lambda study, out: export_tool_labels(study, out, a.fmt, **given))
    else:
        _export(a, lambda study, out: export_labels(study, out, format=a.fmt))


@command(export_group, "run")
@study_options
@option("--run run_name", "The stored run.", required=True)
@option(
    "--scores",
    "auto: stored scores when TREC tools keep the stored order, else rank-derived.",
    shown="auto",
    choices=["auto", "original", "rank"],
)
@export_options
def export_run_command(a: Args) -> None:
    """A stored run as a TREC run file."""
    _export(a, lambda study, out: export_run(study, a.run_name, out, scores=a.scores))


# --- completeness and references --------------------------------------------------------------


@command(main, "complete")
@study_options
@click.argument("query_ids", nargs=-1, required=True)
@option("--reason", "Why the population is complete (e.g. 'pooled to 100').", default="")
@actor_option
def complete_command(a: Args) -> None:
    """Declare the relevant population of queries complete."""
    from evalcore.access.roles import Permission
    from evalcore.store.imports.common import mark_queries_complete
    from evalcore.store.removed_queries import study_query_ids
    from evalcore.store.studies import get_study
    from evalcore.store.transaction import write_transaction

    with store(a) as db:
        get_study(db, a.study_id)
        with write_transaction(db):
            # a mistyped id would otherwise become a new, empty query of every comparison
            known = set(study_query_ids(open_study(db, a.study_id, a.actor,
                                                   Permission.MARK_COMPLETE)))
            unknown = [q for q in dict.fromkeys(a.query_ids) if q not in known]
            if unknown:
                raise ValueError(
                    f"no query {', '.join(map(repr, unknown))} in study {a.study_id!r}: no run, "
                    "label or registered query has this id (list them with: evalcore queries "
                    f"list --study {a.study_id}; import a new query first with: evalcore "
                    "import queries)"
                )
            n = mark_queries_complete(db, **a.pick("study_id", "query_ids", "actor", "reason"))
    click.echo(f"{n} query(ies) marked complete ({len(a.query_ids) - n} already were)")


@main.group("reference")
def reference_group() -> None:
    """Frozen reference versions: named, hashed, immutable snapshots of the evidence."""


@command(reference_group, "freeze")
@study_options
@option("--name", "Version name, e.g. v1 (never reused).", required=True)
@actor_option
def reference_freeze(a: Args) -> None:
    """Freeze the working reference (resolved labels, conflicts excluded, and completeness)."""
    with store(a) as db:
        version = freeze_reference(db, **a.pick("study_id", "name", "actor"))
    click.echo(version.model_dump_json())


@command(reference_group, "list")
@study_options
@actor_option
def reference_list(a: Args) -> None:
    """List the study's frozen versions (JSON lines, oldest first); --actor must see the study."""
    with store(a, read=True) as db:
        for version in list_references(open_study(db, a.study_id, a.actor)):
            click.echo(version.model_dump_json())


@command(reference_group, "verify")
@study_options
@option("--name", "The frozen version to check.", required=True)
@actor_option
def reference_verify(a: Args) -> None:
    """Recompute a frozen version's content hash; exit 1 if its rows no longer match it."""
    from evalcore.store.references import get_reference, verify_reference

    with store(a, read=True) as db:
        study = open_study(db, a.study_id, a.actor)
        version = get_reference(study, a.name)
        intact = verify_reference(study, a.name)
    which = f"reference {a.name} of study {a.study_id}"
    if not intact:
        click.echo(
            f"{which}: rows do NOT match the recorded hash {version.content_hash}; "
            "the store was altered outside evalcore",
            err=True,
        )
        sys.exit(1)
    click.echo(f"{which}: intact ({version.content_hash})")
