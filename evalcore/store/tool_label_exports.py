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

from evalcore.io.tool_labels import ToolFormat, write_tool_labels
from evalcore.store.exports import ExportRefusedError, ExportSummary, write_export
from evalcore.store.query_reads import query_texts
from evalcore.store.references import reference_labels
from evalcore.store.resolution import resolved_gains
from evalcore.store.study_handle import Study


def export_tool_labels(
    study: Study,
    out: str | Path | TextIO,
    fmt: ToolFormat,
    *,
    reference: str | None = None,
    index: str | None = None,
) -> ExportSummary:
    """Write the reference's ratings in ``fmt`` (``index`` default: the study's corpus id)."""
    settings = study.settings
    labels = resolved_gains(study) if reference is None else reference_labels(study, reference)
    ratings = {q: dict(units) for q, units in labels.items() if units}
    texts = query_texts(study, ratings)
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
        return write_tool_labels(
            stream,
            fmt,
            ratings,
            texts,
            index=index or settings.corpus_id,
            title=settings.name or settings.study_id,
        )

    return ExportSummary(kind=f"labels-{fmt}", rows=write_export(study.db, out, produce))
