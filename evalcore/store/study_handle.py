"""The study handle: a read of a study's data is authorised once, when the handle is opened.

:func:`open_study` checks that the study exists (``StudyNotFoundError`` listing only the
studies the actor may see) and that the actor may read it (``PermissionDenied``), through
:func:`evalcore.store.authorize.authorize`. Every function reading a study's data takes the
:class:`Study` it returns, so a read without a check cannot be written; a write still checks
its own permission inside its transaction (a handle opened there with that permission)."""

from dataclasses import dataclass, field

import sqlite_utils

from evalcore.access.roles import Permission, RoleName
from evalcore.store.authorize import allowed, authorize, known_study
from evalcore.store.studies import StudyIn

__all__ = ["Study", "open_study"]

_OPENED = object()


@dataclass(frozen=True)
class Study:
    """A study the actor may read: the store, the study id, the reader and their role (None in
    local single-user mode) and the study's settings as read when opened (they never change)."""

    db: sqlite_utils.Database
    study_id: str
    actor: str | None
    role: RoleName | None
    _opened: object = field(default=None, repr=False, compare=False)
    _settings: StudyIn | None = field(default=None, repr=False, compare=False)
    #: a page run's handle: the one read of the store's marks its reads key on
    #: (:func:`evalcore.store.marks.marks_read_once`); None: read each time
    pinned_marks: list | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self._opened is not _OPENED:
            raise TypeError("a Study is opened with open_study, which checks the actor may read")

    @property
    def settings(self) -> StudyIn:
        """The study's settings (:class:`StudyIn`), read once by :func:`open_study`."""
        assert self._settings is not None  # open_study always gives them
        return self._settings

    def may(self, permission: Permission) -> bool:
        """May the actor do ``permission``? (For enabling buttons.)"""
        return allowed(self.db, study_id=self.study_id, actor=self.actor, permission=permission)


def open_study(
    db: sqlite_utils.Database,
    study_id: str,
    actor: str | None,
    permission: Permission = Permission.READ,
    *,
    settings: StudyIn | None = None,
) -> Study:
    """A handle on the study for ``actor``, once they may do ``permission`` (reading by
    default), else ``StudyNotFoundError`` or ``PermissionDenied``. ``settings``: the study's,
    when the caller read them already (a write opens its handle inside its lock)."""
    if settings is None:
        settings = known_study(db, actor, study_id)
    role = authorize(db, study_id=study_id, actor=actor, permission=permission, study=settings)
    return Study(db, study_id, actor, role, _OPENED, settings)
