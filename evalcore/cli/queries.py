"""``evalcore queries``: list a study's queries, take one out, bring it back.

A removed query leaves every comparison, dashboard, pool and report of the study; its
labels are kept. Exit status: 0 success, 1 refused (not a lead), 2 invalid input.
"""

from __future__ import annotations

import click

from evalcore.cli import main
from evalcore.cli.input_options import Args, command, option
from evalcore.cli.store_cmds import actor_option, store, study_options
from evalcore.store.study_handle import open_study


@main.group("queries")
def queries_group() -> None:
    """A study's queries: list them, remove one from the study, restore it."""


@command(queries_group, "list")
@study_options
@option(
    "--removed only_removed",
    "List only the removed queries, with who removed them, when and why.",
    flag=True,
)
@actor_option
def list_command(a: Args) -> None:
    """List the study's query ids (removed ones marked), or only the removed ones."""
    from evalcore.store.removed_queries import removed_queries, study_query_ids

    with store(a, read=True) as db:
        study = open_study(db, a.study_id, a.actor)
        removed = {r.query_id: r for r in removed_queries(study)}
        ids = [] if a.only_removed else study_query_ids(study)
    if a.only_removed:
        if not removed:
            click.echo(f"no query is removed from study {a.study_id}")
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


@command(queries_group, "remove")
@study_options
@option("--query query_id", "The query id to take out.", required=True)
@option("--reason", "Why (recorded in the audit log).", default="")
@actor_option
def remove_command(a: Args) -> None:
    """Take a query out of the study's comparisons, dashboards, pools and reports (lead
    only); its labels are kept."""
    from evalcore.store.removed_queries import QueryNotInStudyError, remove_query

    with store(a) as db:
        try:
            remove_query(db, **a.pick("study_id", "query_id", "actor", "reason"))
        except QueryNotInStudyError as err:
            raise ValueError(str(err.args[0])) from None
    restore = f"evalcore queries restore --study {a.study_id} --query {a.query_id}"
    click.echo(
        f"removed query {a.query_id} from study {a.study_id} (its labels are kept; "
        f"{restore} brings it back)"
    )


@command(queries_group, "restore")
@study_options
@option("--query query_id", "The removed query id to bring back.", required=True)
@option("--reason", "Why (recorded in the audit log).", default="")
@actor_option
def restore_command(a: Args) -> None:
    """Bring a removed query back into the study (lead only)."""
    from evalcore.store.removed_queries import restore_query

    with store(a) as db:
        restore_query(db, **a.pick("study_id", "query_id", "actor", "reason"))
    click.echo(f"restored query {a.query_id} to study {a.study_id}")
