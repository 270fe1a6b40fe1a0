"""A corpus's generation: a number that moves forward whenever its documents may have changed.

Triggers bump ``corpus_generations.generation`` on every write of a corpus's ``documents``
rows and every start, publication or discard of a staged import into it (not on deleting
rows no reader sees). It never goes back, so two reads at one generation saw the same
visible set under any :class:`~evalcore.store.visibility.Visibility`; no row: 0. A pin
records its generation (:mod:`evalcore.store.pins`): revalidation compares before scanning."""

import sqlite_utils


def current_generation(db: sqlite_utils.Database, corpus_id: str) -> int:
    """The corpus's generation now (0 when none of its documents was written since v13)."""
    row = db.execute(
        "SELECT generation FROM corpus_generations WHERE corpus_id = ?", [corpus_id]
    ).fetchone()
    return 0 if row is None else int(row[0])
