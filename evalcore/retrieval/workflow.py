"""Executing a pinned protocol: revalidate, rank every query, store the run.

Whoever executes a pin must be a lead of the study and able to read every document
it sees (a member of each of its organisations, once the corpus is in team mode),
checked for the executor before any work and again inside the write: a pin taken
by someone who reads more is never a search oracle for someone who reads less.

:func:`execute_protocol` runs in three steps:

1. **Read snapshot.** In one read transaction (a consistent view of the
   store), the pin is revalidated against the corpus
   (:mod:`evalcore.retrieval.revalidation`). If anything changed, the refusal is
   recorded (``retrieval_refusals`` + audit, in their own transaction) and
   :class:`RetrievalRefused` is raised naming the documents; nothing of the run
   is stored. Otherwise the pinned documents are indexed privately
   (:mod:`evalcore.retrieval.snapshot`) and every query of the study is ranked,
   in ``query_id`` order, at the protocol's ``top_k``.
2. **Time budget.** ``time_budget_s`` counts from the start of the call
   (revalidation and indexing included) and is checked before each query; a
   query already running finishes. When the budget runs out, the queries
   already ranked are kept and the rest are not executed: the run is stored
   with ``scan_complete = false`` (so every observation of it is
   ``partial_scan`` and no metric of it is published) and its protocol lists
   the ``unexecuted_query_ids``.
3. **Store.** The run (source ``lexical``, ``k = top_k``, the pinned protocol
   with its fingerprint under the run's ``protocol``, ``"pinned_protocol"``
   naming the pin, whose document set becomes every observation's
   ``permitted_ids``) and its results (rank, doc id, score = -bm25, larger is
   better) are written in one transaction, with an audit entry.

Ties follow the protocol's ``tie_rule`` (:mod:`evalcore.retrieval.lexical_protocol`).
"""

import sqlite3
import time

import sqlite_utils

from evalcore.access.roles import Permission
from evalcore.io.progress import counted, reporter
from evalcore.retrieval.errors import RetrievalRefused
from evalcore.retrieval.pin import PinnedProtocol, pinned_protocol
from evalcore.retrieval.revalidation import revalidate
from evalcore.retrieval.snapshot import SnapshotIndex
from evalcore.store.audit import record_audit
from evalcore.store.query_reads import query_texts
from evalcore.store.refusals import record_refusal
from evalcore.store.runs import RunInfo, add_run, get_run, run_exists
from evalcore.store.scoping import require_organisations
from evalcore.store.studies import get_study
from evalcore.store.study_handle import open_study
from evalcore.store.transaction import in_transaction, read_snapshot, write_transaction

#: The clock of time budgets (replaceable in tests).
monotonic = time.monotonic


def execute_protocol(
    db: sqlite_utils.Database,
    *,
    study_id: str,
    protocol_name: str,
    run_name: str,
    actor: str,
    time_budget_s: float | None = None,
) -> RunInfo:
    """Revalidate the pinned protocol, rank every query, store and return the run.

    Raises :class:`RetrievalRefused` (after recording the refusal) when the
    corpus changed since the pin; ``ValueError`` for bad arguments (run name
    taken, no query, non-positive budget); ``StudyNotFoundError`` /
    ``ProtocolNotFoundError`` for unknown names. See the module docstring.
    """
    started = monotonic()
    if in_transaction(db):
        raise RuntimeError(
            "execute_protocol manages its own transactions; call it outside write_transaction"
        )
    if not run_name:
        raise ValueError("the run name is empty; give the run a name")
    if time_budget_s is not None and not time_budget_s > 0:
        raise ValueError(f"time_budget_s must be a positive number of seconds, got {time_budget_s}")
    get_study(db, study_id)
    # Checked again inside the write (add_run): refuse before any ranking work.
    study = open_study(db, study_id, actor, Permission.CREATE_RUN)
    pinned = pinned_protocol(study, protocol_name)
    _require_sight(db, pinned, actor)
    if run_exists(study, run_name):
        raise ValueError(
            f"run {run_name!r} already exists in study {study_id!r}; choose another run name"
        )
    queries = query_texts(study)
    if not queries:
        raise ValueError(f"study {study_id!r} has no query; add queries before retrieving")

    refusal: RetrievalRefused | None = None
    rankings: dict[str, list[tuple[str, float]]] = {}  # query id -> ranking, in query order
    ranking_s = ranking_cpu_s = 0.0  # the query time (wall, CPU): ranking, nothing else
    with read_snapshot(db):  # one consistent read view for revalidation and ranking
        changes = revalidate(study, pinned)
        if not changes.unchanged:
            refusal = RetrievalRefused(changes.message(), changes.detail())
        else:
            with SnapshotIndex(study, pinned) as index:
                if index.document_count != pinned.document_count:
                    refusal = _inconsistent_snapshot(pinned, index.document_count)
                else:
                    ranking_started = time.perf_counter(), time.thread_time()
                    reporter().stage("retrieving", len(queries), "queries")
                    for query_id, text in counted(queries.items(), every=10):
                        if time_budget_s is not None and monotonic() - started >= time_budget_s:
                            break
                        rankings[query_id] = index.search(text, pinned.protocol.top_k)
                    ranking_s = time.perf_counter() - ranking_started[0]
                    ranking_cpu_s = time.thread_time() - ranking_started[1]

    if refusal is not None:
        record_refusal(
            db,
            study_id=study_id,
            protocol=protocol_name,
            run_name=run_name,
            actor=actor,
            message=str(refusal),
            detail=refusal.detail,
        )
        raise refusal

    unexecuted = [q for q in queries if q not in rankings]
    protocol = {  # the pin plus how it was executed
        **pinned.protocol.to_json_dict(),
        "pinned_protocol": pinned.name,
        "pinned_document_count": pinned.document_count,
        "execution": {
            "engine": "sqlite fts5",
            "sqlite_version": sqlite3.sqlite_version,
            "ranking": "bm25 (k1=1.2, b=0.75) over an index of exactly the pinned documents",
            "score": "-bm25, larger is better",
            "queries_total": len(queries),
            "queries_executed": len(rankings),
            "unexecuted_query_ids": unexecuted,
            "time_budget_s": time_budget_s,
        },
    }
    with write_transaction(db):
        _require_sight(db, pinned, actor)  # again under the write lock: memberships may change
        add_run(
            db,
            study_id=study_id,
            name=run_name,
            source="lexical",
            k=pinned.protocol.top_k,
            rankings=rankings,
            protocol=protocol,
            corpus_fingerprint=pinned.corpus_fingerprint,
            scan_complete=not unexecuted,
            actor=actor,
        )
        record_audit(
            db,
            actor=actor,
            action="lexical.run",
            study_id=study_id,
            detail={
                "run": run_name,
                "protocol": protocol_name,
                "corpus_fingerprint": pinned.corpus_fingerprint,
                "queries_executed": len(rankings),
                "queries_total": len(queries),
                "results": sum(map(len, rankings.values())),
                "elapsed_s": round(monotonic() - started, 3),
                "ranking_s": round(ranking_s, 3),
                "ranking_cpu_s": round(ranking_cpu_s, 3),
            },
        )
    return get_run(study, run_name)


def _require_sight(db: sqlite_utils.Database, pinned: PinnedProtocol, actor: str) -> None:
    """The executor — not whoever pinned it — must be able to read every document the pin
    sees: its scores would otherwise tell which of them contain which terms."""
    assert pinned.protocol.corpus_id is not None
    require_organisations(db, actor=actor, study_id=pinned.study_id,
                          corpus_id=pinned.protocol.corpus_id,
                          organisations=pinned.protocol.organisations,
                          permission=Permission.CREATE_RUN, protocol=pinned.name)


def _inconsistent_snapshot(pinned: PinnedProtocol, indexed: int) -> RetrievalRefused:
    return RetrievalRefused(
        f"refused: pinned protocol {pinned.name!r} holds {pinned.document_count} documents but "
        f"only {indexed} could be indexed with their pinned content; nothing was run or stored; "
        "pin a new protocol under another name",
        {"pinned": pinned.document_count, "indexed": indexed},
    )
