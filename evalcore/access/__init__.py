"""Who may see and change what: roles, identities and the decision rules.

Pure policy — no SQL, no store, no Streamlit: the app, the CLI and library
callers obey the same rules. :mod:`evalcore.access.roles` (what each role may
do), :mod:`evalcore.access.identity` (one string per person) and
:mod:`evalcore.access.decisions` (local vs team mode, who may do and see what,
given the facts). The store reads the facts and applies these rules inside its
write transactions: :mod:`evalcore.store.authorize`, :mod:`evalcore.store.members`,
:mod:`evalcore.store.scoping`.
"""

from evalcore.access.decisions import PermissionDenied, StudyMode
from evalcore.access.identity import LOCAL_USER, normalise_user_id
from evalcore.access.roles import ROLES, Permission

__all__ = [
    "LOCAL_USER",
    "ROLES",
    "Permission",
    "PermissionDenied",
    "StudyMode",
    "normalise_user_id",
]
