"""Imports into the evidence store: one module per format, each all-or-nothing.

Every importer validates its whole input first and reports every error with
file, line and field (:class:`evalcore.io.errors.InputErrors`); then it writes
inside one ``write_transaction`` and returns an :class:`ImportSummary`.
"""

from evalcore.store.imports.beir import import_beir
from evalcore.store.imports.common import ImportSummary
from evalcore.store.imports.labels import import_labels, import_qrels
from evalcore.store.imports.observations import import_observations
from evalcore.store.imports.run import import_run

__all__ = [
    "ImportSummary",
    "import_beir",
    "import_labels",
    "import_observations",
    "import_qrels",
    "import_run",
]
