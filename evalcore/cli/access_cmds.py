"""Members, organisations and scoped reading from the shell (:mod:`evalcore.access`).

``--actor`` (default: the current OS user) is who does this, or who is looking. The first
``members add`` on a study (a lead) turns team mode on for it; roles and who manages them:
docs/access-model.md. Exit status: 0 success, 1 refused (not allowed), 2 invalid input.
"""

from __future__ import annotations

import sys

import click

from evalcore.access.identity import normalise_user_id
from evalcore.access.organisations import ORG_ROLES
from evalcore.access.roles import ROLES
from evalcore.cli import main
from evalcore.cli.input_options import Args, command, option
from evalcore.cli.store_cmds import actor_option, db_option, store, study_options
from evalcore.store.members import (
    add_member,
    add_to_organisation,
    list_members,
    list_organisation_members,
    organisations_of,
    remove_from_organisation,
    remove_member,
)
from evalcore.store.membership import member_role, organisation_role, study_mode
from evalcore.store.scoping import readable_document, visible_studies
from evalcore.store.studies import get_study
from evalcore.store.study_handle import open_study


@main.group("members")
def members_group() -> None:
    """Who may do what in a study (roles) and which organisations people belong to."""


@command(members_group, "add")
@study_options
@option("--user", "The person's e-mail address or sign-in subject.", required=True)
@option(
    "--role",
    "annotator: label; reviewer: + adjudicate, reopen; lead: + freeze, import, "
    "runs, reports, members.",
    choices=ROLES,
    required=True,
)
@option("--name display_name", "A display name.", default="")
@actor_option
def members_add(a: Args) -> None:
    """Give USER a role in the study (the first member, a lead, turns team mode on)."""
    with store(a, refused="changed") as db:
        get_study(db, a.study_id)
        was_local = study_mode(db, a.study_id) == "local"
        given = a.pick("study_id", "user", "role", "actor", "display_name")
        member = add_member(db, **given)
    click.echo(f"{member.user_id} is now {member.role} of study {a.study_id}")
    if was_local:
        click.echo(f"study {a.study_id} is now in team mode: every action needs a role")


@command(members_group, "remove")
@study_options
@option("--user", required=True)
@actor_option
def members_remove(a: Args) -> None:
    """Remove USER from the study (the last lead cannot be removed)."""
    with store(a, refused="changed") as db:
        removed = remove_member(db, **a.pick("study_id", "user", "actor"))
    click.echo(
        f"removed {a.user} from study {a.study_id}"
        if removed
        else f"{a.user} was not a member of study {a.study_id}"
    )


@command(members_group, "list")
@study_options
@actor_option
def members_list(a: Args) -> None:
    """The study's members and their roles (leads first)."""
    with store(a, read=True, refused="changed") as db:
        members = list_members(open_study(db, a.study_id, a.actor))
    if not members:
        click.echo(f"study {a.study_id} has no member: local single-user mode (no sign-in)")
        return
    for m in members:
        name = f" ({m.display_name})" if m.display_name else ""
        click.echo(f"{m.role:9} {m.user_id}{name}  granted by {m.granted_by} at {m.granted_at}")


@command(members_group, "add-org")
@db_option
@option("--user", required=True)
@option("--org org_id", "The organisation id.", required=True)
@option(
    "--role",
    "member: reads its documents, creates studies; admin: + admits people, "
    "writes its documents; owner: + grants admin and owner. Default: member "
    "for someone new, the role unchanged otherwise.",
    choices=ORG_ROLES,
)
@actor_option
def members_add_org(a: Args) -> None:
    """Add USER to an organisation, or change their role in it (admins add members, owners
    grant admin and owner)."""
    with store(a, refused="changed") as db:
        changed = add_to_organisation(db, **a.pick("user", "org_id", "actor", "role"))
        user = normalise_user_id(a.user)
        now = organisation_role(db, user, a.org_id)
    click.echo(f"{user} {'is now' if changed else 'already was'} {now} of organisation {a.org_id}")


@command(members_group, "remove-org")
@db_option
@option("--user", required=True)
@option("--org org_id", "The organisation id.", required=True)
@actor_option
def members_remove_org(a: Args) -> None:
    """Remove USER from an organisation (the last owner cannot be removed)."""
    with store(a, refused="changed") as db:
        removed = remove_from_organisation(db, **a.pick("user", "org_id", "actor"))
    click.echo(
        f"removed {a.user} from organisation {a.org_id}"
        if removed
        else f"{a.user} was not in organisation {a.org_id}"
    )


@command(members_group, "list-org")
@db_option
@option(
    "--org org_id",
    "List this organisation's members (you must be one); without it, list "
    "your organisations and your role in each.",
)
@actor_option
def members_list_org(a: Args) -> None:
    """An organisation's members and roles (owners first), or your organisations."""
    with store(a, refused="changed") as db:
        if a.org_id is None:
            mine = organisations_of(db, a.actor)
            if not mine:
                click.echo(f"{a.actor} belongs to no organisation in this store")
            for m in mine:
                click.echo(f"{m.org_id}\t{m.role}")
            return
        members = list_organisation_members(db, a.org_id, viewer=a.actor)
    for m in members:
        name = f" ({m.display_name})" if m.display_name else ""
        click.echo(f"{m.role:6} {m.user_id}{name}  granted by {m.granted_by} at {m.granted_at}")


@command(members_group, "studies")
@db_option
@actor_option
def members_studies(a: Args) -> None:
    """The studies ACTOR may see, with their mode and ACTOR's role."""
    with store(a) as db:
        for study in visible_studies(db, a.actor):
            role = member_role(db, study.study_id, normalise_user_id(a.actor))
            detail = f"team mode, {role}" if role else "local single-user mode"
            click.echo(f"{study.study_id}\t{detail}")


@main.group("document")
def document_group() -> None:
    """Read documents of a study's corpus (organisation scoping applies)."""


@command(document_group, "show")
@study_options
@click.argument("doc_id")
@actor_option
def document_show(a: Args) -> None:
    """Print the document's title and text, if ACTOR may read it."""
    with store(a, read=True, refused="changed") as db:
        corpus_id = get_study(db, a.study_id).corpus_id
        access = readable_document(db, a.actor, corpus_id, a.doc_id)
    if access.document is None:
        click.echo(f"refused: {access.reason}", err=True)
        sys.exit(1)
    click.echo(access.document.title)
    click.echo("")
    click.echo(access.document.text)
