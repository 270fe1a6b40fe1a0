"""``evalcore queries``: list a study's queries, take one out, bring it back.

A removed query leaves every comparison, dashboard, pool and report of the study; its
labels are kept. Exit status: 0 success, 1 refused (not a lead), 2 invalid input.
"""

from __future__ import annotations

from pathlib import Path

import click

from evalcore.cli import main
from evalcore.cli.store_cmds import actor_option, store, study_options
from evalcore.store.study_handle import open_study


@main.group("queries")
def queries_group() -> None:
    """A study's queries: list them, remove one from the study, restore it."""


@queries_group.command("list")
@study_options
@click.option(
    "--removed",
    "only_removed",
    is_flag=True,
    help="List only the removed queries, with who removed them, when and why.",
)
@actor_option
def list_command(db_path: Path, study_id: str, only_removed: bool, actor: str) -> None:
    """List the study's query ids (removed ones marked), or only the removed ones."""
    from evalcore.store.removed_queries import removed_queries, study_query_ids

    with store(db_path, "queries list", study_id=study_id, actor=actor, read=True) as db:
        study = open_study(db, study_id, actor)
        removed = {r.query_id: r for r in removed_queries(study)}
        ids = [] if only_removed else study_query_ids(study)
    if only_removed:
        if not removed:
            click.echo(f"no query is removed from study {study_id}")
        for item in removed.values():
            click.echo(_removed_line(item))
        return
    for query_id in ids:
        item = removed.get(query_id)
        click.echo(query_id if item is None else _removed_line(item))
    click.echo(f"{len(ids)} queries, {len(removed)} removed", err=True)


def _removed_line(item) -> str:  # type: ignore[no-untyped-def]
    reason = f": {item.reason}" if item.reason else ""
    return f"{item.query_id}\tremoved {item.removed_at} by {item.removed_by}{reason}"


@queries_group.command("remove")
@study_options
@click.option("--query", "query_id", required=True, help="The query id to take out.")
@click.option("--reason", default="", help="Why (recorded in the audit log).")
@actor_option
def remove_command(db_path: Path, study_id: str, query_id: str, reason: str, actor: str) -> None:
    """Take a query out of the study's comparisons, dashboards, pools and reports (lead
    only); its labels are kept."""
    from evalcore.store.removed_queries import QueryNotInStudyError, remove_query

    with store(db_path, "queries remove", study_id=study_id, actor=actor) as db:
        try:
            remove_query(db, study_id=study_id, query_id=query_id, actor=actor, reason=reason)
        except QueryNotInStudyError as err:
            raise ValueError(str(err.args[0])) from None
    click.echo(
        f"removed query {query_id} from study {study_id} (its labels are kept; "
        f"evalcore queries restore --study {study_id} --query {query_id} brings it back)"
    )


@queries_group.command("restore")
@study_options
@click.option("--query", "query_id", required=True, help="The removed query id to bring back.")
@click.option("--reason", default="", help="Why (recorded in the audit log).")
@actor_option
def restore_command(db_path: Path, study_id: str, query_id: str, reason: str, actor: str) -> None:
    """Bring a removed query back into the study (lead only)."""
    from evalcore.store.removed_queries import restore_query

    with store(db_path, "queries restore", study_id=study_id, actor=actor) as db:
        restore_query(db, study_id=study_id, query_id=query_id, actor=actor, reason=reason)
    click.echo(f"restored query {query_id} to study {study_id}")
