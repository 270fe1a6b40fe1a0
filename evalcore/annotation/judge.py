"""An LLM judge over a study's unknown pooled units, stored as automatic judgments.

``evalcore judge`` (contract section 13: automatic judgments help, never count as
evidence). :func:`plan_judging` lists what would be sent, before any call:

* the **unknown pooled units**: units of a run's top ``k`` of a query still in the study
  whose working reference has no gain that counts (unlabeled, or in conflict);
* minus the units this source has already judged (so a run again resumes where an
  interrupted one stopped, and makes no call for a unit judged before);
* minus the units whose text may not leave the store for ``actor``: a document the actor
  may not read, one missing from the corpus, or one outside a pinned run's protocol (a
  permission violation: no one is shown its text); counted as withheld, never sent;
* in query order, each query's units by their best rank over the runs, cut at ``limit``.

:func:`run_judging` sends each unit (query text, information need when the study has
one, title and text cut at :data:`~evalcore.annotation.judge_prompt.DOCUMENT_CHARS`) to
an OpenAI-compatible chat endpoint (:mod:`evalcore.io.chat_completions`: rate-limited,
retried, timed out; up to ``workers`` calls at once), reads the grade strictly
(:mod:`evalcore.annotation.judge_prompt`) and stores the answers as automatic labels of the source every ``batch`` answers
(:func:`evalcore.store.automatic_labels.write_automatic_import`: one short transaction
each; never a transaction around a call, so annotators are never blocked). An interrupt
or a refused endpoint stores what was answered and stops; a write refused because the
actor lost the lead role stops the run too. A reply without a grade, a
failed call and a withheld unit are counted by reason, never guessed.

The run is lead-only (permission ``IMPORT``, checked once before anything is read and
again by every write).
"""

from __future__ import annotations

import re
import time
import urllib.parse
from collections import Counter, deque
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field

import sqlite_utils

from evalcore.access.decisions import PermissionDenied
from evalcore.access.roles import Permission
from evalcore.annotation.judge_prompt import (
    Grades,
    JudgeInput,
    UnparsableGrade,
    messages,
    parse_grade,
)
from evalcore.annotation.pool import query_pool
from evalcore.contract.query_order import natural_key
from evalcore.io.chat_completions import CallFailed, ChatClient, EndpointRefused
from evalcore.io.progress import reporter
from evalcore.store.automatic_labels import (
    automatic_labels,
    judgeable_documents,
    write_automatic_import,
)
from evalcore.store.imports.automatic_labels import check_source_name
from evalcore.store.information_needs import information_needs
from evalcore.store.pools import study_pools
from evalcore.store.query_reads import query_texts
from evalcore.store.removed_queries import removed_query_ids
from evalcore.store.resolution import resolved_gains
from evalcore.store.runs import list_runs
from evalcore.store.scoping import readable_document, run_permitted_ids
from evalcore.store.studies import get_study
from evalcore.store.study_handle import open_study
from evalcore.store.transaction import write_transaction

#: Answers stored per short write transaction.
BATCH = 20


def default_source(model: str) -> str:
    """``judge:<model>``, with characters a source name may not hold replaced by ``-``."""
    return "judge:" + re.sub(r"[^A-Za-z0-9._:@/-]", "-", model)[:94]


def endpoint_for_record(endpoint: str) -> str:
    """The endpoint without user info, query or fragment (what the audit log records)."""
    parts = urllib.parse.urlsplit(endpoint)
    host = parts.hostname or ""
    if parts.port is not None:
        host += f":{parts.port}"
    return urllib.parse.urlunsplit((parts.scheme, host, parts.path, "", ""))


@dataclass(frozen=True)
class JudgePlan:
    """What a run would send: the units, in order, and what was left out and why."""

    study_id: str
    source: str
    units: list[tuple[str, str]]
    #: Unknown pooled units of the study (before this source's and the limit's cut).
    n_unknown: int
    #: Of those, the units this source judged already (skipped).
    n_judged: int
    #: Units not sent: reason -> count.
    withheld: dict[str, int] = field(default_factory=dict)
    #: Units left for a later run by the limit.
    n_beyond_limit: int = 0


@dataclass
class JudgeSummary:
    """What a run did."""

    calls: int = 0
    requests: int = 0
    stored: int = 0
    failures: Counter[str] = field(default_factory=Counter)
    seconds: float = 0.0
    #: Why the run stopped before its end (an interrupt, a refused endpoint), or "".
    stopped: str = ""


def plan_judging(db: sqlite_utils.Database, *, study_id: str, source: str, actor: str,
                 limit: int | None = None) -> JudgePlan:
    """The units a run would send (see the module docstring); ``PermissionDenied`` when
    ``actor`` may not import into the study."""
    check_source_name(source)
    if limit is not None and limit < 0:
        raise ValueError(f"--limit must be 0 or more, not {limit}")
    study = open_study(db, study_id, actor, Permission.IMPORT)
    corpus_id = get_study(db, study_id).corpus_id
    removed = removed_query_ids(study)
    pools = study_pools(study)
    known = resolved_gains(study)  # units in conflict omitted: unknown
    judged = automatic_labels(study, sources=[source]).get(source, {})
    pinned = {run.name: ids for run in list_runs(study)
              if (ids := run_permitted_ids(study, run.name)) is not None}
    units: list[tuple[str, str]] = []
    withheld: Counter[str] = Counter()
    n_unknown = n_judged = beyond = 0
    for query_id in sorted((q for q in pools if q not in removed), key=natural_key):
        unknown = pools[query_id].difference(known.get(query_id, {}))
        if not unknown:
            continue
        n_unknown += len(unknown)
        candidates = []
        for item in query_pool(study, query_id):
            if item.unit_id not in unknown:
                continue
            if (query_id, item.unit_id) in judged:
                n_judged += 1
            elif any(item.unit_id not in pinned[run] for run in item.ranks if run in pinned):
                withheld["outside a pinned protocol"] += 1
            else:
                candidates.append(item.unit_id)
        taken = 0  # candidates looked at: a withheld one leaves its place to the next
        while taken < len(candidates):
            room = len(candidates) - taken if limit is None else limit - len(units)
            if room <= 0:
                break
            chunk = candidates[taken : taken + room]
            taken += len(chunk)
            refused = judgeable_documents(study, corpus_id, chunk)
            for unit in chunk:
                if unit in refused:
                    withheld[refused[unit]] += 1
                else:
                    units.append((query_id, unit))
        beyond += len(candidates) - taken
    return JudgePlan(study_id=study_id, source=source, units=units, n_unknown=n_unknown,
                     n_judged=n_judged, withheld=dict(withheld), n_beyond_limit=beyond)


def run_judging(db: sqlite_utils.Database, plan: JudgePlan, client: ChatClient, *,
                actor: str, grades: Grades = "0-3", batch: int = BATCH, workers: int = 1
                ) -> JudgeSummary:
    """Send the plan's units, store the grades as automatic labels of the plan's source
    (see the module docstring) and return what happened. ``workers`` calls wait for their
    answers at once (threads that only make the HTTP calls; the store is read and written
    by the caller's thread, answers taken in the plan's order); the client's bucket still
    holds the rate."""
    started = time.monotonic()
    summary = JudgeSummary()
    corpus_id = get_study(db, plan.study_id).corpus_id
    queries = {q for q, _ in plan.units}
    study = open_study(db, plan.study_id, actor)
    texts = query_texts(study, queries)
    needs = information_needs(study, queries)
    detail = {"judge": "evalcore judge", "model": client.model,
              "endpoint": endpoint_for_record(client.endpoint), "grades": grades}
    pending: list[tuple[str, str, int]] = []
    requests_before = client.requests

    def flush() -> None:
        """Store the pending answers; a refusal (the actor's role withdrawn meanwhile)
        stops the run, its pending answers counted as not stored."""
        if not pending:
            return
        try:
            with write_transaction(db):  # one published import: its staging never shows
                write_automatic_import(db, study_id=plan.study_id, source=plan.source,
                                       file="evalcore judge", format=f"judge {grades}",
                                       labels=list(pending), actor=actor, detail=detail)
            summary.stored += len(pending)
        except PermissionDenied as refused:
            summary.failures["answer not stored (refused)"] += len(pending)
            summary.stopped = f"refused: {refused}"
        finally:
            pending.clear()

    progress = reporter()
    progress.stage(f"judging as {plan.source}", total=len(plan.units), unit="calls")
    in_flight: deque[tuple[str, str, Future[str]]] = deque()

    def settle(query_id: str, unit: str, call: Future[str]) -> None:
        """Count one call's outcome and keep its grade."""
        try:
            reply = call.result()
        except CallFailed as failed:
            summary.calls += 1
            summary.failures[failed.reason] += 1
            if isinstance(failed, EndpointRefused):
                summary.stopped = summary.stopped or str(failed)
        else:
            summary.calls += 1
            try:
                pending.append((query_id, unit, parse_grade(reply, grades)))
            except UnparsableGrade as unparsable:
                summary.failures[f"reply without a grade ({unparsable.reason})"] += 1
        progress.advance()
        if len(pending) >= batch:
            flush()

    pool = ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="judge")
    try:
        for query_id, unit in plan.units:
            if summary.stopped:
                break
            document = readable_document(db, actor, corpus_id, unit).document
            if document is None:  # removed or made unreadable since the plan
                summary.failures["text withheld"] += 1
                progress.advance()
                continue
            need = needs.get(query_id)
            item = JudgeInput(query=texts.get(query_id, ""),
                              description=need.description if need else "",
                              narrative=need.narrative if need else "",
                              title=document.title, text=document.text)
            in_flight.append((query_id, unit, pool.submit(client.complete,
                                                          messages(item, grades))))
            while len(in_flight) >= max(1, workers) and not summary.stopped:
                settle(*in_flight.popleft())
        while in_flight:  # the calls already made are answered: keep their grades
            settle(*in_flight.popleft())
    except KeyboardInterrupt:
        summary.stopped = "interrupted"
        client.cancelled.set()  # running calls make no further attempt
        for _, _, call in in_flight:
            call.cancel()  # calls not started are not made; running ones finish unread
    finally:
        pool.shutdown(wait=summary.stopped != "interrupted", cancel_futures=True)
        flush()
        progress.done()
        summary.requests = client.requests - requests_before
        summary.seconds = time.monotonic() - started
    return summary
