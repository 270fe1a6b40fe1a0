"""Members, organisations and scoped reading from the shell (:mod:`evalcore.access`).

``--actor`` (default: the current OS user) is who does this, or who is looking. The first
``members add`` on a study (a lead) turns team mode on for it; roles and who manages them:
docs/access-model.md. Exit status: 0 success, 1 refused (not allowed), 2 invalid input.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from evalcore.access.identity import normalise_user_id
from evalcore.access.organisations import ORG_ROLES
from evalcore.access.roles import ROLES
from evalcore.cli import main
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


@members_group.command("add")
@study_options
@click.option("--user", required=True, help="The person's e-mail address or sign-in subject.")
@click.option("--role", type=click.Choice(ROLES), required=True,
              help="annotator: label; reviewer: + adjudicate, reopen; lead: + freeze, import, "
                   "runs, reports, members.")
@click.option("--name", "display_name", default="", help="A display name.")
@actor_option
def members_add(db_path: Path, study_id: str, user: str, role: str, display_name: str,
                actor: str) -> None:
    """Give USER a role in the study (the first member, a lead, turns team mode on)."""
    with store(db_path, "members add", study_id=study_id, actor=actor,
               refused="changed") as db:
        get_study(db, study_id)
        was_local = study_mode(db, study_id) == "local"
        member = add_member(db, study_id=study_id, user=user, role=role, actor=actor,
                            display_name=display_name)
    click.echo(f"{member.user_id} is now {member.role} of study {study_id}")
    if was_local:
        click.echo(f"study {study_id} is now in team mode: every action needs a role")


@members_group.command("remove")
@study_options
@click.option("--user", required=True)
@actor_option
def members_remove(db_path: Path, study_id: str, user: str, actor: str) -> None:
    """Remove USER from the study (the last lead cannot be removed)."""
    with store(db_path, "members remove", study_id=study_id, actor=actor,
               refused="changed") as db:
        removed = remove_member(db, study_id=study_id, user=user, actor=actor)
    click.echo(f"removed {user} from study {study_id}" if removed
               else f"{user} was not a member of study {study_id}")


@members_group.command("list")
@study_options
@actor_option
def members_list(db_path: Path, study_id: str, actor: str) -> None:
    """The study's members and their roles (leads first)."""
    with store(db_path, "members list", study_id=study_id, actor=actor, read=True,
               refused="changed") as db:
        members = list_members(open_study(db, study_id, actor))
    if not members:
        click.echo(f"study {study_id} has no member: local single-user mode (no sign-in)")
        return
    for m in members:
        name = f" ({m.display_name})" if m.display_name else ""
        click.echo(f"{m.role:9} {m.user_id}{name}  granted by {m.granted_by} at {m.granted_at}")


@members_group.command("add-org")
@db_option
@click.option("--user", required=True)
@click.option("--org", "org_id", required=True, help="The organisation id.")
@click.option("--role", type=click.Choice(ORG_ROLES), default=None,
              help="member: reads its documents, creates studies; admin: + admits people, "
                   "writes its documents; owner: + grants admin and owner. Default: member "
                   "for someone new, the role unchanged otherwise.")
@actor_option
def members_add_org(db_path: Path, user: str, org_id: str, role: str | None, actor: str) -> None:
    """Add USER to an organisation, or change their role in it (admins add members, owners
    grant admin and owner)."""
    with store(db_path, "members add-org", refused="changed") as db:
        changed = add_to_organisation(db, user=user, org_id=org_id, actor=actor, role=role)
        now = organisation_role(db, normalise_user_id(user), org_id)
    click.echo(f"{normalise_user_id(user)} {'is now' if changed else 'already was'} {now} of "
               f"organisation {org_id}")


@members_group.command("remove-org")
@db_option
@click.option("--user", required=True)
@click.option("--org", "org_id", required=True, help="The organisation id.")
@actor_option
def members_remove_org(db_path: Path, user: str, org_id: str, actor: str) -> None:
    """Remove USER from an organisation (the last owner cannot be removed)."""
    with store(db_path, "members remove-org", refused="changed") as db:
        removed = remove_from_organisation(db, user=user, org_id=org_id, actor=actor)
    click.echo(f"removed {user} from organisation {org_id}" if removed
               else f"{user} was not in organisation {org_id}")


@members_group.command("list-org")
@db_option
@click.option("--org", "org_id", default=None,
              help="List this organisation's members (you must be one); without it, list "
                   "your organisations and your role in each.")
@actor_option
def members_list_org(db_path: Path, org_id: str | None, actor: str) -> None:
    """An organisation's members and roles (owners first), or your organisations."""
    with store(db_path, "members list-org", refused="changed") as db:
        if org_id is None:
            mine = organisations_of(db, actor)
            if not mine:
                click.echo(f"{actor} belongs to no organisation in this store")
            for m in mine:
                click.echo(f"{m.org_id}\t{m.role}")
            return
        members = list_organisation_members(db, org_id, viewer=actor)
    for m in members:
        name = f" ({m.display_name})" if m.display_name else ""
        click.echo(f"{m.role:6} {m.user_id}{name}  granted by {m.granted_by} at {m.granted_at}")


@members_group.command("studies")
@db_option
@actor_option
def members_studies(db_path: Path, actor: str) -> None:
    """The studies ACTOR may see, with their mode and ACTOR's role."""
    with store(db_path, "members studies") as db:
        for study in visible_studies(db, actor):
            role = member_role(db, study.study_id, normalise_user_id(actor))
            detail = f"team mode, {role}" if role else "local single-user mode"
            click.echo(f"{study.study_id}\t{detail}")


@main.group("document")
def document_group() -> None:
    """Read documents of a study's corpus (organisation scoping applies)."""


@document_group.command("show")
@study_options
@click.argument("doc_id")
@actor_option
def document_show(db_path: Path, study_id: str, doc_id: str, actor: str) -> None:
    """Print the document's title and text, if ACTOR may read it."""
    with store(db_path, "document show", study_id=study_id, actor=actor, read=True,
               refused="changed") as db:
        access = readable_document(db, actor, get_study(db, study_id).corpus_id, doc_id)
    if access.document is None:
        click.echo(f"refused: {access.reason}", err=True)
        sys.exit(1)
    click.echo(access.document.title)
    click.echo("")
    click.echo(access.document.text)
