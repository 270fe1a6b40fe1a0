"""``evalcore backup`` (a consistent SQLite copy of any store while the app is in use, checked)
and ``evalcore verify`` (integrity, schema, rows, frozen references; exit 1 on a problem).
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from evalcore.cli import main
from evalcore.cli.input_options import option, quiet_option
from evalcore.cli.store_location import EXISTING_STORE
from evalcore.io.progress import reporter
from evalcore.store.backup import StoreCheck, backup_store, verify_store


def _print_check(check: StoreCheck) -> None:
    reporter().done()
    click.echo(
        f"schema version {check.schema_version}; integrity {', '.join(check.integrity[:3])}; "
        f"{check.references_checked} frozen reference(s) checked"
    )
    for name, rows in check.tables.items():
        click.echo(f"  {name}: {rows:,} row(s)")


@main.command("backup")
@option(
    "--db db_path",
    "The store to back up: a file or a postgresql:// URL.",
    type=EXISTING_STORE,
    required=True,
)
@option(
    "--out",
    "The new backup file, a SQLite store file (an existing file is never overwritten).",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
)
@quiet_option
def backup_command(db_path: Path | str, out: Path) -> None:
    """Copy a live store consistently (annotators may keep labeling) and check the copy."""
    summary = backup_store(db_path, out)
    click.echo(f"backed up {summary.source} to {out} ({summary.bytes:,} bytes), checked:")
    _print_check(summary.check)


@main.command("verify")
@option(
    "--db db_path",
    "The store or backup to check: a file or a postgresql:// URL.",
    type=EXISTING_STORE,
    required=True,
)
@quiet_option
def verify_command(db_path: Path | str) -> None:
    """Check a store without changing it; exit 1 if anything is wrong."""
    check = verify_store(db_path)
    _print_check(check)
    if not check.ok:
        for problem in check.problems:
            click.echo(f"problem: {problem}", err=True)
        click.echo(
            f"evalcore verify: {check.path} has {len(check.problems)} problem(s); restore "
            "a backup (see the README) or ask for help before writing to it",
            err=True,
        )
        sys.exit(1)
    click.echo(f"{check.path}: ok")
