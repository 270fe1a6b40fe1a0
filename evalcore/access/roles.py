"""Roles and permissions: what each role of a study may do.

Roles are cumulative: a reviewer may do everything an annotator may, a lead
everything a reviewer may.

* annotator: read the study, label, undo their own labels, mark a query complete;
* reviewer: + adjudicate conflicts, reopen a completeness claim;
* lead: + freeze reference versions, import, create runs and reports, pin
  retrieval protocols, manage the study's members, edit queries' information needs,
  export the whole study, choose the measures the study reports.
"""

from enum import StrEnum
from typing import Literal

RoleName = Literal["annotator", "reviewer", "lead"]

#: Roles from least to most powerful.
ROLES: tuple[RoleName, ...] = ("annotator", "reviewer", "lead")


class Permission(StrEnum):
    """One kind of action on a study."""

    READ = "read the study"
    LABEL = "record or undo a label"
    MARK_COMPLETE = "mark a query complete"
    REOPEN = "reopen a query"
    ADJUDICATE = "adjudicate a label"
    FREEZE_REFERENCE = "freeze a reference version"
    IMPORT = "import data"
    CREATE_RUN = "create a run"
    PIN_PROTOCOL = "pin a retrieval protocol"
    CREATE_REPORT = "create a report"
    MANAGE_MEMBERS = "manage members"
    EDIT_QUERIES = "edit a query's information need"
    EXPORT_STUDY = "export the whole study (evalcore export study)"
    CHOOSE_MEASURES = "choose the study's measures"
    REMOVE_QUERIES = "remove or restore a query of the study"
    DRAW_SAMPLE = "draw or grow a sample of unknown units"


#: The least role that holds each permission: the lead's, but for what annotators and
#: reviewers may do.
REQUIRED_ROLE: dict[Permission, RoleName] = dict.fromkeys(Permission, "lead") | {
    Permission.READ: "annotator",
    Permission.LABEL: "annotator",
    Permission.MARK_COMPLETE: "annotator",
    Permission.REOPEN: "reviewer",
    Permission.ADJUDICATE: "reviewer",
}


def check_role(role: object) -> RoleName:
    """``role`` if it names a role, else ValueError listing the roles."""
    if role not in ROLES:
        raise ValueError(f"unknown role {role!r}: choose one of {', '.join(ROLES)}")
    return role  # type: ignore[return-value]


def role_allows(role: RoleName, permission: Permission) -> bool:
    """Does ``role`` hold ``permission``?"""
    return ROLES.index(role) >= ROLES.index(REQUIRED_ROLE[permission])

