"""Annotate: keyboard-first graded labeling of a query's pool.

Keys: 0-4 grade, S skip, J can't judge, U undo, N next, P previous. Every
grade click writes its label event (in the button's callback, before the page
re-renders) and advances to the next item the annotator has not labeled.
The selector and work area are an ``st.fragment``: a label re-renders only them.

The address names the open query (``?query=q05``), so a reload or a link
(the dashboard's "Label ..." links, a bookmark, a new tab) opens it;
``&unit=ID`` also puts that pooled item on screen.
"""

import sqlite3

import streamlit as st

from app.components.chips import render_query_result
from app.components.information_need import show_information_need
from app.components.page import flash, show_flash, study_page
from app.components.queue import GRADE_MEANINGS, WalkState, current_item, next_unlabeled, step
from app.components.safe_text import escape_markdown, highlight_terms, truncate
from app.components.session import annotator as current_annotator
from app.components.session import get_db
from app.components.state import cached_pool, cached_study_progress, note_own_write
from evalcore.access.roles import Permission
from evalcore.annotation.pool import blind_order
from evalcore.annotation.progress import (
    PoolNotFullyLabeledError,
    QueryProgress,
    StudyProgress,
    mark_pool_complete,
    query_progress,
)
from evalcore.live.query_results import query_results_by_run
from evalcore.retrieval.search import search_corpus
from evalcore.store.authorize import allowed
from evalcore.store.cant_judge import cant_judge_units, record_cant_judge
from evalcore.store.completeness import completeness_history, reopen
from evalcore.store.corpus import get_document
from evalcore.store.labels import record_label, undo_last_label
from evalcore.store.marks import store_marks
from evalcore.store.resolution import resolve_query
from evalcore.store.scoping import displayable_text
from evalcore.store.studies import StudyIn, query_texts
from evalcore.store.studies import query_text as query_text_of

QUERY_KEY = "rl_query"
NOTE_KEY = "rl_note"
UNBLIND_KEY = "rl_unblind"
SEARCH_KEY = "rl_search"
_FLASH_KEY = "_rl_flash"
#: What a write may raise: bad input, a refused permission, or a busy/locked store.
_WRITE_ERRORS = (ValueError, PermissionError, sqlite3.Error)
_PENDING_QUERY_KEY = "_rl_pending_query"
_QUERY_KEEP = "_rl_query_keep"
_UNBLIND_KEEP = "_rl_unblind_keep"
_MAX_QUEUE = 1000
QUERY_PARAM = "query"
UNIT_PARAM = "unit"
#: The query this session last wrote into the address: a different one there is a new request.
_ADDRESS_QUERY_KEY = "_rl_address_query"


def _walk(study_id: str, annotator: str, query_id: str) -> WalkState:
    """This session's walk through the query (can't-judge marks of earlier sessions included)."""
    walks: dict = st.session_state.setdefault("_rl_walks", {})
    key = (study_id, annotator, query_id)
    if key not in walks:
        walks[key] = WalkState(
            cant_judge=cant_judge_units(get_db(), study_id, query_id, annotator))
    return walks[key]


def _mine(study_id: str, query_id: str, annotator: str) -> dict[str, int]:
    """unit -> this annotator's current gain on the query."""
    db = get_db()
    return {
        unit: label.annotators[annotator]
        for unit, label in resolve_query(db, study_id, query_id).items()
        if annotator in label.annotators
    }


# --- callbacks: they run before the re-render, so the write happens first ----------


def _on_grade(study_id: str, query_id: str, unit_id: str, annotator: str, gain: int,
              order: list[str]) -> None:
    db = get_db()
    before = store_marks(db, study_id)
    note = str(st.session_state.get(NOTE_KEY, "")).strip()
    try:
        record_label(db, study_id=study_id, query_id=query_id, unit_id=unit_id, gain=gain,
                     annotator=annotator, note=note)
    except _WRITE_ERRORS as error:
        flash(_FLASH_KEY, "error", f"Label not saved (press the key again): {error}")
        return
    note_own_write(db, study_id, query_id, annotator, before)
    st.session_state[NOTE_KEY] = ""
    walk = _walk(study_id, annotator, query_id)
    walk.cursor = next_unlabeled(order, _mine(study_id, query_id, annotator), walk.passed,
                                 after=unit_id)
    flash(_FLASH_KEY, "toast", f"Saved: {unit_id} = {gain} ({GRADE_MEANINGS[gain]})")


def _on_pass(study_id: str, query_id: str, unit_id: str, annotator: str, order: list[str],
             cant_judge: bool) -> None:
    walk = _walk(study_id, annotator, query_id)
    if cant_judge:
        note = str(st.session_state.get(NOTE_KEY, "")).strip()
        try:
            record_cant_judge(get_db(), study_id=study_id, query_id=query_id, unit_id=unit_id,
                              annotator=annotator, note=note)
        except _WRITE_ERRORS as error:
            flash(_FLASH_KEY, "error", f"Not recorded (press the key again): {error}")
            return
        st.session_state[NOTE_KEY] = ""
        if unit_id not in walk.cant_judge:
            walk.cant_judge.append(unit_id)
        flash(_FLASH_KEY, "toast", f"Can't judge {unit_id}: left unlabeled")
    elif unit_id not in walk.skipped:
        walk.skipped.append(unit_id)
    walk.cursor = next_unlabeled(order, _mine(study_id, query_id, annotator), walk.passed,
                                 after=unit_id)


def _on_undo(study_id: str, query_id: str, annotator: str) -> None:
    db = get_db()
    before = store_marks(db, study_id)
    try:
        event = undo_last_label(db, study_id=study_id, query_id=query_id, annotator=annotator)
    except _WRITE_ERRORS as error:
        flash(_FLASH_KEY, "error", f"Not undone: {error}")
        return
    if event is None:
        flash(_FLASH_KEY, "info", "Nothing to undo on this query.")
        return
    note_own_write(db, study_id, query_id, annotator, before)
    _walk(study_id, annotator, query_id).cursor = event.unit_id
    flash(_FLASH_KEY, "toast", f"Undone: your last label on {event.unit_id}")


def _on_browse(study_id: str, query_id: str, annotator: str, order: list[str],
               current: str | None, delta: int) -> None:
    _walk(study_id, annotator, query_id).cursor = step(order, current, delta)


def _on_mark_complete(study_id: str, query_id: str, annotator: str) -> None:
    db = get_db()
    before = store_marks(db, study_id)
    try:
        mark_pool_complete(db, study_id=study_id, query_id=query_id, actor=annotator,
                           reason="every pooled item labeled")
    except (PoolNotFullyLabeledError, ValueError, PermissionError) as error:
        flash(_FLASH_KEY, "error", str(error))
        return
    note_own_write(db, study_id, query_id, annotator, before)
    flash(_FLASH_KEY, "success", f"Query {query_id}: relevant set marked complete.")


def _on_reopen(study_id: str, query_id: str, annotator: str, reason_key: str) -> None:
    db = get_db()
    before = store_marks(db, study_id)
    reason = str(st.session_state.get(reason_key, "")).strip()
    try:
        reopen(db, study_id=study_id, query_id=query_id, actor=annotator, reason=reason)
    except (ValueError, PermissionError) as error:
        flash(_FLASH_KEY, "error", str(error))
        return
    note_own_write(db, study_id, query_id, annotator, before)
    st.session_state[reason_key] = ""
    flash(_FLASH_KEY, "info", f"Query {query_id} reopened.")


def _on_search_grade(study_id: str, query_id: str, unit_id: str, annotator: str,
                     gain: int) -> None:
    db = get_db()
    before = store_marks(db, study_id)
    try:
        record_label(db, study_id=study_id, query_id=query_id, unit_id=unit_id, gain=gain,
                     annotator=annotator, note="found by corpus search")
    except _WRITE_ERRORS as error:
        flash(_FLASH_KEY, "error", f"Label not saved (press the key again): {error}")
        return
    note_own_write(db, study_id, query_id, annotator, before)
    flash(_FLASH_KEY, "toast", f"Saved: {unit_id} = {gain} ({GRADE_MEANINGS[gain]})")


# --- rendering --------------------------------------------------------------------


def _queue(study: StudyIn, annotator: str) -> str | None:
    db = get_db()
    progress = cached_study_progress(db, study.study_id, annotator)
    ids = [q for q, p in progress.queries.items() if p.pooled or p.labeled]
    if not ids:
        st.info("No query has pooled results yet: create or import a run on the Data page.")
        return None
    # The widget's own state is dropped when another page is shown; the kept copy is not.
    kept = st.session_state.get(QUERY_KEY, st.session_state.get(_QUERY_KEEP))
    if len(ids) > _MAX_QUEUE:
        unfinished = [q for q in ids if progress.queries[q].mine < progress.queries[q].pooled]
        ids = unfinished[:_MAX_QUEUE] or ids[:_MAX_QUEUE]
        if kept in progress.queries and kept not in ids:
            ids.insert(0, kept)
    texts = query_texts(db, study.study_id, ids)
    pending = st.session_state.pop(_PENDING_QUERY_KEY, None) or _address_query(progress, ids)
    choice = pending if pending in ids else kept
    st.session_state[QUERY_KEY] = choice if choice in ids else ids[0]
    if UNBLIND_KEY not in st.session_state:
        st.session_state[UNBLIND_KEY] = bool(st.session_state.get(_UNBLIND_KEEP, False))

    def label(qid: str) -> str:
        p = progress.queries[qid]
        done = " ✓ complete" if p.complete else ""
        return f"{qid} · {truncate(texts.get(qid, ''), 60)} · you {p.mine}/{p.pooled}{done}"

    left, right = st.columns([3, 1])
    st.session_state[_QUERY_KEEP] = left.selectbox("Query", ids, format_func=label,
                                                   key=QUERY_KEY)
    st.session_state[_UNBLIND_KEEP] = right.toggle(
        "Show ranks and runs", key=UNBLIND_KEY,
        help="Off (blind): items come in a shuffled order fixed per annotator.")
    chosen = st.session_state[_QUERY_KEEP]
    st.session_state[_ADDRESS_QUERY_KEY] = chosen
    if st.query_params.get(QUERY_PARAM) != chosen:
        st.query_params[QUERY_PARAM] = chosen
    return chosen


def _address_query(progress: StudyProgress, ids: list[str]) -> str | None:
    """The query the address asks for, when it is a new request (not this session's own)."""
    wanted = st.query_params.get(QUERY_PARAM)
    if not wanted or wanted == st.session_state.get(_ADDRESS_QUERY_KEY):
        return None
    if wanted not in ids:
        why = ("has no pooled result to label" if wanted in progress.queries
               else "is not a query of this study")
        st.warning(escape_markdown(f"The address asks for query {wanted!r}, which {why}."))
        return None
    return wanted


def _open_address_unit(study_id: str, query_id: str, annotator: str) -> None:
    """Put the pooled item named by ``?unit=`` on screen (once: the parameter is consumed)."""
    unit = st.query_params.get(UNIT_PARAM)
    if not unit:
        return
    del st.query_params[UNIT_PARAM]
    if unit in {item.unit_id for item in cached_pool(get_db(), study_id, query_id)}:
        _walk(study_id, annotator, query_id).cursor = unit
    else:
        st.warning(escape_markdown(f"The address asks for item {unit!r}, which is not in the "
                                   f"pool of query {query_id}."))


@st.fragment
def _annotate(study: StudyIn, annotator: str) -> None:
    """The query selector and the work area: a label re-renders only this fragment.

    The selector is inside, so its per-query counts ("you 3/10") follow each label.
    """
    chosen = _queue(study, annotator)
    if chosen is not None:
        _open_address_unit(study.study_id, chosen, annotator)
        _workspace(study, chosen, annotator)


def _workspace(study: StudyIn, query_id: str, annotator: str) -> None:
    db = get_db()
    sid = study.study_id
    query_text = query_text_of(db, sid, query_id)
    pool = cached_pool(db, sid, query_id)
    order = [item.unit_id for item in blind_order(pool, annotator=annotator, query_id=query_id)]
    ranks = {item.unit_id: item.ranks for item in pool}
    mine = _mine(sid, query_id, annotator)
    walk = _walk(sid, annotator, query_id)
    current = current_item(order, mine, walk)
    walk.cursor = current

    show_flash(_FLASH_KEY)
    st.markdown("#### " + escape_markdown(query_text or query_id))
    show_information_need(db, sid, query_id, expanded=True)
    qp = query_progress(db, sid, query_id, annotator)
    study_progress = cached_study_progress(db, sid, annotator)
    a, b = st.columns(2)
    a.progress(qp.mine / qp.pooled if qp.pooled else 1.0,
               text=f"This query: you labeled {qp.mine} of {qp.pooled} pooled items")
    b.progress(study_progress.mine / study_progress.pooled if study_progress.pooled else 1.0,
               text=f"Study: you labeled {study_progress.mine:,} of "
                    f"{study_progress.pooled:,} pooled items")

    with st.container(border=True):
        if current is None:
            st.success("You have labeled every pooled item of this query.")
            _next_query_button(sid, query_id, annotator)
        else:
            _item(study, query_id, query_text, current, order, ranks, mine)
        _buttons(sid, query_id, annotator, current, order)
        st.text_input("Note (saved with your next label)", key=NOTE_KEY, max_chars=2000)

    st.markdown("##### Metrics for this query")
    results = query_results_by_run(db, sid, query_id)
    if not results:
        st.caption("No run yet.")
    for run_name, result in results.items():
        st.markdown("**" + escape_markdown(run_name) + "**")
        render_query_result(result)

    _completeness(sid, query_id, annotator, qp)
    _search(study, query_id, query_text, annotator, set(order))


def _next_query_button(sid: str, query_id: str, annotator: str) -> None:
    """Go to the next query (after this one in the queue) with pooled items left for you."""
    progress = cached_study_progress(get_db(), sid, annotator)
    ids = list(progress.queries)
    start = ids.index(query_id) if query_id in ids else -1
    rotated = ids[start + 1 :] + ids[: start + 1]
    following = next((q for q in rotated if progress.queries[q].mine < progress.queries[q].pooled),
                     None)
    if following is None:
        st.caption("Every query's pool is labeled by you.")
        return
    if st.button(f"Next query: {following}", key="next_query", shortcut="Enter", type="primary"):
        st.session_state[_PENDING_QUERY_KEY] = following
        st.rerun()


def _item(study: StudyIn, query_id: str, query_text: str, unit_id: str, order: list[str],
          ranks: dict[str, dict[str, int]], mine: dict[str, int]) -> None:
    db = get_db()
    doc = get_document(db, study.corpus_id, unit_id)
    position = order.index(unit_id) + 1
    facts = [f"item {position} of {len(order)}", unit_id]
    if st.session_state.get(UNBLIND_KEY):
        facts.append(", ".join(f"rank {r} in {run}" for run, r in sorted(ranks[unit_id].items())))
    if unit_id in mine:
        facts.append(f"your label: {mine[unit_id]} ({GRADE_MEANINGS[mine[unit_id]]})")
    st.caption(escape_markdown(" · ".join(facts)))
    if doc is None:
        st.warning(escape_markdown(f"{unit_id} is not in corpus {study.corpus_id}: "
                                   "judge it by its id or skip it."))
        return
    shown = displayable_text(db, current_annotator(), study_id=study.study_id, unit_id=unit_id,
                             runs=ranks.get(unit_id, {}))
    if not shown.shown:  # another organisation's, or outside a run's protocol
        st.warning(escape_markdown(f"{unit_id}: {shown.reason}"))
        return
    st.markdown("### " + highlight_terms(shown.title or doc.doc_id, query_text))
    with st.container(height=260):
        st.markdown(highlight_terms(shown.text, query_text))
    st.caption(escape_markdown(f"organisation {doc.owner_org or '—'} · created {doc.created_at}"))


def _buttons(sid: str, query_id: str, annotator: str, current: str | None,
             order: list[str]) -> None:
    grade_cols = st.columns(5)
    for gain, col in enumerate(grade_cols):
        col.button(
            f"{gain} · {GRADE_MEANINGS[gain]}",
            key=f"grade_{gain}",
            shortcut=str(gain),
            disabled=current is None,
            width="stretch",
            on_click=_on_grade,
            args=(sid, query_id, current, annotator, gain, order),
        )
    nav = st.columns(5)
    nav[0].button("Skip", key="skip", shortcut="S", disabled=current is None, width="stretch",
                  on_click=_on_pass, args=(sid, query_id, current, annotator, order, False))
    nav[1].button("Can't judge", key="cant_judge", shortcut="J", disabled=current is None,
                  width="stretch", help="Leaves the item unlabeled (recorded in the audit log).",
                  on_click=_on_pass, args=(sid, query_id, current, annotator, order, True))
    nav[2].button("Undo", key="undo", shortcut="U", width="stretch",
                  help="Cancels your last label on this query.",
                  on_click=_on_undo, args=(sid, query_id, annotator))
    nav[3].button("Previous", key="previous", shortcut="P", width="stretch",
                  on_click=_on_browse, args=(sid, query_id, annotator, order, current, -1))
    nav[4].button("Next", key="next", shortcut="N", width="stretch",
                  on_click=_on_browse, args=(sid, query_id, annotator, order, current, 1))


def _completeness(sid: str, query_id: str, annotator: str, qp: QueryProgress) -> None:
    st.markdown("##### Relevant set")
    st.caption(
        f"{qp.labeled} of {qp.pooled} pooled items labeled"
        + (f", {qp.conflicts} in conflict between annotators" if qp.conflicts else "")
        + (f"; {qp.outside_pool} more labeled units found outside the pool"
           if qp.outside_pool else "")
        + "."
    )
    if qp.complete:
        st.success("Marked complete: recall and nDCG can be computed for this query.")
        reason_key = f"reopen_reason_{query_id}"
        st.text_input("Reason to reopen", key=reason_key,
                      placeholder="required: why the relevant set may be incomplete")
        may_reopen = allowed(get_db(), study_id=sid, actor=annotator,
                             permission=Permission.REOPEN)
        st.button("Reopen", key="reopen", on_click=_on_reopen,
                  args=(sid, query_id, annotator, reason_key),
                  disabled=not may_reopen or not str(st.session_state.get(reason_key, "")).strip(),
                  help=None if may_reopen else "Reopening needs the reviewer role in this study.")
    else:
        if qp.remaining:
            what = f"{qp.remaining} pooled item{'s' if qp.remaining != 1 else ''} remain"
            if qp.conflicts:
                what += f" ({qp.conflicts} in conflict)"
            label = f"Mark relevant set complete ({what})"
        else:
            label = "Mark relevant set complete"
        st.button(label, key="mark_complete", disabled=qp.remaining > 0,
                  on_click=_on_mark_complete, args=(sid, query_id, annotator))
    history = completeness_history(get_db(), sid, query_id)
    if history:
        with st.expander(f"Completeness history ({len(history)})"):
            for event in history:
                st.text(f"{event.created_at}  {event.state:<9} by {event.actor}"
                        + (f": {event.reason}" if event.reason else ""))


def _search(study: StudyIn, query_id: str, query_text: str, annotator: str,
            pooled: set[str]) -> None:
    with st.expander("Search the corpus for relevant documents no run returned"):
        text = st.text_input("Search", key=SEARCH_KEY, placeholder=query_text)
        if not text.strip():
            return
        db = get_db()
        # scoped in SQL before the limit: other organisations' documents never crowd these out
        hits = search_corpus(db, study.corpus_id, text, limit=10, viewer=current_annotator() or "")
        if not hits:
            st.caption("No document matches.")
        for hit in hits:
            unit_id = hit.doc_id
            tag = " (in the pool)" if unit_id in pooled else ""
            st.markdown(highlight_terms(hit.title or unit_id, text) + escape_markdown(tag))
            cols = st.columns(5)
            for gain, col in enumerate(cols):
                col.button(str(gain), key=f"search_{unit_id}_{gain}",
                           help=GRADE_MEANINGS[gain], width="stretch",
                           on_click=_on_search_grade,
                           args=(study.study_id, query_id, unit_id, annotator, gain))


db, study = study_page("Annotate")
who = current_annotator()
if not who:
    st.info("Enter your name as annotator in the sidebar to start labeling.")
    st.stop()
_annotate(study, who)
