"""Members, organisations and scoped reading from the shell (:mod:`evalcore.access`).

    evalcore members add --db F --study S --user U --role annotator|reviewer|lead [--name N]
    evalcore members remove --db F --study S --user U
    evalcore members list --db F --study S
    evalcore members add-org --db F --user U --org O
    evalcore members studies --db F               (the studies --actor may see)
    evalcore document show --db F --study S DOC_ID (only if --actor may read it)

Every command takes ``--actor`` (default: the current OS user): who does this,
or who is looking. The first ``members add`` on a study (a lead) turns team
mode on for it. Exit status: 0 success, 1 refused (not allowed), 2 invalid input.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from evalcore.access.decisions import PermissionDenied
from evalcore.access.identity import normalise_user_id
from evalcore.access.roles import ROLES
from evalcore.cli import main
from evalcore.cli.store_cmds import actor_option, db_option, store, study_option
from evalcore.store.members import add_member, add_to_organisation, list_members, remove_member
from evalcore.store.membership import member_role, study_mode
from evalcore.store.scoping import readable_document, require_study_view, visible_studies
from evalcore.store.studies import get_study


def _refused(exc: PermissionDenied, command: str) -> None:
    click.echo(f"refused: {exc}", err=True)
    click.echo(f"evalcore {command}: nothing was changed or shown", err=True)
    sys.exit(1)


@main.group("members")
def members_group() -> None:
    """Who may do what in a study (roles) and which organisations people belong to."""


@members_group.command("add")
@db_option
@study_option
@click.option("--user", required=True, help="The person's e-mail address or sign-in subject.")
@click.option("--role", type=click.Choice(ROLES), required=True,
              help="annotator: label; reviewer: + adjudicate, reopen; lead: + freeze, import, "
                   "runs, reports, members.")
@click.option("--name", "display_name", default="", help="A display name.")
@actor_option
def members_add(db_path: Path, study_id: str, user: str, role: str, display_name: str,
                actor: str) -> None:
    """Give USER a role in the study (the first member, a lead, turns team mode on)."""
    with store(db_path, "members add", study_id=study_id, actor=actor) as db:
        get_study(db, study_id)
        was_local = study_mode(db, study_id) == "local"
        try:
            member = add_member(db, study_id=study_id, user=user, role=role, actor=actor,
                                display_name=display_name)
        except PermissionDenied as exc:
            _refused(exc, "members add")
    click.echo(f"{member.user_id} is now {member.role} of study {study_id}")
    if was_local:
        click.echo(f"study {study_id} is now in team mode: every action needs a role")


@members_group.command("remove")
@db_option
@study_option
@click.option("--user", required=True)
@actor_option
def members_remove(db_path: Path, study_id: str, user: str, actor: str) -> None:
    """Remove USER from the study (the last lead cannot be removed)."""
    with store(db_path, "members remove", study_id=study_id, actor=actor) as db:
        try:
            removed = remove_member(db, study_id=study_id, user=user, actor=actor)
        except PermissionDenied as exc:
            _refused(exc, "members remove")
    click.echo(f"removed {user} from study {study_id}" if removed
               else f"{user} was not a member of study {study_id}")


@members_group.command("list")
@db_option
@study_option
@actor_option
def members_list(db_path: Path, study_id: str, actor: str) -> None:
    """The study's members and their roles (leads first)."""
    with store(db_path, "members list", study_id=study_id, actor=actor) as db:
        try:
            require_study_view(db, actor, study_id)
        except PermissionDenied as exc:
            _refused(exc, "members list")
        members = list_members(db, study_id, viewer=actor)
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
@actor_option
def members_add_org(db_path: Path, user: str, org_id: str, actor: str) -> None:
    """Make USER a member of an organisation (they then read its documents)."""
    with store(db_path, "members add-org") as db:
        try:
            added = add_to_organisation(db, user=user, org_id=org_id, actor=actor)
        except PermissionDenied as exc:
            _refused(exc, "members add-org")
    click.echo(f"{user} {'is now' if added else 'already was'} in organisation {org_id}")


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
@db_option
@study_option
@click.argument("doc_id")
@actor_option
def document_show(db_path: Path, study_id: str, doc_id: str, actor: str) -> None:
    """Print the document's title and text, if ACTOR may read it."""
    with store(db_path, "document show", study_id=study_id, actor=actor) as db:
        try:
            require_study_view(db, actor, study_id)
        except PermissionDenied as exc:
            _refused(exc, "document show")
        access = readable_document(db, actor, get_study(db, study_id).corpus_id, doc_id)
    if access.document is None:
        click.echo(f"refused: {access.reason}", err=True)
        sys.exit(1)
    click.echo(access.document.title)
    click.echo("")
    click.echo(access.document.text)
