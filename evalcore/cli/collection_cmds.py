"""Bring your own collection: documents, queries (topics), other tools' judgments; needs.

Any file may be gzip, bzip2 or xz compressed (told by its content); how it was read is
printed with the summary. Automatic judgments (an LLM judge's) are stored apart, never
evidence. Each import is all or nothing; errors name file, line and field (exit 2).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import click

from evalcore.cli import main
from evalcore.cli.input_options import Args, command, layout_options, option
from evalcore.cli.store_cmds import (
    actor_option,
    gain_map,
    gain_map_option,
    import_file,
    import_group,
    import_options,
    path_argument,
    report_import,
    store,
    study_options,
    unknown_ids_option,
)
from evalcore.io.documents import DOCUMENT_FORMATS, DocumentFields
from evalcore.io.queries import QUERY_FORMATS, QueryFields
from evalcore.io.tool_labels import TOOL_FORMATS
from evalcore.store.imports.automatic_labels import (
    AUTOMATIC_FORMATS,
    check_source_name,
    import_automatic_labels,
)
from evalcore.store.imports.documents import import_documents
from evalcore.store.imports.queries import import_queries
from evalcore.store.imports.tool_labels import import_tool_labels
from evalcore.store.information_needs import (
    InformationNeed,
    QueryNotFoundError,
    information_need,
    set_information_need,
)
from evalcore.store.study_handle import open_study

#: What the document and query imports pass on to their importer, named alike.
RECORD_KEYWORDS = ("study_id", "fmt", "actor", "layout", "limits")


def _record_options(formats: tuple[str, ...], format_help: str) -> Callable:
    """--format, --id-field and --text-field, shared by the document and query imports."""

    def decorate(fn: Callable) -> Callable:
        fn = option("--text-field", "JSONL/TSV/CSV: the text field.", shown="text")(fn)
        fn = option("--id-field", "JSONL/TSV/CSV: the id field.", shown="id")(fn)
        return option("--format fmt", format_help, shown="auto", choices=formats)(fn)

    return decorate


@command(import_group, "documents")
@study_options
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@_record_options(DOCUMENT_FORMATS, "auto: from the name (a folder or .gz is TREC).")
@option("--title-field", "The title field (optional in each record).", shown="title")
@option("--owner-org", "The organisation that owns the new documents (what lexical runs may see).")
@layout_options
@import_options
def import_documents_command(a: Args) -> None:
    """Documents (JSONL, TSV, CSV, TREC <DOC> files or a folder of them) -> the corpus."""
    fields = DocumentFields(id=a.id_field, text=a.text_field, title=a.title_field)
    with store(a) as db:
        given = a.pick(*RECORD_KEYWORDS, "owner_org")
        report_import(import_documents(db, a.path, fields=fields, **given))


@command(import_group, "queries")
@study_options
@path_argument
@_record_options(QUERY_FORMATS, "trec: TREC topics (<top> <num> <title> <desc> <narr>).")
@option(
    "--description-field",
    "The information need's description field (optional).",
    shown="description",
)
@option("--narrative-field", "The narrative / guideline field (optional).", shown="narrative")
@option(
    "--query-map",
    "Two columns: id in this file -> id the judgments use.",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
)
@layout_options
@import_options
def import_queries_command(a: Args) -> None:
    """Queries or TREC topics (with their information need) -> the study's queries."""
    fields = QueryFields(
        id=a.id_field,
        text=a.text_field,
        description=a.description_field,
        narrative=a.narrative_field,
    )
    with store(a) as db:
        given = a.pick(*RECORD_KEYWORDS, "query_map")
        report_import(import_queries(db, a.path, fields=fields, **given))


@command(import_group, "labels")
@study_options
@path_argument
@option(
    "--format fmt",
    "quepid: CSV query,docid,rating; rre: RRE ratings JSON; rank-eval: an "
    "Elasticsearch/OpenSearch _rank_eval request body; with --automatic: "
    "qrels (TREC), csv (query_id,unit_id,gain) or jsonl.",
    choices=TOOL_FORMATS + AUTOMATIC_FORMATS,
    required=True,
)
@option(
    "--automatic automatic",
    "Store the file as automatic judgments of the source NAME (an LLM judge, "
    "a model): shown beside human labels, never evidence.",
    metavar="NAME",
)
@option("--annotator", "Annotator of the labels (default <format>:<file>).")
@gain_map_option
@unknown_ids_option
@import_options
def import_tool_labels_command(a: Args) -> None:
    """Judgments from Quepid, RRE or _rank_eval -> label events; or, with --automatic,
    a judge's labels (qrels, CSV, JSONL) stored apart from human labels."""
    mapping = gain_map(a)
    if a.automatic is not None:
        if a.fmt not in AUTOMATIC_FORMATS:
            raise click.BadParameter(
                f"automatic judgments are read from {', '.join(AUTOMATIC_FORMATS)}; "
                f"convert the {a.fmt} file to one of them",
                param_hint="--format",
            )
        if a.annotator is not None:
            raise click.BadParameter(
                "the source of automatic judgments is --automatic NAME; leave --annotator out",
                param_hint="--annotator",
            )
        try:
            check_source_name(a.automatic)
        except ValueError as error:
            raise click.BadParameter(str(error), param_hint="--automatic") from None
        given = {"name": a.automatic, "format": a.fmt, "gain_map": mapping}
        import_file(a, import_automatic_labels, command="import labels --automatic", **given)
        return
    if a.fmt not in TOOL_FORMATS:
        raise click.BadParameter(
            f"--format {a.fmt} is for automatic judgments (--automatic NAME); human labels in "
            "this format are imported with `evalcore import qrels`, `import labels-csv` or "
            "`import labels-jsonl`",
            param_hint="--format",
        )
    command = f"import labels --format {a.fmt}"
    import_file(a, import_tool_labels, "fmt", "annotator", command=command, gain_map=mapping)


@main.group("query")
def query_group() -> None:
    """A study's queries."""


@query_group.group("need")
def need_group() -> None:
    """A query's information need: description and narrative (the assessor's guideline)."""


_query_option = option("--query query_id", "The query id.", required=True)


@command(need_group, "show")
@study_options
@_query_option
@actor_option
def need_show(a: Args) -> None:
    """Print the query's information need as JSON."""
    with store(a, read=True) as db:
        need = information_need(open_study(db, a.study_id, a.actor), a.query_id)
        click.echo(need.model_dump_json())


@command(need_group, "set")
@study_options
@_query_option
@option("--description", "The description (default: unchanged).")
@option("--narrative", "The narrative (default: unchanged).")
@actor_option
def need_set(a: Args) -> None:
    """Set a query's information need (lead only; recorded in the audit log)."""
    with store(a, read=True) as db:
        old = information_need(open_study(db, a.study_id, a.actor), a.query_id)
        try:
            need = InformationNeed(
                description=old.description if a.description is None else a.description,
                narrative=old.narrative if a.narrative is None else a.narrative,
            )
            set_information_need(db, **a.pick("study_id", "query_id", "actor"), need=need)
        except QueryNotFoundError as exc:
            raise ValueError(str(exc)) from None
    click.echo(f"information need of query {a.query_id} updated")
