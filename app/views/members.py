"""Members: who belongs to the study, with which role, and to its organisation.

Leads add, change and remove members (:mod:`evalcore.store.members` authorises, audits and
keeps one lead); a lead adds only people of the study's organisation, whose admins admit
them below. A study in local single-user mode has no member: the page says how to turn team
mode on. Identities and names are shown as plain data, never as markdown.
"""

from collections.abc import Callable

import streamlit as st

from app.components.page import flash, say, show_flash, show_rows, study_page
from app.components.session import annotator as current_annotator
from app.components.session import get_db
from evalcore.access import ORG_ROLES, ROLES, OrgPermission, Permission
from evalcore.access.organisations import org_role_allows
from evalcore.store.authorize import allowed
from evalcore.store.members import (
    OrgMember,
    add_member,
    add_to_organisation,
    list_members,
    list_organisation_members,
    remove_from_organisation,
    remove_member,
)
from evalcore.store.membership import organisation_role, study_mode
from evalcore.store.study_handle import open_study

_FLASH = "_rl_members_flash"


def _set_role(study_id: str, user: str, role: str, actor: str, failure: str) -> bool:
    """Give ``user`` ``role`` in the study; the outcome is flashed. True when it was set."""
    try:
        member = add_member(get_db(), study_id=study_id, user=user, role=role, actor=actor)
    except (ValueError, LookupError, PermissionError) as error:
        flash(_FLASH, "error", f"{failure}: {error}")
        return False
    flash(_FLASH, "success", f"{member.user_id} is now {member.role} of {study_id}.")
    return True


def _on_add(study_id: str, actor: str) -> None:
    user = str(st.session_state.get("rl_members_user", "")).strip()
    role = str(st.session_state.get("rl_members_role", "annotator"))
    if _set_role(study_id, user, role, actor, "Not added"):
        st.session_state["rl_members_user"] = ""


def _on_change(study_id: str, actor: str) -> None:
    user = str(st.session_state.get("rl_members_change_who", ""))
    role = str(st.session_state.get("rl_members_change_role", "annotator"))
    _set_role(study_id, user, role, actor, "Role not changed")


def _removal(remove: Callable[[], bool], *, failed: str, done: str, absent: str) -> None:
    """Run ``remove`` and flash its outcome: ``done`` or ``absent`` (nobody to remove)."""
    try:
        removed = remove()
    except (ValueError, LookupError, PermissionError) as error:
        flash(_FLASH, "error", f"{failed}: {error}")
        return
    flash(_FLASH, "success" if removed else "info", done if removed else absent)


def _on_remove(study_id: str, actor: str) -> None:
    user = str(st.session_state.get("rl_members_remove_who", ""))
    _removal(lambda: remove_member(get_db(), study_id=study_id, user=user, actor=actor),
             failed="Not removed", done=f"{user} removed from {study_id}.",
             absent=f"{user} was not a member.")


def _on_add_org(org_id: str, actor: str) -> None:
    user = str(st.session_state.get("rl_org_user", "")).strip()
    role = str(st.session_state.get("rl_org_role", "member"))
    try:
        changed = add_to_organisation(get_db(), user=user, org_id=org_id, actor=actor, role=role)
    except (ValueError, LookupError, PermissionError) as error:
        flash(_FLASH, "error", f"Not added to {org_id}: {error}")
        return
    flash(_FLASH, "success" if changed else "info",
          f"{user} is now {role} of organisation {org_id}." if changed
          else f"{user} already was {role} of organisation {org_id}.")
    st.session_state["rl_org_user"] = ""


def _on_remove_org(org_id: str, actor: str) -> None:
    user = str(st.session_state.get("rl_org_remove_who", ""))
    _removal(lambda: remove_from_organisation(get_db(), user=user, org_id=org_id, actor=actor),
             failed=f"Not removed from {org_id}", done=f"{user} removed from organisation "
             f"{org_id}.", absent=f"{user} was not in organisation {org_id}.")


def _show_members(members: list) -> None:
    """A study's or an organisation's members, one row each, as plain text."""
    show_rows({"user": m.user_id, "name": m.display_name, "role": m.role,
               "granted by": m.granted_by, "granted at": m.granted_at} for m in members)


def _organisation(org_id: str, viewer: str) -> None:
    """The study's organisation: its members for its members; admins manage them."""
    st.subheader(f"Organisation {org_id}")
    role = organisation_role(get_db(), viewer, org_id)
    if role is None:
        say("caption", f"You are not a member of organisation {org_id}.")
        return
    members: list[OrgMember] = list_organisation_members(get_db(), org_id, viewer=viewer)
    _show_members(members)
    st.caption("Members read the organisation's documents and create studies in it; admins "
               "also admit people and write its documents; owners also grant the admin and "
               "owner roles. A study lead adds to a study only people already in its "
               "organisation.")
    if not org_role_allows(role, OrgPermission.ADD_MEMBERS):
        admins = ", ".join(m.user_id for m in members if m.role in ("admin", "owner"))
        say("caption", f"Only an admin of {org_id} admits people ({admins}).")
        return
    with st.form("rl_org_add_form", clear_on_submit=False):
        a, b = st.columns([3, 1])
        a.text_input("User to add to the organisation", key="rl_org_user")
        roles = ORG_ROLES if org_role_allows(role, OrgPermission.MANAGE_ROLES) else ("member",)
        b.selectbox("Organisation role", roles, key="rl_org_role")
        st.form_submit_button("Add to organisation", on_click=_on_add_org, args=(org_id, viewer))
    st.selectbox("Organisation member to remove", [m.user_id for m in members],
                 key="rl_org_remove_who")
    st.button("Remove from organisation", key="rl_org_remove", on_click=_on_remove_org,
              args=(org_id, viewer))


def _local_mode(study_id: str) -> None:
    st.info(
        "This study is in **local single-user mode**: it has no member, so whoever opens this "
        "store may do everything, under the name they give. Team mode starts when the study "
        "gets its first member, a lead; from then on every action needs a role "
        "(annotator, reviewer, lead) and the app needs sign-in."
    )
    st.markdown("To turn team mode on, make yourself the study's first lead from the command "
                "line, then configure sign-in (README, *Team sign-in*): signed in, the app lists "
                "only team-mode studies, and a study created on the Data page starts in team mode "
                "with its creator as lead.")
    st.code(f"evalcore members add --db STORE --study {study_id} --user YOU@EXAMPLE.ORG "
            "--role lead", language="bash")


def _manage(study_id: str, actor: str, members: list) -> None:
    st.subheader("Add a member or change a role")
    with st.form("rl_members_add_form", clear_on_submit=False):
        a, b = st.columns([3, 1])
        a.text_input("User (e-mail address or sign-in subject)", key="rl_members_user")
        b.selectbox("Role", ROLES, key="rl_members_role")
        st.form_submit_button("Add member", on_click=_on_add, args=(study_id, actor))
    ids = [m.user_id for m in members]
    left, right = st.columns(2)
    with left:
        st.selectbox("Member", ids, key="rl_members_change_who")
        st.selectbox("New role", ROLES, key="rl_members_change_role")
        st.button("Change role", key="rl_members_change", on_click=_on_change,
                  args=(study_id, actor))
    with right:
        st.selectbox("Member to remove", ids, key="rl_members_remove_who")
        st.button("Remove member", key="rl_members_remove", on_click=_on_remove,
                  args=(study_id, actor))
    st.caption("Every change is recorded in the audit log. A study always keeps at least one "
               "lead: make someone else a lead before removing or demoting the last one.")


study, handle = study_page("Members")
show_flash(_FLASH)
db = handle.db
if study_mode(db, study.study_id) == "local":
    _local_mode(study.study_id)
    st.stop()
viewer = current_annotator()
if not allowed(db, study_id=study.study_id, actor=viewer, permission=Permission.READ):
    st.info("You are not a member of this study: a lead of the study can add you.")
    st.stop()
members = list_members(open_study(db, study.study_id, viewer))
_show_members(members)
if allowed(db, study_id=study.study_id, actor=viewer, permission=Permission.MANAGE_MEMBERS):
    _manage(study.study_id, viewer, members)
else:
    leads = ", ".join(m.user_id for m in members if m.role == "lead")
    say("caption", f"Only a lead can change members ({leads}).")
if study.org_id is not None and viewer:
    _organisation(study.org_id, viewer)
