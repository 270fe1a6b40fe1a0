"""``evalcore migrate-store``: copy a store between SQLite and PostgreSQL.

Every row goes into an empty store in one transaction, checked per table before the commit
(:mod:`evalcore.store.store_copy`). An operator command on whole stores: no study role is
asked. Exit status: 0 copied and verified; 1 refused or failed (nothing committed); 2 a bad
path or URL.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from evalcore.cli import main
from evalcore.cli.input_options import option, quiet_option
from evalcore.cli.store_location import EXISTING_STORE, NEW_OR_EXISTING_STORE
from evalcore.io.progress import reporter
from evalcore.store.location import describe_store
from evalcore.store.store_copy import StoreCopyFailed, StoreCopyRefused, TableCopied, copy_store


def _table_done(done: TableCopied) -> None:
    reporter().done()
    click.echo(f"  {done.table}: {done.rows:,} row(s) in {done.seconds:.2f} s")


@main.command("migrate-store")
@option(
    "--from source",
    "The store to copy: a SQLite file or a postgresql:// URL (migrated to this "
    "evalcore's schema first).",
    type=EXISTING_STORE,
    required=True,
)
@option(
    "--to target",
    "The empty store to copy into: a new SQLite file, or a postgresql:// URL "
    "of an empty database (or one just created with `evalcore init`).",
    type=NEW_OR_EXISTING_STORE,
    required=True,
)
@quiet_option
def migrate_store_command(source: Path | str, target: Path | str) -> None:
    """Copy a whole store into an empty one (SQLite or PostgreSQL, either way), all or
    nothing, and verify every table."""
    click.echo(
        f"copying {describe_store(source)} to {describe_store(target)} (one transaction: the target stays empty "
        "unless everything is copied and verified)"
    )
    try:
        summary = copy_store(source, target, on_table=_table_done)
    except (StoreCopyRefused, StoreCopyFailed) as exc:
        reporter().done()
        click.echo(f"error: {exc}", err=True)
        click.echo("evalcore migrate-store: nothing was written to the target", err=True)
        sys.exit(1)
    reporter().done()
    rate = summary.rows / summary.seconds if summary.seconds else 0.0
    click.echo(
        f"copied {len(summary.tables)} tables, {summary.rows:,} rows in "
        f"{summary.seconds:.2f} s ({rate:,.0f} rows/s) at schema version "
        f"{summary.schema_version}; every table verified (row count and checksum)"
    )
