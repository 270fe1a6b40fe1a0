"""A study's query texts, read by a viewer (the gated face of ``studies.query_text(s)_unchecked``).

The unchecked readers live in :mod:`evalcore.store.studies`, below the read gate
(:mod:`evalcore.store.read_access` reads studies to decide); pages and the CLI
read query texts here, after :func:`~evalcore.store.read_access.require_read`.
"""

from collections.abc import Iterable

import sqlite_utils

from evalcore.store.read_access import Viewer, require_read
from evalcore.store.studies import query_text_unchecked, query_texts_unchecked


def query_texts(
    db: sqlite_utils.Database, study_id: str, query_ids: Iterable[str] | None = None, *,
    viewer: Viewer,
) -> dict[str, str]:
    """query_id -> text (every query, or only ``query_ids``) if ``viewer`` may read the study."""
    require_read(db, viewer, study_id)
    return query_texts_unchecked(db, study_id, query_ids)


def query_text(db: sqlite_utils.Database, study_id: str, query_id: str, *, viewer: Viewer) -> str:
    """One query's text ('' when it has none) if ``viewer`` may read the study."""
    require_read(db, viewer, study_id)
    return query_text_unchecked(db, study_id, query_id)
