"""From the store to the contract's observations: a run + a reference -> Observations.

One observation per query of the **query set**: the run's queries, plus, for the
working reference, every query of the study (registered or labeled), or, for a
frozen version, every query the version holds. A query the run did not answer
has an empty ranking (a real zero where labels exist, ``missing_reference``
where none do). Queries come out sorted by ``query_id``.

Each observation carries

* ``k``, ``scan_complete`` and ``corpus_fingerprint`` from the run;
* ``corpus_id`` and ``retrieval_unit`` from the study;
* ``labels`` from the working reference (resolved labels; a unit in conflict is
  a ``conflict`` label holding the gains its annotators gave, contract section
  9) or from the frozen version named by ``reference``, which is also recorded
  as ``reference_version``;
* ``population_complete`` from the completeness claims (working or frozen);
* ``permitted_ids``: when the run's protocol names a pinned retrieval protocol
  (``protocol["pinned_protocol"]`` or ``protocol["name"]`` matching a row of
  ``protocols``), the pinned document ids; otherwise ``None``.

The store holds validated data, so observations are built with
``model_construct`` from one ordered scan per table.
"""

import json
from collections.abc import Iterable
from itertools import groupby
from operator import itemgetter

import sqlite_utils

from evalcore.contract.observation import Label, Observation
from evalcore.contract.query_order import natural_key
from evalcore.io.ties import tied_score_pairs as count_tied_pairs
from evalcore.store.completeness import completeness_states, is_complete
from evalcore.store.read_access import NOT_PASSED, Viewer, require_read
from evalcore.store.references import reference_completeness, reference_labels
from evalcore.store.resolution import resolved_gains
from evalcore.store.runs import RunInfo, get_run
from evalcore.store.studies import get_study


def _run_rankings(
    db: sqlite_utils.Database, run_id: int, query_ids: list[str] | None = None
) -> dict[str, tuple[list[str], list[float | None]]]:
    """query_id -> (unit ids, scores) best first (of the given queries only, by primary
    key, when ``query_ids`` is given).

    Read from the packed ``run_rankings`` (one row per query) when the run has it,
    else (runs stored before schema v7) with ordered scans of ``results``.
    """
    if query_ids is None:
        scans: list[tuple[str, list[str]]] = [("", [])]
    else:
        scans = [
            (f" AND query_id IN ({', '.join('?' * len(chunk))})", chunk)
            for chunk in (query_ids[i : i + 500] for i in range(0, len(query_ids), 500))
        ]
    out: dict[str, tuple[list[str], list[float | None]]] = {}
    if db.conn.execute("SELECT 1 FROM run_rankings WHERE run_id = ? LIMIT 1", [run_id]).fetchone():
        loads = json.loads
        for condition, params in scans:
            for query_id, units, scores in db.conn.execute(
                "SELECT query_id, unit_ids, scores FROM run_rankings WHERE run_id = ?" + condition,
                [run_id, *params],
            ):
                out[query_id] = (loads(units), loads(scores))
        return out
    for condition, params in scans:
        rows = db.conn.execute(
            "SELECT query_id, unit_id, score FROM results WHERE run_id = ?" + condition
            + " ORDER BY query_id, rank",
            [run_id, *params],
        )
        for query_id, group in groupby(rows, itemgetter(0)):
            items = list(group)
            out[query_id] = ([r[1] for r in items], [r[2] for r in items])
    return out


def _label(unit_id: str, gain: int | tuple[int, ...]) -> Label:
    if isinstance(gain, tuple):  # in conflict: one of these gains
        return Label(id=unit_id, conflict=list(gain))
    return Label(id=unit_id, gain=gain)


def permitted_ids_for_run(db: sqlite_utils.Database, run: RunInfo) -> list[str] | None:
    """The pinned document ids of the run's retrieval protocol, or None if none is pinned."""
    name = run.protocol.get("pinned_protocol") or run.protocol.get("name")
    if not isinstance(name, str):
        return None
    if not db.execute(
        "SELECT 1 FROM protocols WHERE study_id = ? AND name = ?", [run.study_id, name]
    ).fetchone():
        return None
    return [
        r[0]
        for r in db.execute(
            "SELECT doc_id FROM protocol_documents WHERE study_id = ? AND protocol = ? "
            "ORDER BY doc_id",
            [run.study_id, name],
        )
    ]


def observations_for_run(
    db: sqlite_utils.Database,
    study_id: str,
    run_name: str,
    reference: str | None = None,
    query_ids: Iterable[str] | None = None,
    *,
    viewer: Viewer = NOT_PASSED,
) -> list[Observation]:
    """The contract's observations of one stored run (see the module docstring), if
    ``viewer`` may read the study (:func:`evalcore.store.read_access.require_read`)."""
    require_read(db, viewer, study_id)
    return observations_for_run_unchecked(db, study_id, run_name, reference, query_ids)


def observations_for_run_unchecked(
    db: sqlite_utils.Database,
    study_id: str,
    run_name: str,
    reference: str | None,
    query_ids: Iterable[str] | None,
) -> list[Observation]:
    study = get_study(db, study_id)
    run = get_run(db, study_id, run_name)
    scope = None if query_ids is None else list(dict.fromkeys(query_ids))
    if reference is None:
        # Given queries only: resolve just their labels (the live views ask per query).
        labels = resolved_gains(db, study_id, scope, conflicts=True)
        complete = (
            completeness_states(db, study_id) if scope is None
            else {q: is_complete(db, study_id, q) for q in scope}
        )
    else:
        labels = reference_labels(db, study_id, reference)
        complete = reference_completeness(db, study_id, reference)
    rankings = _run_rankings(db, run.run_id, scope)
    if scope is None:
        wanted = sorted(set(rankings) | set(labels) | set(complete), key=natural_key)
    else:
        wanted = scope
    permitted = permitted_ids_for_run(db, run)
    no_ranking: tuple[list[str], list[float | None]] = ([], [])
    observations: list[Observation] = []
    for query_id in wanted:
        units, scores = rankings.get(query_id, no_ranking)
        gains = labels.get(query_id, {})
        observations.append(
            Observation(
                query_id=query_id,
                corpus_id=study.corpus_id,
                corpus_fingerprint=run.corpus_fingerprint,
                cutoff=None,
                retrieval_unit=study.retrieval_unit,
                k=run.k,
                returned_ids=units if units else [],
                scores=None if None in scores else (scores if scores else []),
                labels=[_label(u, g) for u, g in sorted(gains.items())],
                population_complete=complete.get(query_id, False),
                scan_complete=run.scan_complete,
                permitted_ids=None if permitted is None else list(permitted),
                unit_of=None,
                reference_version=reference,
            )
        )
    return observations


def tied_score_pairs(observations: Iterable[Observation]) -> int:
    """Pairs of returned items of one query with equal scores (their order came from the
    tie rule), counted as :mod:`evalcore.io.ties` counts them for a TREC run."""
    return count_tied_pairs(obs.scores for obs in observations)
