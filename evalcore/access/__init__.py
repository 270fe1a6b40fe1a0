"""Who may see and change what: roles, identities and the decision rules.

Pure policy — no SQL, no store, no Streamlit: the app, the CLI and library
callers obey the same rules. :mod:`evalcore.access.roles` (what each study role
may do), :mod:`evalcore.access.organisations` (organisation roles: who admits
people and writes a corpus), :mod:`evalcore.access.identity` (one string per
person) and :mod:`evalcore.access.decisions` (local vs team mode, who may do and
see what in a study, given the facts). The store reads the facts and applies these rules inside its
write transactions: :mod:`evalcore.store.authorize`, :mod:`evalcore.store.members`,
:mod:`evalcore.store.scoping`.
"""

from evalcore.access.decisions import PermissionDenied, StudyMode
from evalcore.access.identity import LOCAL_USER, normalise_user_id
from evalcore.access.organisations import (
    ORG_ROLES,
    OrganisationPermissionDenied,
    OrgPermission,
    OrgRole,
)
from evalcore.access.roles import ROLES, Permission

__all__ = [
    "LOCAL_USER",
    "ORG_ROLES",
    "OrgPermission",
    "OrgRole",
    "OrganisationPermissionDenied",
    "ROLES",
    "Permission",
    "PermissionDenied",
    "StudyMode",
    "normalise_user_id",
]
