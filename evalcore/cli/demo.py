"""``evalcore demo``: write the embedded demo study into a store.

    evalcore demo --db FILE_OR_URL

Creates the store if needed (a file, or the schema in an empty PostgreSQL database). A store that already holds the complete demo study is
left unchanged (exit status 0 either way).
"""

import shlex
from pathlib import Path

import click

from evalcore.cli import main
from evalcore.cli.input_options import option
from evalcore.cli.store_location import NEW_OR_EXISTING_STORE


@main.command("demo")
@option(
    "--db db_path",
    "The store file (created if it does not exist) or postgresql:// URL.",
    required=True,
    type=NEW_OR_EXISTING_STORE,
)
def demo_command(db_path: Path | str) -> None:
    """Build the demo study (311 documents, 25 queries, 2 lexical runs, labels)."""
    from evalcore.demo.study import DEMO_STUDY_ID, build_demo
    from evalcore.store.connection import open_store
    from evalcore.store.location import describe_store

    if isinstance(db_path, Path) and db_path.parent and not db_path.parent.exists():
        raise click.UsageError(f"directory {db_path.parent} does not exist; create it first")
    db = open_store(db_path)
    summary = build_demo(db)
    shown = describe_store(db_path)  # a URL without its password
    if not summary.created:
        click.echo(f"{shown}: the demo study {DEMO_STUDY_ID!r} is already there; nothing changed")
        return
    click.echo(
        f"{shown}: demo study {DEMO_STUDY_ID!r} written: {summary.documents} documents, "
        f"{summary.queries} queries, {summary.runs} lexical runs, {summary.labels} label events, "
        f"{summary.complete_queries} queries marked complete"
    )
    click.echo(
        f"open it with: RELEVANCE_LEDGER_DB={shlex.quote(shown)} streamlit run app/launcher.py"
    )
