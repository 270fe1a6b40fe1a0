"""A corpus's generation: a number that moves forward whenever its documents may have changed.

Triggers bump ``corpus_generations.generation`` of a corpus on every write of one of its
``documents`` rows and every start, publication or discard of a staged import into it
(:mod:`evalcore.store.document_imports`), whoever writes (not on deleting rows no reader
sees: superseded texts, ``:replacements`` markers). The number never goes back, so two
reads of one generation saw the same rows and pending imports, hence the same visible set
under any :class:`~evalcore.store.visibility.Visibility`. A corpus with no row is at 0.
A pin records the generation it was taken at (:mod:`evalcore.store.pins`); revalidation
compares it with the current one before scanning anything.
"""

import sqlite_utils


def current_generation(db: sqlite_utils.Database, corpus_id: str) -> int:
    """The corpus's generation now (0 when none of its documents was written since v13)."""
    row = db.execute(
        "SELECT generation FROM corpus_generations WHERE corpus_id = ?", [corpus_id]
    ).fetchone()
    return 0 if row is None else int(row[0])
