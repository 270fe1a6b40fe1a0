"""Which channel the store is being used through: the app, the CLI, or the library (api).

Audit rows record it (:func:`evalcore.store.audit.record_audit`). The CLI and the
app, which own their process, set it around their work; library callers are
``api``. Standard library only, so the CLI can import it without loading the store.
"""

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Literal

Channel = Literal["app", "cli", "api"]

_CHANNEL: ContextVar[Channel] = ContextVar("evalcore_audit_channel", default="api")


@contextmanager
def audit_channel(channel: Channel) -> Iterator[None]:
    """Record audit rows written inside the block as coming from ``channel``.

    A context variable, not process state: it is set only for the caller's context.
    """
    token = _CHANNEL.set(channel)
    try:
        yield
    finally:
        _CHANNEL.reset(token)


def current_channel() -> Channel:
    return _CHANNEL.get()
