"""Export a reference as another tool's judgments: Quepid CSV, RRE ratings, ``_rank_eval``.

One rating per (query, unit) of the working reference (or a frozen version):
the resolved gain; units in conflict are left out (as for TREC qrels). Query
text comes from the study (Quepid names queries by text; a query without text
is named by its id). Importing the output into a study reproduces the same
ratings (:mod:`evalcore.store.imports.tool_labels`). Written atomically, no more readable
than the store (:func:`evalcore.store.exports.write_export`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TextIO

import sqlite_utils

from evalcore.io.tool_labels import ToolFormat, write_tool_labels
from evalcore.store.exports import ExportRefusedError, ExportSummary, write_export
from evalcore.store.references import reference_labels_unchecked
from evalcore.store.resolution import resolved_gains_unchecked
from evalcore.store.scoping import require_study_view
from evalcore.store.studies import get_study, query_texts_unchecked


def export_tool_labels(
    db: sqlite_utils.Database,
    study_id: str,
    out: str | Path | TextIO,
    fmt: ToolFormat,
    *,
    reference: str | None = None,
    index: str | None = None,
    viewer: str | None,
) -> ExportSummary:
    """Write the reference's ratings in ``fmt`` (``index`` default: the study's corpus id)."""
    require_study_view(db, viewer, study_id)  # first: an unknown id lists only visible studies
    study = get_study(db, study_id)
    labels = (resolved_gains_unchecked(db, study_id) if reference is None
              else reference_labels_unchecked(db, study_id, reference))
    ratings = {q: dict(units) for q, units in labels.items() if units}
    texts = query_texts_unchecked(db, study_id, ratings)
    if fmt == "quepid":
        by_text: dict[str, str] = {}
        for q in ratings:
            shown = texts.get(q) or q
            other = by_text.setdefault(shown, q)
            if other != q:
                raise ExportRefusedError(
                    f"queries {other} and {q} have the same text {shown!r}; Quepid names "
                    "queries by text, so they would merge: export as rre or rank-eval instead")

    def produce(stream: TextIO) -> int:
        return write_tool_labels(stream, fmt, ratings, texts, index=index or study.corpus_id,
                                 title=study.name or study_id)

    return ExportSummary(kind=f"labels-{fmt}", rows=write_export(db, out, produce))
