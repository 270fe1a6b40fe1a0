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
from evalcore.cli.input_options import layout_options
from evalcore.cli.store_cmds import (
    _FILE,
    _gain_map,
    _gain_map_option,
    _report,
    _unknown_ids,
    actor_option,
    import_group,
    import_options,
    store,
    study_options,
)
from evalcore.contract.limits import ReadLimits
from evalcore.io.documents import DOCUMENT_FORMATS, DocumentFields
from evalcore.io.queries import QUERY_FORMATS, QueryFields
from evalcore.io.records import Layout
from evalcore.io.text_lines import read_source
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

_PATH = click.Path(exists=True, path_type=Path)


def _record_options(formats: tuple[str, ...], format_help: str) -> Callable:
    """--format, --id-field and --text-field, shared by the document and query imports."""
    def decorate(fn: Callable) -> Callable:
        fn = click.option("--text-field", default="text", show_default=True,
                          help="JSONL/TSV/CSV: the text field.")(fn)
        fn = click.option("--id-field", default="id", show_default=True,
                          help="JSONL/TSV/CSV: the id field.")(fn)
        return click.option("--format", "fmt", type=click.Choice(formats), default="auto",
                            show_default=True, help=format_help)(fn)
    return decorate


@import_group.command("documents")
@study_options
@click.argument("path", type=_PATH)
@_record_options(DOCUMENT_FORMATS, "auto: from the name (a folder or .gz is TREC).")
@click.option("--title-field", default="title", show_default=True,
              help="The title field (optional in each record).")
@click.option("--owner-org", default=None,
              help="The organisation that owns the new documents (what lexical runs may see).")
@layout_options
@import_options
def import_documents_command(db_path: Path, study_id: str, path: Path, fmt: str, id_field: str,
                             text_field: str, title_field: str, owner_org: str | None,
                             layout: Layout, limits: ReadLimits, actor: str) -> None:
    """Documents (JSONL, TSV, CSV, TREC <DOC> files or a folder of them) -> the corpus."""
    fields = DocumentFields(id=id_field, text=text_field, title=title_field)
    with store(db_path, "import documents", study_id=study_id, actor=actor) as db:
        _report(import_documents(db, path, study_id=study_id, fmt=fmt, fields=fields,
                                 owner_org=owner_org, actor=actor, layout=layout,
                                 limits=limits))


@import_group.command("queries")
@study_options
@click.argument("path", type=_FILE)
@_record_options(QUERY_FORMATS, "trec: TREC topics (<top> <num> <title> <desc> <narr>).")
@click.option("--description-field", default="description", show_default=True,
              help="The information need's description field (optional).")
@click.option("--narrative-field", default="narrative", show_default=True,
              help="The narrative / guideline field (optional).")
@click.option("--query-map", type=_FILE, default=None,
              help="Two columns: id in this file -> id the judgments use.")
@layout_options
@import_options
def import_queries_command(db_path: Path, study_id: str, path: Path, fmt: str, id_field: str,
                           text_field: str, description_field: str, narrative_field: str,
                           query_map: Path | None, layout: Layout, limits: ReadLimits,
                           actor: str) -> None:
    """Queries or TREC topics (with their information need) -> the study's queries."""
    fields = QueryFields(id=id_field, text=text_field, description=description_field,
                         narrative=narrative_field)
    with store(db_path, "import queries", study_id=study_id, actor=actor) as db:
        _report(import_queries(db, path, study_id=study_id, fmt=fmt, fields=fields,
                               query_map=query_map, actor=actor, layout=layout, limits=limits))


@import_group.command("labels")
@study_options
@click.argument("path", type=_FILE)
@click.option("--format", "fmt", type=click.Choice(TOOL_FORMATS + AUTOMATIC_FORMATS),
              required=True,
              help="quepid: CSV query,docid,rating; rre: RRE ratings JSON; rank-eval: an "
                   "Elasticsearch/OpenSearch _rank_eval request body; with --automatic: "
                   "qrels (TREC), csv (query_id,unit_id,gain) or jsonl.")
@click.option("--automatic", "automatic", default=None, metavar="NAME",
              help="Store the file as automatic judgments of the source NAME (an LLM judge, "
                   "a model): shown beside human labels, never evidence.")
@click.option("--annotator", default=None, help="Annotator of the labels (default <format>:<file>).")
@_gain_map_option
@_unknown_ids
@import_options
def import_tool_labels_command(db_path: Path, study_id: str, path: Path, fmt: str,
                               automatic: str | None, annotator: str | None,
                               gain_map: str | None, allow_unknown_ids: bool,
                               limits: ReadLimits, actor: str) -> None:
    """Judgments from Quepid, RRE or _rank_eval -> label events; or, with --automatic,
    a judge's labels (qrels, CSV, JSONL) stored apart from human labels."""
    mapping = _gain_map(gain_map)
    if automatic is not None:
        if fmt not in AUTOMATIC_FORMATS:
            raise click.BadParameter(
                f"automatic judgments are read from {', '.join(AUTOMATIC_FORMATS)}; "
                f"convert the {fmt} file to one of them", param_hint="--format")
        if annotator is not None:
            raise click.BadParameter("the source of automatic judgments is --automatic NAME; "
                                     "leave --annotator out", param_hint="--annotator")
        try:
            check_source_name(automatic)
        except ValueError as error:
            raise click.BadParameter(str(error), param_hint="--automatic") from None
        with store(db_path, "import labels --automatic", study_id=study_id, actor=actor) as db:
            source = read_source(path, limits=limits)
            _report(import_automatic_labels(db, source, study_id=study_id, name=automatic,
                                            format=fmt,  # type: ignore[arg-type]
                                            gain_map=mapping,
                                            allow_unknown_ids=allow_unknown_ids, actor=actor))
        return
    if fmt not in TOOL_FORMATS:
        raise click.BadParameter(
            f"--format {fmt} is for automatic judgments (--automatic NAME); human labels in "
            "this format are imported with `evalcore import qrels`, `import labels-csv` or "
            "`import labels-jsonl`", param_hint="--format")
    with store(db_path, f"import labels --format {fmt}", study_id=study_id,
               actor=actor) as db:
        source = read_source(path, limits=limits)
        _report(import_tool_labels(db, source, study_id=study_id,
                                   fmt=fmt,  # type: ignore[arg-type]
                                   annotator=annotator, gain_map=mapping,
                                   allow_unknown_ids=allow_unknown_ids, actor=actor))


@main.group("query")
def query_group() -> None:
    """A study's queries."""


@query_group.group("need")
def need_group() -> None:
    """A query's information need: description and narrative (the assessor's guideline)."""


_query_option = click.option("--query", "query_id", required=True, help="The query id.")


@need_group.command("show")
@study_options
@_query_option
@actor_option
def need_show(db_path: Path, study_id: str, query_id: str, actor: str) -> None:
    """Print the query's information need as JSON."""
    with store(db_path, "query need show", study_id=study_id, actor=actor, read=True) as db:
        click.echo(information_need(open_study(db, study_id, actor), query_id).model_dump_json())


@need_group.command("set")
@study_options
@_query_option
@click.option("--description", default=None, help="The description (default: unchanged).")
@click.option("--narrative", default=None, help="The narrative (default: unchanged).")
@actor_option
def need_set(db_path: Path, study_id: str, query_id: str, description: str | None,
             narrative: str | None, actor: str) -> None:
    """Set a query's information need (lead only; recorded in the audit log)."""
    with store(db_path, "query need set", study_id=study_id, actor=actor, read=True) as db:
        old = information_need(open_study(db, study_id, actor), query_id)
        try:
            need = InformationNeed(
                description=old.description if description is None else description,
                narrative=old.narrative if narrative is None else narrative)
            set_information_need(db, study_id=study_id, query_id=query_id, need=need,
                                 actor=actor)
        except QueryNotFoundError as exc:
            raise ValueError(str(exc)) from None
    click.echo(f"information need of query {query_id} updated")
