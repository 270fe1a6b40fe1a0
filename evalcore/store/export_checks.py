"""Cheap checks of whether an export would be refused, before anyone asks for the file.

The app offers downloads built only when clicked; a refusal
(:class:`~evalcore.store.exports.ExportRefusedError`, e.g. an id with whitespace) must still
be said up front. Each check first asks whether there is a *suspect* (a superset of what
the export refuses: the facts :mod:`evalcore.store.trec_ids` records, or a frozen version's
ids read one row per query); only then is the export itself run, so the message and each
rule stay the export's own.
"""

import io

from evalcore.store.exports import ExportRefusedError, export_qrels, export_run
from evalcore.store.lookup import exists
from evalcore.store.runs import get_run
from evalcore.store.study_handle import Study
from evalcore.store.tool_label_exports import export_tool_labels
from evalcore.store.trec_ids import PER_QUERY, ids_suspect


def qrels_suspect(study: Study, reference: str | None) -> bool:
    """Whether the study's label events (or the frozen ``reference``'s labels) hold an id a
    TREC qrels export may refuse (a superset: every event, undone or not, counts). The
    working labels' answer is the fact recorded as they were written."""
    if reference is None:
        return exists(study.db, "SELECT 1 FROM label_id_suspects WHERE study_id = ?",
                      [study.study_id])
    return ids_suspect(
        study.db.execute(
            PER_QUERY.format(source="reference_labels WHERE study_id = ? AND version = ?"),
            [study.study_id, reference],
        )
    )


def _refusal(export) -> str | None:
    try:
        export(io.StringIO())
    except ExportRefusedError as error:
        return str(error)
    return None


def qrels_refusal(
    study: Study, reference: str | None, *, suspect: bool | None = None
) -> str | None:
    """Why :func:`export_qrels` would refuse these qrels, or None (it would not).

    ``suspect``: whether the labels hold a suspect, if the caller knows it already (e.g. a
    frozen version's, kept per content hash); read here if None.
    """
    if suspect is None:
        suspect = qrels_suspect(study, reference)
    if not suspect:
        return None
    return _refusal(lambda out: export_qrels(study, out, reference=reference))


def tool_labels_refusal(study: Study, fmt: str, reference: str | None) -> str | None:
    """Why :func:`export_tool_labels` would refuse, or None (only Quepid refuses: two rated
    queries shown with the same text)."""
    if fmt != "quepid":
        return None
    suspect = study.db.execute(
        "SELECT 1 FROM queries WHERE study_id = ? GROUP BY coalesce(nullif(text, ''), query_id) "
        "HAVING count(*) > 1 LIMIT 1",
        [study.study_id],
    ).fetchone()
    if suspect is None:
        return None
    return _refusal(lambda out: export_tool_labels(study, out, fmt, reference=reference))


def run_suspect(study: Study, run_id: int) -> bool:
    """Whether the stored run ``run_id`` holds an id a TREC run export refuses: the fact
    recorded as its results were written (a stored run never changes)."""
    row = study.db.execute("SELECT trec_suspect FROM runs WHERE run_id = ?", [run_id]).fetchone()
    return row is not None and bool(row[0])


def run_refusal(study: Study, run_name: str, *, suspect: bool | None = None) -> str | None:
    """Why :func:`export_run` would refuse this run, or None (it would not).

    ``suspect``: :func:`run_suspect` of the run, if the caller knows it already.
    """
    run = get_run(study, run_name)
    if not (run_suspect(study, run.run_id) if suspect is None else suspect):
        return None
    return _refusal(lambda out: export_run(study, run_name, out))
