"""A corpus's generation: a number that moves forward whenever its documents may have changed.

Triggers bump ``corpus_generations.generation`` of a corpus on every
insert, update or delete of one of its ``documents`` rows, staged or not, and on
every start, publication or discard of a staged document import into it
(:mod:`evalcore.store.document_imports`), whatever code or tool writes them (since v14
not on deleting a row a published import superseded, nor on an import's ``:replacements``
marker: no reader sees either, so a re-import moves it once after staging, at
publication). A
row is never deleted and its number never goes back, so a generation is never
seen twice: two reads of the same generation saw the same document rows and the
same pending imports, hence the same visible set under any
:class:`~evalcore.store.visibility.Visibility`. A corpus with no row has had no
document written since v13: generation 0 (its first write makes it 1).

A pin records the generation it was taken at (:mod:`evalcore.store.pins`);
revalidation compares it with the current one before scanning anything.
"""

import sqlite_utils


def current_generation(db: sqlite_utils.Database, corpus_id: str) -> int:
    """The corpus's generation now (0 when none of its documents was written since v13)."""
    row = db.execute(
        "SELECT generation FROM corpus_generations WHERE corpus_id = ?", [corpus_id]
    ).fetchone()
    return 0 if row is None else int(row[0])
