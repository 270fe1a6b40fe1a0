"""Who may see and change what: users, organisations, study roles and scoping.

No Streamlit here: the app, the CLI and library callers obey the same rules.
See :mod:`evalcore.access.authorize` (local single-user mode vs team mode),
:mod:`evalcore.access.roles` and :mod:`evalcore.access.scoping`.
"""

from evalcore.access.authorize import PermissionDenied, allowed, authorize, study_mode
from evalcore.access.identity import LOCAL_USER, normalise_user_id
from evalcore.access.members import (
    Member,
    add_member,
    add_to_organisation,
    list_members,
    remove_member,
    user_organisations,
)
from evalcore.access.roles import ROLES, Permission
from evalcore.access.scoping import (
    can_view_study,
    displayable_text,
    readable_document,
    require_study_view,
    visible_studies,
)

__all__ = [
    "LOCAL_USER",
    "ROLES",
    "Member",
    "Permission",
    "PermissionDenied",
    "add_member",
    "add_to_organisation",
    "allowed",
    "authorize",
    "can_view_study",
    "displayable_text",
    "list_members",
    "normalise_user_id",
    "readable_document",
    "remove_member",
    "require_study_view",
    "study_mode",
    "user_organisations",
    "visible_studies",
]
