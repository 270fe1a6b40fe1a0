"""The one gate every public read of a study's data passes: :func:`require_read`.

Public library functions that return study data (runs, observations, frozen
references, pinned protocols ...) take the ``viewer`` and call it first: in a
team-mode study only a member who belongs to the study's organisation may read
(``PermissionDenied`` otherwise, saying who can grant access; ``viewer=None`` is
nobody); an unknown study is a ``StudyNotFoundError`` listing only the studies
the viewer may see. Local-mode studies are open to everyone. The store's own
code reads through the unchecked internal variants (named ``*_unchecked``)
after it has authorised the action it serves, once per public call (never in
a loop). ``viewer`` is a required keyword of every public read: no caller reads
a study's data without saying who reads.
"""

import sqlite_utils

from evalcore.access.decisions import PermissionDenied
from evalcore.access.roles import Permission
from evalcore.store.authorize import authorize
from evalcore.store.lookup import not_found
from evalcore.store.studies import StudyNotFoundError, study_exists, study_ids

#: What a public read's ``viewer`` may be: a user id, or None (nobody).
Viewer = str | None


def may_read(db: sqlite_utils.Database, viewer: str | None, study_id: str) -> bool:
    """May ``viewer`` read the (existing) study?"""
    try:
        authorize(db, study_id=study_id, actor=viewer, permission=Permission.READ)
    except PermissionDenied:
        return False
    return True


def require_known_study(db: sqlite_utils.Database, viewer: str | None, study_id: str) -> None:
    """Raise StudyNotFoundError, listing only the studies ``viewer`` may see, for an unknown id."""
    if not study_exists(db, study_id):
        raise not_found(StudyNotFoundError, f"no study {study_id!r} in this store",
                        [s for s in study_ids(db) if may_read(db, viewer, s)],
                        listing="known studies", none_yet="you may see no study in this store")


def require_read(db: sqlite_utils.Database, viewer: Viewer, study_id: str) -> None:
    """Let ``viewer`` read the study's data, or raise (see the module docstring)."""
    require_known_study(db, viewer, study_id)
    authorize(db, study_id=study_id, actor=viewer, permission=Permission.READ)
