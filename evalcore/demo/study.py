"""The embedded demo study: every feature of the app on deterministic data.

:func:`build_demo` writes a generated knowledge-base
corpus (:mod:`evalcore.demo.corpus`, 311 documents in two organisations), 25
queries, two lexical runs made through the pinned lexical workflow with
different protocols, labels from two annotators (with conflicts), and two
queries whose relevant set is marked complete. Every query has labels (at least
a first pass over each run's top results), so comparing the two runs is
*undecided* rather than undecidable on P@10 and RR@10, and a few dozen labels
from the to-decide queue settle it; nDCG and recall stay unavailable where the
relevant set is not complete. Building into a store that
already holds the demo study changes nothing.

The simulated annotators judge by topic and term overlap (see
:func:`simulated_gain`); ``bob`` disagrees with ``alice`` by one grade on a
fixed, hash-chosen share of units, which is where the conflicts come from.
"""

import hashlib

import sqlite_utils

from evalcore.access.roles import Permission
from evalcore.annotation.pool import query_pool
from evalcore.contract.frozen import FrozenModel
from evalcore.contract.gains import MAX_GAIN
from evalcore.demo.corpus import (
    HOSTILE_DOC_ID,
    ORG_A,
    ORG_B,
    QUERIES,
    demo_documents,
    demo_queries,
    topic_of,
)
from evalcore.retrieval.lexical_protocol import parse_protocol
from evalcore.retrieval.pin import pin_protocol
from evalcore.retrieval.workflow import execute_protocol
from evalcore.store.authorize import allowed
from evalcore.store.cant_judge import record_cant_judge
from evalcore.store.completeness import mark_complete
from evalcore.store.corpus import DocumentIn, add_documents
from evalcore.store.labels import has_labels_from, record_label
from evalcore.store.pins import pin_exists
from evalcore.store.runs import list_runs, run_exists
from evalcore.store.studies import StudyIn, create_organisation, study_exists, study_ids
from evalcore.store.study_handle import open_study
from evalcore.store.study_setup import add_queries, create_study
from evalcore.store.transaction import write_transaction

DEMO_STUDY_ID = "demo"
DEMO_CORPUS_ID = "northwind-kb"
DEMO_STUDY_NAME = "Demo: Northwind Cloud knowledge base"
DEMO_SOURCE = "demo"

#: Queries whose relevant set alice judges exhaustively (pool + corpus) and marks complete.
COMPLETE_QUERIES = ("q02", "q09")
#: Queries both annotators label in full (bob disagrees on some units: conflicts).
DOUBLE_QUERIES = ("q04", "q11", "q16")
#: Queries alice labels half-way (by best rank): metrics stay partly unavailable.
PARTIAL_QUERIES = ("q01", "q05", "q07", "q12", "q18", "q20")
#: Every other query has a first pass: alice labeled the top ``FIRST_PASS_DEPTH`` results
#: of each run, so every query has labels (no ``missing_reference``) and the two runs'
#: comparison is undecided with a short to-decide queue (docs/decided-comparisons.md).
FIRST_PASS_DEPTH = 5
#: Top results alice could not judge (marked "can't judge": they stay unlabeled), so the
#: reciprocal rank of the run that puts them first is still open.
CANT_JUDGE: tuple[tuple[str, str, str], ...] = (
    ("q01", HOSTILE_DOC_ID, "the article shows raw markup; cannot tell what it says"),
    ("q03", "kb-0015", "the steps may be for an older console; asked the product team"),
)

#: The two lexical protocols: same visible documents and depth (so comparable), different weights.
RUN_PROTOCOLS: dict[str, dict] = {
    name: {
        "method": "lexical",
        "top_k": 10,
        "cutoff": "2026-06-30T00:00:00Z",
        "organisations": [ORG_A],
        "weights": {"title": title_weight, "text": 1.0},
    }
    for name, title_weight in (("bm25-plain", 1.0), ("bm25-title-boost", 4.0))
}


class DemoSummary(FrozenModel):

    created: bool
    study_id: str
    documents: int = 0
    queries: int = 0
    runs: int = 0
    labels: int = 0
    complete_queries: int = 0


def _words(text: str) -> set[str]:
    return {w for w in "".join(c.lower() if c.isalnum() else " " for c in text).split() if len(w) > 2}


def _matches(terms: set[str], words: set[str]) -> int:
    return sum(1 for t in terms if any(w.startswith(t[:5]) for w in words))


def simulated_gain(query_id: str, doc: DocumentIn) -> int:
    """The demo judge: 0 off-topic; on-topic 1..4 by query-term overlap in title and text."""
    text, topic = next((t, topic) for q, t, topic in QUERIES if q == query_id)
    if doc.doc_id == HOSTILE_DOC_ID:
        return 1 if topic == "sign-in" else 0
    if topic_of(doc.doc_id) != topic:
        return 0
    terms = _words(text)
    in_title = _matches(terms, _words(doc.title))
    in_text = _matches(terms, _words(doc.text))
    return min(4, 1 + in_title + (1 if in_text >= 2 else 0))


def _bob_disagrees(query_id: str, unit_id: str) -> bool:
    digest = hashlib.sha256(f"bob\x00{query_id}\x00{unit_id}".encode()).digest()
    return digest[0] < 40  # about one unit in six


def demo_needs_building(db: sqlite_utils.Database) -> bool:
    """True for a store without any study, or with an unfinished demo (read-only check)."""
    if not study_exists(db, DEMO_STUDY_ID):
        return not study_ids(db)
    if not allowed(db, study_id=DEMO_STUDY_ID, actor=None, permission=Permission.READ):
        return False  # taken into team mode: no longer a demo to finish
    study = open_study(db, DEMO_STUDY_ID, None)
    runs = {run.name for run in list_runs(study)}
    labeled = has_labels_from(study, DEMO_SOURCE)
    return not (set(RUN_PROTOCOLS) <= runs and labeled)


def ensure_demo_if_empty(db: sqlite_utils.Database) -> DemoSummary | None:
    """Build the demo into a store that holds no study (or finish an interrupted demo build).

    A store with other studies and no demo, or with the complete demo, is left
    alone without taking a write lock. Several processes may call this at once on one
    empty store (app servers sharing a database): the study is created inside one write
    transaction that checks again, holding the write lock, that the store has no study,
    so the demo is seeded once and a study created meanwhile is never joined by a demo.
    """
    if not demo_needs_building(db):
        return None
    return _build(db, actor="demo", only_into_empty=True)


def build_demo(db: sqlite_utils.Database, *, actor: str = "demo") -> DemoSummary:
    """Write the demo study; a store that already has all of it is left untouched.

    Three steps, each checked before it writes, so an interrupted or concurrent
    build finishes cleanly and a complete one does nothing: (1) organisations,
    study, corpus and queries in one transaction; (2) each run pinned and
    executed by the lexical workflow (which manages its own transactions);
    (3) labels and completeness claims in one transaction.
    """
    summary = _build(db, actor=actor, only_into_empty=False)
    assert summary is not None  # only a build into an empty store stops short
    return summary


def _build(db: sqlite_utils.Database, *, actor: str, only_into_empty: bool) -> DemoSummary | None:
    """:func:`build_demo`; with ``only_into_empty``, ``None`` when step (1) finds, holding
    the write lock, a store with studies but no demo."""
    created = _frame(db, only_into_empty=only_into_empty)
    if created is None:
        return None
    documents = {d.doc_id: d for d in demo_documents()}
    runs = _runs(db, actor)
    labels = _labels_and_completeness(db, documents)
    return DemoSummary(
        created=created or runs > 0 or labels > 0,
        study_id=DEMO_STUDY_ID,
        documents=len(documents) if created else 0,
        queries=len(QUERIES) if created else 0,
        runs=runs,
        labels=labels,
        complete_queries=len(COMPLETE_QUERIES) if labels else 0,
    )


def _frame(db: sqlite_utils.Database, *, only_into_empty: bool = False) -> bool | None:
    """Step (1); False when the demo study is there already, None when ``only_into_empty``
    and the store holds other studies (both checked holding the write lock)."""
    with write_transaction(db):
        if study_exists(db, DEMO_STUDY_ID):
            return False
        if only_into_empty and study_ids(db):
            return None
        create_organisation(db, ORG_A, "Northwind Cloud")
        create_organisation(db, ORG_B, "Contoso (partner workspace)")
        create_study(
            db,
            StudyIn(study_id=DEMO_STUDY_ID, name=DEMO_STUDY_NAME, corpus_id=DEMO_CORPUS_ID,
                    org_id=ORG_A),
        )
        add_documents(db, DEMO_CORPUS_ID, demo_documents())
        add_queries(db, DEMO_STUDY_ID, demo_queries())
    return True


def _runs(db: sqlite_utils.Database, actor: str) -> int:
    """Pin and execute each demo protocol that is not there yet; returns runs created."""
    made = 0
    study = open_study(db, DEMO_STUDY_ID, actor)
    for name, protocol in RUN_PROTOCOLS.items():
        # A ValueError with the step done anyway means another session did it just now.
        if not pin_exists(study, name):
            try:
                parsed = parse_protocol(protocol, source=f"demo protocol {name}")
                pin_protocol(db, study_id=DEMO_STUDY_ID, name=name, protocol=parsed, actor=actor)
            except ValueError:
                if not pin_exists(study, name):
                    raise
        if not run_exists(study, name):
            try:
                execute_protocol(db, study_id=DEMO_STUDY_ID, protocol_name=name, run_name=name,
                                 actor=actor)
                made += 1
            except ValueError:
                if not run_exists(study, name):
                    raise
    return made


def _labels_and_completeness(db: sqlite_utils.Database, docs: dict[str, DocumentIn]) -> int:
    with write_transaction(db):
        if has_labels_from(open_study(db, DEMO_STUDY_ID, None), DEMO_SOURCE):
            return 0
        labels = _labels(db, docs)
        for query_id in COMPLETE_QUERIES:
            reason = "every pooled item and every on-topic document judged"
            mark_complete(db, study_id=DEMO_STUDY_ID, query_id=query_id, actor="alice", reason=reason)
    return labels


def _label(db: sqlite_utils.Database, query_id: str, unit_id: str, gain: int, who: str) -> None:
    record_label(db, study_id=DEMO_STUDY_ID, query_id=query_id, unit_id=unit_id, gain=gain,
                 annotator=who, source=DEMO_SOURCE)


def _labels(db: sqlite_utils.Database, docs: dict[str, DocumentIn]) -> int:
    count = 0
    fully = (*COMPLETE_QUERIES, *DOUBLE_QUERIES, *PARTIAL_QUERIES)
    first_pass = tuple(q for q, _, _ in QUERIES if q not in fully)
    cant_judge = {(q, u): note for q, u, note in CANT_JUDGE}
    study = open_study(db, DEMO_STUDY_ID, None)
    for query_id in (*fully, *first_pass):
        items = query_pool(study, query_id)
        pool = [item.unit_id for item in items]
        if query_id in PARTIAL_QUERIES:
            pool = pool[: len(pool) // 2]
        elif query_id in first_pass:  # what some run returned in its top FIRST_PASS_DEPTH
            pool = [i.unit_id for i in items
                    if any(rank <= FIRST_PASS_DEPTH for rank in i.ranks.values())]
        units = [u for u in pool if (query_id, u) not in cant_judge]
        if query_id in COMPLETE_QUERIES:
            # exhaustive: every on-topic document of the corpus, returned or not
            topic = next(topic for q, _, topic in QUERIES if q == query_id)
            units += [d for d in docs if topic_of(d) == topic and d not in pool]
        for unit_id in units:
            gain = simulated_gain(query_id, docs[unit_id]) if unit_id in docs else 0
            _label(db, query_id, unit_id, gain, "alice")
            count += 1
            if query_id in DOUBLE_QUERIES:
                bob = gain
                if _bob_disagrees(query_id, unit_id):
                    bob = gain + 1 if gain < MAX_GAIN else gain - 1
                _label(db, query_id, unit_id, bob, "bob")
                count += 1
    for (query_id, unit_id), note in cant_judge.items():
        record_cant_judge(db, study_id=DEMO_STUDY_ID, query_id=query_id, unit_id=unit_id,
                          annotator="alice", note=note)
    return count
