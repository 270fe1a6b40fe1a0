"""The one gate every public read of a study's data passes: :func:`require_read`.

Public library functions that return study data (runs, observations, frozen
references, pinned protocols ...) take the ``viewer`` and call it first: in a
team-mode study only a member who belongs to the study's organisation may read
(``PermissionDenied`` otherwise, saying who can grant access; ``viewer=None`` is
nobody); an unknown study is a ``StudyNotFoundError`` listing only the studies
the viewer may see (:func:`evalcore.store.authorize.require_known_study`, run by
every authorisation, reads and writes alike). Local-mode studies are open to
everyone. The store's own
code reads through the unchecked internal variants (named ``*_unchecked``)
after it has authorised the action it serves, once per public call (never in
a loop). ``viewer`` is a required keyword of every public read: no caller reads
a study's data without saying who reads.
"""

import sqlite_utils

from evalcore.access.roles import Permission
from evalcore.store.authorize import authorize, may_read, require_known_study

__all__ = ["Viewer", "may_read", "require_known_study", "require_read"]

#: What a public read's ``viewer`` may be: a user id, or None (nobody).
Viewer = str | None


def require_read(db: sqlite_utils.Database, viewer: Viewer, study_id: str) -> None:
    """Let ``viewer`` read the study's data, or raise (see the module docstring)."""
    authorize(db, study_id=study_id, actor=viewer, permission=Permission.READ)
