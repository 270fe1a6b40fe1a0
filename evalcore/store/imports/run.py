"""Import a TREC run file (``query_id Q0 doc_id rank score tag``) as a stored run.

Parsed by :func:`evalcore.io.trec.parse_run`: items are stored in trec_eval's order (score
descending, ties by doc id descending) with ranks 1..n and their scores, so the stored
ranking is the one any TREC tool evaluates; source ``imported``, the given ``k``. The name
defaults to the run's tag when the file has one, else to the file name without extension;
a name already used in the study is refused, and so are doc ids unknown to a non-empty
corpus unless ``allow_unknown_ids``.

All or nothing without blocking annotators: the run is staged (invisible), written in paced
chunks in key order and made visible by one small commit (:mod:`evalcore.store.staging`)."""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial
from pathlib import Path

import sqlite_utils

from evalcore.access.roles import Permission
from evalcore.io.progress import reporter
from evalcore.io.trec import TrecRun, parse_run
from evalcore.store.authorize import authorize
from evalcore.store.imports import common
from evalcore.store.runs import add_run, publish_run, write_run_results
from evalcore.store.staging import (
    Pacer,
    bulk_writes,
    discard_staged_run,
    paced_writes,
    whole_query_chunks,
)
from evalcore.store.studies import get_study
from evalcore.store.transaction import write_transaction


def _rows(run: TrecRun) -> Iterator[tuple[str, int, str, float]]:
    """Rows in the results table's key order (query ids in code point order): each chunk appends
    at the B-tree's right edge instead of splitting pages all over the table."""
    for q in sorted(run.doc_ids):
        docs = run.doc_ids[q]
        scores = run.scores_for(q)
        for rank, (d, s) in enumerate(zip(docs, scores, strict=True), start=1):
            yield q, rank, d, float(s)


def import_run(
    db: sqlite_utils.Database,
    source: common.Source,
    *,
    study_id: str,
    k: int,
    name: str | None = None,
    allow_unknown_ids: bool = False,
    corpus_fingerprint: str | None = None,
    scan_complete: bool = True,
    actor: str = "import",
) -> common.ImportSummary:
    """Import a run file into the study (all or nothing); see the module docstring."""
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be an integer >= 1, got {k!r}")
    study = get_study(db, study_id)
    text = common.load_source(source)
    run = parse_run(text)
    common.refuse_long_ids((i for q, docs in run.doc_ids.items() for i in (q, *docs)), text)
    run_name = name or (run.tags[0] if len(run.tags) == 1 else common.source_stem(Path(text.name).name))
    summary = common.ImportSummary(kind="run", study_id=study_id, source=text.name, rows=run.n_rows,
                            run=run_name, warnings=list(run.notes), notes=text.notes())
    if run.tied_score_pairs:
        summary.warnings.append(
            f"{run.tied_score_pairs} tied score pair(s): ordered by doc id descending, as "
            "trec_eval does"
        )
    # Read-only checks before any write lock is taken.
    summary.refuse_run_taken(db, "choose another name with --name")
    common.check_known_ids(db, study.corpus_id, (d for docs in run.doc_ids.values() for d in docs),
                    text, what="document", allow_unknown=allow_unknown_ids)
    with write_transaction(db):
        authorize(db, study_id=study_id, actor=actor, permission=Permission.IMPORT)
        run_id = add_run(db, actor=actor, study_id=study_id, name=run_name, source="imported",
                         k=k, protocol={"imported_from": Path(text.name).name},
                         corpus_fingerprint=corpus_fingerprint, scan_complete=scan_complete,
                         staged=True)
    try:
        pacer = Pacer()
        progress = reporter()
        progress.stage(f"writing run {run_name}", run.n_rows, "rows")
        with bulk_writes(db):  # one short transaction per chunk: others queue briefly
            paced_writes(db, pacer, whole_query_chunks(_rows(run), pacer),
                         partial(write_run_results, db, run_id), lambda n, _: progress.advance(n))
        summary.results = run.n_rows
        summary.queries = len(run.doc_ids)
        with write_transaction(db):  # the one small commit that makes the whole run visible
            authorize(db, study_id=study_id, actor=actor, permission=Permission.IMPORT)
            publish_run(db, run_id, study_id=study_id, actor=actor)
            summary.audit(db, actor)
    except BaseException:
        discard_staged_run(db, run_id)
        raise
    return summary

