"""Annotate: keyboard-first graded labeling of a query's pool.

Keys: 0-4 grade, S skip, J can't judge, U undo, N next, P previous. A grade writes its
label in the button's callback, before the re-render, and moves to the next item the
annotator has not labeled; the selector and work area are an ``st.fragment``. The address
names the open query (``?query=q05``, ``&unit=ID`` for an item). Three queues use the same
buttons, keys and item tokens: the blocking order (query by query), "to decide A vs B"
(``?queue=decide&run_a=A&run_b=B&measure=P%4010``, beside a verdict panel) and a stored
sample (``?queue=sample&sample=s1``: no choosing, a skip or can't judge is the sample's
non-response).

**A label lands on the item that was on screen.** Each showing of an item has an
:class:`~evalcore.annotation.item_token.ItemToken` and its buttons are keyed by its showing
number: a press that reaches the server after the screen moved on is refused visibly; a
label on an item someone labeled since it was shown is refused by the store, and the page
shows the newer label and asks. The open query changes only by the annotator's own action.

Callbacks only write and move the session's cursor; each run of the work area reads the
open query's labels once (:func:`~evalcore.annotation.progress.query_labels`), and the
queue position, the progress, the item's facts, the search hits and the metrics all use
that read.
"""

import time
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import streamlit as st

from app.components.address import new_request, write_address
from app.components.chips import render_query_result
from app.components.decide_panel import (
    BLOCKING,
    DECIDE,
    DECIDE_PARAMS,
    QUEUES,
    SAMPLE,
    SAMPLE_PARAM,
    show_verdict_line,
    show_verdict_panel,
)
from app.components.information_need import show_information_need
from app.components.keyboard import item_keys, new_presses
from app.components.links import QUERY_PARAM, UNIT_PARAM
from app.components.page import flash, say, show_flash, study_page
from app.components.query_set_choice import decide_query_set
from app.components.queue import (
    GRADE_MEANINGS,
    WalkState,
    current_item,
    picked_query,
    query_option,
    step,
)
from app.components.safe_text import escape_markdown, highlight_terms, snippet, truncate
from app.components.session import annotator as current_annotator
from app.components.session import annotator_prompt, get_db, reader
from app.components.shared_results import shared_result
from app.components.state import cached_pool, study_progress_if_ready
from evalcore.access.roles import Permission
from evalcore.annotation.item_token import (
    ItemToken,
    LabelOutcome,
    OffScreenError,
    label_as_shown,
    require_on_screen,
    show_item,
)
from evalcore.annotation.pool import blind_order
from evalcore.annotation.progress import (
    QueryLabels,
    QueryProgress,
    StudyProgress,
    mark_pool_complete,
    query_labels,
)
from evalcore.contract.query_order import natural_key
from evalcore.estimation.stored import sample_queue
from evalcore.live.dashboard import query_results_by_run
from evalcore.live.decide_state import (
    DECIDE_MEASURES,
    DecideTarget,
    TargetError,
    decide_carried,
    decide_depth_note,
    decide_measures,
    decide_state,
    decide_target,
    next_queue_item,
    study_run_names,
)
from evalcore.retrieval.search import search_corpus
from evalcore.store.authorize import allowed
from evalcore.store.cant_judge import cant_judge_units, record_cant_judge
from evalcore.store.completeness import claim_withdrawal, reopen
from evalcore.store.corpus import get_document
from evalcore.store.dialect import database_errors
from evalcore.store.drafts import MAX_NOTE_CHARS, drafts, save_draft
from evalcore.store.labels import ItemChangedError, LabelEvent, label_history, undo_last_label
from evalcore.store.query_reads import query_text, query_texts
from evalcore.store.samples import list_samples, record_nonresponse
from evalcore.store.scoping import displayable_text
from evalcore.store.studies import StudyIn
from evalcore.store.study_handle import Study, open_study
from evalcore.store.transaction import retry_busy

QUERY_KEY = "rl_query"
#: The note field of one showing is ``rl_note_<showing>``: a note belongs to the item it was typed for.
NOTE_PREFIX = "rl_note_"
UNBLIND_KEY = "rl_unblind"
SEARCH_KEY = "rl_search"
_FLASH_KEY = "_rl_flash"
#: A second message for what a label did beyond saving (a conflict, a reopened query).
_NOTICE_KEY = "_rl_notice"
#: (study, annotator, query) -> this session's walk through the query.
_WALKS_KEY = "_rl_walks"
#: How long a refusal stays on screen: the renders that follow a burst of presses would
#: otherwise replace it before anyone could read it.
_REFUSED_SHOWN_S = 8.0
#: The query this session has open; changed only by the annotator's own action.
_OPEN_QUERY_KEY = "_rl_open_query"
_PENDING_QUERY_KEY = "_rl_pending_query"
_MAX_QUEUE = 1000
#: The page's name in the address bookkeeping (a value there this session did not write is
#: a new request: :func:`app.components.address.new_request`).
PAGE = "annotate"
#: The queue selector ("blocking" or "decide") and the to-decide queue's runs and measure.
MODE_KEY = "rl_queue_mode"
RUN_A_KEY = "rl_decide_run_a"
RUN_B_KEY = "rl_decide_run_b"
MEASURE_KEY = "rl_decide_measure"
#: The lead's measure before a switch to shallower runs carried it to their depth.
_CARRIED_KEY = "_rl_decide_carried"
#: The sample selector, and (study, sample) of the sample queue on screen: its skips and
#: can't-judge are recorded as the sample's non-responses.
SAMPLE_KEY = "rl_sample_name"
_SAMPLE_ACTIVE_KEY = "_rl_sample_active"


@dataclass
class _Desk:
    """What this session's Annotate page keeps between runs, besides its walks and widgets."""

    #: (study, annotator) -> the token of the item on screen (None: no item), and of the
    #: item last on screen (numbers its next showing)
    on_screen: dict[tuple[str, str], ItemToken | None] = field(default_factory=dict)
    last_shown: dict[tuple[str, str], ItemToken] = field(default_factory=dict)
    #: a showing's screen id sent to the browser with it, and back (what a key press names)
    screen_ids: dict[ItemToken, int] = field(default_factory=dict)
    tokens: dict[int, ItemToken] = field(default_factory=dict)
    #: label event ids this session wrote (a refusal caused only by them is a double press)
    own_events: set[int] = field(default_factory=set)
    #: refused key presses ("not saved: ...") and when, shown together for a few seconds
    refused: list[tuple[str, float]] = field(default_factory=list)
    #: a refused label waiting for the annotator's decision (the item changed since shown)
    confirm: tuple | None = None
    #: (study, query, unit) passed in the to-decide queue (they come back last), and the
    #: query of its last label (what Undo cancels)
    decide_passed: set[tuple[str, str, str]] = field(default_factory=set)
    decide_last: str | None = None


def _desk() -> _Desk:
    return st.session_state.setdefault("_rl_desk", _Desk())


def _write_errors() -> tuple[type[BaseException], ...]:
    """What a write may raise: bad input, a refused permission, or a busy/locked store."""
    return (ValueError, PermissionError, *database_errors())


def _walk(handle: Study, annotator: str, query_id: str) -> WalkState:
    """This session's walk through the query (read from the store's drafts and can't-judge
    marks when this session has none yet, so earlier sessions' skips count)."""
    walks: dict = st.session_state.setdefault(_WALKS_KEY, {})
    key = (handle.study_id, annotator, query_id)
    if key not in walks:
        skipped = [u for u, d in drafts(handle, query_id, annotator).items() if d.skipped]
        walks[key] = WalkState(skipped=skipped,
                               cant_judge=cant_judge_units(handle, query_id, annotator))
    return walks[key]


def _session_walk(study_id: str, annotator: str, query_id: str) -> WalkState:
    """The walk a callback moves (one this session never drew is read at its first draw)."""
    return st.session_state.get(_WALKS_KEY, {}).get((study_id, annotator, query_id)) or WalkState()


def _screen_id(token: ItemToken) -> int:
    """The id the page gives the browser for this showing (a key press sends it back)."""
    desk = _desk()
    if token not in desk.screen_ids:
        desk.screen_ids[token] = len(desk.screen_ids) + 1
        desk.tokens[desk.screen_ids[token]] = token
    return desk.screen_ids[token]


def _on_screen(token: ItemToken) -> ItemToken | None:
    """The item on screen now for the token's study and annotator."""
    return _desk().on_screen.get((token.study_id, token.annotator))


def _put_on_screen(handle: Study, query_id: str | None, unit_id: str | None,
                   annotator: str) -> ItemToken | None:
    """Make the item's token the one on screen and return it (None: no item on screen).

    Showing numbers keep counting after a screen without an item (a finished query, a
    decided measure): a number is never given to two showings, so a key press held for
    an earlier showing can never pass for the next one.
    """
    who = (handle.study_id, annotator)
    desk, token = _desk(), None
    if query_id is not None and unit_id is not None:
        token = desk.last_shown[who] = show_item(handle, query_id=query_id, unit_id=unit_id,
                                                 annotator=annotator,
                                                 previous=desk.last_shown.get(who))
    desk.on_screen[who] = token
    return token


def _item(token: ItemToken) -> dict[str, str]:
    """The showing's item as the store's writes name it."""
    return token.model_dump(include={"study_id", "query_id", "unit_id", "annotator"})


def note_key(token: ItemToken) -> str:
    return f"{NOTE_PREFIX}{token.showing}"


def _note_of(token: ItemToken) -> str:
    return str(st.session_state.get(note_key(token), "")).strip()


def _write(*actions: Callable[[], object], failure: str) -> bool:
    """Run the writes in turn (each retried, bounded, while the store is busy with a long
    write); on a refusal leave ``failure`` and the error for the next render and say False."""
    try:
        for action in actions:
            retry_busy(action)
    except _write_errors() as error:
        flash(_FLASH_KEY, "error", f"{failure}{error}")
        return False
    return True


# --- callbacks: they run before the re-render, so the write happens first ----------


def _refuse(text: str) -> None:
    """Keep a refused key press to show (several may come at once)."""
    _desk().refused.append((text, time.monotonic()))


def _show_messages() -> None:
    """What the last callbacks left: the label's message, its notice, the refusals of the last
    few seconds (newest last, identical ones counted)."""
    show_flash(_FLASH_KEY)
    show_flash(_NOTICE_KEY)
    desk, now = _desk(), time.monotonic()
    desk.refused = [(text, at) for text, at in desk.refused if now - at < _REFUSED_SHOWN_S]
    texts = [text for text, _at in desk.refused]
    if texts:
        say("warning", "\n".join(text + (f" (×{texts.count(text)})" if texts.count(text) > 1
                                         else "") for text in dict.fromkeys(texts)))


def _on_presses(order: list[str] | None) -> None:
    """Apply each new key press to the item whose caption was on screen when it was pressed,
    or say why not (see :mod:`app.components.keyboard`)."""
    for press in new_presses():
        token = _desk().tokens.get(press.screen)
        if token is None:
            _refuse(f"Key {press.key.upper()} not saved: the item it was pressed on is no "
                    "longer known to this page (look at the item shown now and press again).")
        elif press.key.isdigit():
            shown_now = token == _on_screen(token)
            _write_label(token, int(press.key), order, check_screen=False, advance=shown_now)
        else:
            _pass(token, order, press.key == "j")


def _write_label(token: ItemToken, gain: int, order: list[str] | None, *,
                 check_screen: bool = True, advance: bool = True) -> None:
    """Write ``gain`` for the token's item if it is still what was shown; then move on
    (``order`` None: a queue, whose next item is its head) unless ``advance`` is False (the
    press was for an item the screen had already left)."""
    note = _note_of(token)
    if len(note) > MAX_NOTE_CHARS:
        _refuse(f"Key {gain} not saved: your note on {token.unit_id} has {len(note):,} "
                f"characters; a note holds at most {MAX_NOTE_CHARS:,}. Nothing was saved: "
                "shorten the note, then press again.")
        return
    if _try_label(token, gain, note=note, check_screen=check_screen) is None:
        return
    _desk().confirm = None
    if advance and order is None:
        _desk().decide_last = token.query_id
    elif advance:
        walk = _session_walk(token.study_id, token.annotator, token.query_id)
        if token.unit_id in walk.skipped:
            walk.skipped.remove(token.unit_id)
        walk.cursor, walk.after = None, token.unit_id


def _try_label(token: ItemToken, gain: int, *, note: str, check_screen: bool,
               from_search: bool = False) -> LabelOutcome | None:
    """The checked write and what the page says about it; None when nothing was written."""
    db, on_screen, desk = get_db(), _on_screen(token), _desk()
    checks = {"on_screen": on_screen, "check_screen": check_screen, "note": note}
    try:
        # a store busy with a long write is retried (bounded) before the label is refused
        outcome = retry_busy(lambda: label_as_shown(db, token, gain, **checks))
    except OffScreenError as error:
        _refuse(f"Key {gain} not saved: {error}.")
        return None
    except ItemChangedError as error:
        if from_search:
            flash(_FLASH_KEY, "warning", f"Label not saved: {error}. The hit now shows the "
                                         "newer label; press again to write over it.")
        elif all(event.event_id in desk.own_events for event in error.newer):  # double press
            _refuse(f"Key {gain} not saved: you had just labeled {token.unit_id} and the next "
                    "item was not on screen yet (look at the item shown now and press again).")
        else:  # asked under the item
            desk.confirm = (token, gain, note, error.newer)
        return None
    except _write_errors() as error:
        flash(_FLASH_KEY, "error", f"Key {gain} not saved on {token.unit_id} (press the key "
                                   f"again): {error}")
        return None
    desk.own_events.add(outcome.event.event_id)
    flash(_FLASH_KEY, "toast", f"Saved: {token.unit_id} = {gain} ({GRADE_MEANINGS[gain]})")
    _say_what_it_did(token, gain, outcome)
    return outcome


def _say_what_it_did(token: ItemToken, gain: int, outcome: LabelOutcome) -> None:
    """A conflict or a reopened query is said where the label was given."""
    said = []
    if outcome.in_conflict:
        others = "; ".join(f"{who} said {g}" for who, g in sorted(outcome.conflict_with.items()))
        said.append(f"{others or 'a reviewer decided otherwise'}; you said {gain}: "
                    f"{token.unit_id} is now in conflict and needs a reviewer (it counts as "
                    "unknown until adjudicated).")
    if outcome.reopened:
        said.append(f"Query {token.query_id} was marked complete; your relevant label on "
                    f"{token.unit_id} reopened it: an item judged relevant that the complete "
                    "relevant set did not hold means the set was not complete.")
    if said:
        flash(_NOTICE_KEY, "warning", " ".join(said))


def _on_confirm(token: ItemToken, gain: int, note: str, newest: int,
                order: list[str] | None) -> None:
    """The annotator saw the newer label and still wants theirs: write over it (checked again)."""
    _desk().confirm = None
    confirmed = token.model_copy(update={"seen_event": newest})
    if note:
        st.session_state[note_key(confirmed)] = note
    _write_label(confirmed, gain, order, check_screen=False)


def _pass(token: ItemToken, order: list[str] | None, cant_judge: bool) -> None:
    """Skip or can't judge the token's item (recorded), then move on."""
    item, unit_id = _item(token), token.unit_id
    try:
        require_on_screen(token, _on_screen(token))
    except OffScreenError as error:
        _refuse(f"{'Can´t judge' if cant_judge else 'Skip'} not recorded: {error}.")
        return
    db = get_db()
    active = st.session_state.get(_SAMPLE_ACTIVE_KEY)
    sample = st.session_state.get(MODE_KEY) == SAMPLE and active and active[0] == token.study_id

    kind = "cant_judge" if cant_judge else "skip"
    writes = []
    if sample:  # the sample's non-response
        writes.append(lambda: record_nonresponse(db, name=active[1], kind=kind, **item))
    if cant_judge:
        writes += [lambda: record_cant_judge(db, note=_note_of(token), **item),
                   lambda: save_draft(db, note="", **item)]
    else:
        writes.append(lambda: save_draft(db, skipped=True, **item))
    if not _write(*writes, failure="Not recorded (press the key again): "):
        return
    if order is None:  # the to-decide queue: passed items come back when nothing else is left
        _desk().decide_passed.add((token.study_id, token.query_id, unit_id))
    walk = _session_walk(token.study_id, token.annotator, token.query_id)
    passed = walk.cant_judge if cant_judge else walk.skipped
    if unit_id not in passed:
        passed.append(unit_id)
    if cant_judge:
        flash(_FLASH_KEY, "toast", f"Can't judge {unit_id}: left unlabeled")
    if order is not None:
        walk.cursor, walk.after = None, unit_id


def _on_note(token: ItemToken) -> None:
    """Keep the note typed so far as the item's draft (it survives a reload)."""
    note = str(st.session_state.get(note_key(token), ""))
    if len(note) <= MAX_NOTE_CHARS:  # a longer one is said under the field; the draft stays
        _write(lambda: save_draft(get_db(), note=note, **_item(token)),
               failure="Note draft not kept: ")


def _on_undo(study_id: str, query_id: str, annotator: str) -> None:
    query = {"study_id": study_id, "query_id": query_id, "annotator": annotator}
    undone: list[LabelEvent | None] = []
    if not _write(lambda: undone.append(undo_last_label(get_db(), **query)),
                  failure="Not undone: "):
        return
    event = undone[-1]
    if event is None:
        flash(_FLASH_KEY, "info", "Nothing to undo on this query.")
        return
    _desk().own_events.add(event.event_id)
    _session_walk(study_id, annotator, query_id).cursor = event.unit_id
    flash(_FLASH_KEY, "toast", f"Undone: your last label on {event.unit_id}")


def _on_browse(study_id: str, query_id: str, annotator: str, order: list[str],
               current: str | None, delta: int) -> None:
    _session_walk(study_id, annotator, query_id).cursor = step(order, current, delta)


def _on_mark_complete(study_id: str, query_id: str, annotator: str) -> None:
    query = {"study_id": study_id, "query_id": query_id, "actor": annotator}
    reason = "every pooled item labeled"
    if _write(lambda: mark_pool_complete(get_db(), **query, reason=reason), failure=""):
        flash(_FLASH_KEY, "success", f"Query {query_id}: relevant set marked complete.")


def _on_reopen(study_id: str, query_id: str, annotator: str, reason_key: str) -> None:
    query = {"study_id": study_id, "query_id": query_id, "actor": annotator}
    reason = str(st.session_state.get(reason_key, "")).strip()
    if _write(lambda: reopen(get_db(), **query, reason=reason), failure=""):
        st.session_state[reason_key] = ""
        flash(_FLASH_KEY, "info", f"Query {query_id} reopened.")


# --- the blocking order: the query selector and the open query's work area ------------


def _queue(handle: Study, annotator: str, texts: dict[str, str]) -> tuple[
        str | None, StudyProgress | None]:
    """The query selector: the open query, and the study's progress it read (None while a
    large study's is counted in the background), which the work area shows."""
    progress = study_progress_if_ready(handle, annotator, len(texts))
    kept = st.session_state.get(_OPEN_QUERY_KEY)
    if progress is None:  # a large study's first visit: its progress is being counted
        known: Collection[str] = texts
        ids = sorted(texts, key=natural_key)[:_MAX_QUEUE]
        st.caption(f"{len(texts):,} queries: their progress is being counted in the background; "
                   "the selector shows it after your next action.")
    else:
        known = progress.queries
        ids = [q for q, p in progress.queries.items() if p.pooled or p.labeled]
        if not ids:
            st.info("No query has pooled results yet: create or import a run on the Data page.")
            return None, progress
        if len(ids) > _MAX_QUEUE:
            unfinished = [q for q in ids if progress.queries[q].mine < progress.queries[q].pooled]
            ids = unfinished[:_MAX_QUEUE] or ids[:_MAX_QUEUE]
    if kept in known and kept not in ids:
        ids.insert(0, kept)
    pending = st.session_state.pop(_PENDING_QUERY_KEY, None) or _address_query(
        known, ids, counted=progress is not None)
    choice = pending if pending in ids else kept
    chosen = choice if choice in ids else ids[0]
    # The selector shows the open query; what it sends back counts only through
    # _on_pick (the annotator's own choice), never as a value of its own.
    st.session_state[_OPEN_QUERY_KEY] = st.session_state[QUERY_KEY] = chosen
    st.selectbox("Query", ids, format_func=lambda qid: query_option(
                     qid, progress.queries.get(qid) if progress else None, texts.get(qid, "")),
                 key=QUERY_KEY, on_change=_on_pick, args=(ids,))
    st.toggle("Show ranks and runs", key=UNBLIND_KEY, persist_state="session",
              help="Off (blind): items come in a shuffled order fixed per annotator.")
    write_address(PAGE, {QUERY_PARAM: chosen})
    return chosen, progress


def _on_pick(ids: list[str]) -> None:
    """The annotator chose a query in the selector (a stale entry of the open one changes nothing)."""
    picked = picked_query(st.session_state.get(QUERY_KEY), ids)
    if picked is not None:
        st.session_state[_OPEN_QUERY_KEY] = picked


def _address_query(known: Collection[str], ids: list[str], *, counted: bool) -> str | None:
    """The query the address asks for, when it is a new request (not this session's own).

    ``known``: the study's queries (``ids``: those the selector offers); ``counted``: whether
    their progress is known (if not, any query of the study opens)."""
    wanted = st.query_params.get(QUERY_PARAM)
    if not wanted or not new_request(PAGE, QUERY_PARAM):
        return None
    if wanted not in ids and wanted in known and not counted:
        ids.insert(0, wanted)
    if wanted not in ids:
        why = ("has no pooled result to label" if wanted in known
               else "is not a query of this study")
        say("warning", f"The address asks for query {wanted!r}, which {why}.")
        return None
    return wanted


def _workspace(handle: Study, query_id: str, query_text: str, annotator: str,
               study_progress: StudyProgress | None) -> None:
    """The open query's work area; ``study_progress``: as the selector read it this run."""
    sid = handle.study_id
    pool = cached_pool(handle, query_id)
    order = [item.unit_id for item in blind_order(pool, annotator=annotator, query_id=query_id)]
    ranks = {item.unit_id: item.ranks for item in pool}
    labels = query_labels(handle, query_id)  # the run's one read of the query's labels
    mine = labels.mine(annotator)
    walk = _walk(handle, annotator, query_id)
    unit = st.query_params.get(UNIT_PARAM)
    if unit:  # the pooled item the address names, put on screen once
        del st.query_params[UNIT_PARAM]
        if unit in ranks:
            walk.cursor = unit
        else:
            say("warning", f"The address asks for item {unit!r}, which is not in the "
                           f"pool of query {query_id}.")
    current = walk.cursor = current_item(order, mine, walk)
    token = _put_on_screen(handle, query_id if current else None, current, annotator)

    st.markdown("#### " + escape_markdown(query_text or query_id))
    show_information_need(handle, query_id, expanded=True)
    qp = labels.progress(set(ranks), annotator)
    with st.container(horizontal=True):  # side by side even on a phone: one line, not two
        conflicts = f" ({qp.conflicts} in conflict between annotators)" if qp.conflicts else ""
        _progress(qp.mine, qp.pooled,
                  f"This query: you labeled {qp.mine} of {qp.pooled} pooled items{conflicts}")
        if study_progress is None:
            st.caption("Study: your progress is being counted…")
        else:
            labeled, pooled = study_progress.mine, study_progress.pooled
            _progress(labeled, pooled, f"Study: you labeled {labeled:,} of {pooled:,} pooled items")
    _show_messages()

    with st.container(border=True):
        if token is None:
            item_keys("", None, partial(_on_presses, order))
            st.success("You have labeled every pooled item of this query.")
            _next_query_button(handle, query_id, study_progress)
            _undo_and_browse(sid, annotator, query_id, None, order)
        else:
            q = _Query(handle, query_id, query_text, annotator, ranks, mine, order)
            _item_area(q, token, f"item {order.index(token.unit_id) + 1} of {len(order)}", current)

    st.markdown("##### Metrics for this query")
    results = query_results_by_run(handle, query_id, labels)
    if not results:
        st.caption("No run yet.")
    for run_name, result in results.items():
        st.markdown("**" + escape_markdown(run_name) + "**")
        render_query_result(result)
    _completeness(handle, labels, annotator, qp)
    _search(handle, query_id, query_text, annotator, set(order), mine)


def _progress(done: int, total: int, text: str) -> None:
    """A progress bar of ``done`` out of ``total`` (full when there is nothing to do)."""
    st.progress(done / total if total else 1.0, text=text)


def _next_query_button(handle: Study, query_id: str, progress: StudyProgress | None) -> None:
    """Go to the next query (after this one in the queue) with pooled items left for you
    (``progress``: the study's, as the selector read it this run)."""
    if progress is None:  # still being counted: the next query in the study's order
        ids = sorted(query_texts(handle), key=natural_key)
        start = ids.index(query_id) if query_id in ids else -1
        following = ids[start + 1] if start + 1 < len(ids) else None
    else:
        ids = list(progress.queries)
        start = ids.index(query_id) if query_id in ids else -1
        rotated = ids[start + 1 :] + ids[: start + 1]
        following = next((q for q in rotated
                          if progress.queries[q].mine < progress.queries[q].pooled), None)
    if following is None:
        st.caption("Every query's pool is labeled by you.")
    elif st.button(f"Next query: {following}", key="next_query", shortcut="Enter",
                   type="primary"):
        st.session_state[_PENDING_QUERY_KEY] = following
        st.rerun()


# --- the item on screen (every queue) -------------------------------------------------


@dataclass(frozen=True)
class _Query:
    """A query as one run of the work area read it: its text, its pool's ranks and the
    annotator's labels; ``order``: the blocking order (None in a queue, whose head is next)."""

    handle: Study
    query_id: str
    text: str
    annotator: str
    ranks: dict[str, dict[str, int]]
    mine: dict[str, int]
    order: list[str] | None = None


def _item_area(q: _Query, token: ItemToken, position: str, current: str | None = None) -> None:
    """The item on screen: a newer label to confirm, its facts (the caption the keys listen
    on) and title, the grade buttons, Undo (in the blocking order Previous and Next too), its
    note field, then its text (under the buttons: a phone shows them without scrolling)."""
    unit_id, corpus_id, mine = token.unit_id, q.handle.settings.corpus_id, q.mine
    _confirm(token, q.order)
    facts = [position, unit_id]
    if q.order is not None and st.session_state.get(UNBLIND_KEY):  # the queues have no toggle
        runs = sorted(q.ranks.get(unit_id, {}).items())
        facts.append(", ".join(f"rank {r} in {run}" for run, r in runs))
    if unit_id in mine:
        facts.append(f"your label: {mine[unit_id]} ({GRADE_MEANINGS[mine[unit_id]]})")
        history = label_history(q.handle, q.query_id, unit_id)
        notes = [e.note for e in history if e.annotator == q.annotator and e.kind == "label"]
        if notes and notes[-1]:  # the note of the annotator's latest label
            facts.append(f"your note: {truncate(notes[-1], 200)}")
    if unit_id in _walk(q.handle, q.annotator, q.query_id).skipped:
        facts.append("skipped earlier")
    item_keys(" · ".join(facts), _screen_id(token), partial(_on_presses, q.order))
    doc = get_document(get_db(), corpus_id, unit_id)
    shown = None
    if doc is None:
        say("warning", f"{unit_id} is not in corpus {corpus_id}: judge it by its id or skip it.")
    else:
        shown = displayable_text(q.handle, unit_id=unit_id, runs=q.ranks.get(unit_id, {}),
                                 document=doc)
        if shown.shown:
            st.markdown("##### " + highlight_terms(shown.title or doc.doc_id, q.text))
        else:  # another organisation's, or outside a run's protocol
            say("warning", f"{unit_id}: {shown.reason}")
    _buttons(token, q.order)
    _undo_and_browse(q.handle.study_id, q.annotator, q.query_id, current, q.order)
    # no max_chars: the browser would cut a longer paste without a word; the page
    # refuses it visibly instead (here, and for the label it would go with)
    key = note_key(token)
    if key not in st.session_state:  # seeded once from the item's stored draft
        draft = drafts(q.handle, q.query_id, q.annotator).get(unit_id)
        st.session_state[key] = draft.note if draft is not None else ""
    label = "Note (saved with your label for this item; Esc leaves the field)"
    st.text_input(label, key=key, live="700ms", on_change=_on_note, args=(token,))
    length = len(_note_of(token))
    if length > MAX_NOTE_CHARS:
        st.error(f"This note has {length:,} characters; a note holds at most "
                 f"{MAX_NOTE_CHARS:,}. Shorten it: a label given with it is not saved.")
    if doc is not None and shown is not None and shown.shown:
        with st.container(height=240):
            st.markdown(highlight_terms(shown.text, q.text))
        say("caption", f"organisation {doc.owner_org or '—'} · created {doc.created_at}")


def _confirm(token: ItemToken, order: list[str] | None) -> None:
    """Show the label that arrived since the item was shown, and ask before writing over it."""
    desk = _desk()
    if desk.confirm is None:
        return
    asked, gain, note, newer = desk.confirm
    if _item(asked) != _item(token):
        desk.confirm = None
        return
    say("warning",
        f"Not saved yet: since {asked.unit_id} was shown to you, "
        + "; ".join(_said(event) for event in newer)
        + f". Your key: {gain} ({GRADE_MEANINGS[gain]}). Write it over the newer label?")
    with st.container(horizontal=True):
        st.button(f"Save {gain} anyway", key="confirm_overwrite", type="primary",
                  on_click=_on_confirm, args=(asked, gain, note, newer[-1].event_id, order))
        st.button("Keep the newer label", key="confirm_keep", on_click=setattr,
                  args=(desk, "confirm", None))


def _said(event: LabelEvent) -> str:
    who = f"{event.annotator} (you, in another tab or session)" if (
        event.annotator == current_annotator()) else event.annotator
    when = event.created_at.replace("T", " ").rstrip("Z")[:19]  # to the second
    if event.gain is None:
        return f"{who} undid a label at {when}"
    verb = "adjudicated" if event.kind == "adjudicate" else "labeled it"
    return f"{who} {verb} {event.gain} ({GRADE_MEANINGS[event.gain]}) at {when} UTC"


def grade_label(gain: int) -> str:
    """A grade button's text: the key and its meaning (no tooltip needed)."""
    return f"{gain} · {GRADE_MEANINGS[gain]}"


def _buttons(token: ItemToken, order: list[str] | None) -> None:
    """Grade, skip and can't-judge buttons of this showing (keyed by it: see the module doc)."""
    showing = token.showing
    with st.container(horizontal=True, gap="small"):
        for gain in GRADE_MEANINGS:
            st.button(grade_label(gain), key=f"grade_{gain}_{showing}", on_click=_write_label,
                      args=(token, gain, order))
    with st.container(horizontal=True, gap="small"):
        st.button("Skip · S", key=f"skip_{showing}", on_click=_pass, args=(token, order, False))
        st.button("Can't judge · J", key=f"cant_judge_{showing}",
                  help="Leaves the item unlabeled (recorded in the audit log).",
                  on_click=_pass, args=(token, order, True))


def _undo_and_browse(sid: str, annotator: str, query_id: str | None = None,
                     current: str | None = None, order: list[str] | None = None) -> None:
    """Undo (on ``query_id``; in a queue, ``order`` None, on its last label's query) and, in
    the blocking order, Previous and Next."""
    if order is None:
        query_id = _desk().decide_last
    with st.container(horizontal=True, gap="small"):
        if query_id is not None:
            st.button("Undo", key="undo", shortcut="U",
                      help=f"Cancels your last label on query {query_id}.",
                      on_click=_on_undo, args=(sid, query_id, annotator))
        if order is None:  # the queues are walked by labels, not browsed
            return
        for label, delta in (("Previous", -1), ("Next", 1)):
            st.button(label, key=label.lower(), shortcut=label[0], on_click=_on_browse,
                      args=(sid, query_id, annotator, order, current, delta))


def _completeness(handle: Study, labels: QueryLabels, annotator: str,
                  qp: QueryProgress) -> None:
    sid, query_id = handle.study_id, labels.query_id
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
        withdrawn = claim_withdrawal(handle, query_id, labels.history)
        if withdrawn is not None:  # why the claim is gone, as plain text
            say("warning", withdrawn.text(), icon=":material/history:")
        label = "Mark relevant set complete"
        if qp.remaining:
            what = f"{qp.remaining} pooled item{'s' if qp.remaining != 1 else ''} remain"
            label += f" ({what}" + (f" ({qp.conflicts} in conflict)" if qp.conflicts else "") + ")"
        st.button(label, key="mark_complete", disabled=qp.remaining > 0,
                  on_click=_on_mark_complete, args=(sid, query_id, annotator))
    history = labels.history
    if history:
        with st.expander(f"Completeness history ({len(history)})"):
            for event in history:
                st.text(f"{event.created_at}  {event.state:<9} by {event.actor}"
                        + (f": {event.reason}" if event.reason else ""))


def _search(handle: Study, query_id: str, query_text: str, annotator: str,
            pooled: set[str], mine: dict[str, int]) -> None:
    with st.expander("Search the corpus for relevant documents no run returned"):
        text = st.text_input("Search", key=SEARCH_KEY, placeholder=query_text)
        if not text.strip():
            return
        # scoped in SQL before the limit: other organisations' documents never crowd these out
        hits = search_corpus(get_db(), handle.settings.corpus_id, text, limit=10,
                             viewer=reader())
        if not hits:
            st.caption("No document matches.")
        for hit in hits:
            unit_id = hit.doc_id
            facts = [unit_id, "in the pool" if unit_id in pooled else "not in the pool",
                     f"your label: {mine[unit_id]} ({GRADE_MEANINGS[mine[unit_id]]})"
                     if unit_id in mine else "not labeled by you"]
            with st.container(border=True):
                st.markdown("**" + highlight_terms(hit.title or unit_id, text) + "**")
                say("caption", " · ".join(facts))
                st.markdown(highlight_terms(snippet(hit.text, text), text))
                token = show_item(handle, query_id=query_id, unit_id=unit_id,
                                  annotator=annotator)
                with st.container(horizontal=True, gap="small"):
                    for gain in GRADE_MEANINGS:
                        st.button(grade_label(gain), key=f"search_{unit_id}_{gain}",
                                  on_click=_try_label, args=(token, gain),
                                  kwargs={"note": "found by corpus search",
                                          "check_screen": False, "from_search": True})


# --- the "to decide A vs B" and sample queues -----------------------------------------


def _queue_mode(handle: Study) -> str:
    """The queue selector; a new ``?queue=`` in the address (not this session's own) sets it."""
    wanted = [str(st.query_params.get(name, "")) for name in DECIDE_PARAMS]
    if any(wanted) and new_request(PAGE, *DECIDE_PARAMS):
        queue = wanted[0] or BLOCKING
        if queue in QUEUES:
            st.session_state[MODE_KEY] = queue
        else:
            say("error",
                f"The address's queue={queue!r} is not a queue of this page; valid values: "
                f"{', '.join(QUEUES)}. Showing the {st.session_state.get(MODE_KEY, BLOCKING)} "
                "queue.")
        if queue == DECIDE:
            _address_target(handle, *wanted[1:])
    st.session_state.setdefault(MODE_KEY, BLOCKING)
    mode = st.radio("Work through", list(QUEUES), format_func=QUEUES.__getitem__, key=MODE_KEY,
                    horizontal=True, persist_state="session",
                    help="The blocking order walks one query's pool; the to-decide queue "
                         "walks the unknown items whose labels can decide run A against run B; "
                         "a sample walks a drawn sample's units in its order, for an estimate.")
    if mode != SAMPLE:
        write_address(PAGE, {SAMPLE_PARAM: None})
    if mode == BLOCKING:
        write_address(PAGE, dict.fromkeys(DECIDE_PARAMS))
    return mode


def _address_target(handle: Study, run_a: str, run_b: str, measure: str) -> None:
    """Put the address's runs and measure in the selectors, or say which one is wrong."""
    runs = study_run_names(handle) + ["", ""]
    run_a, run_b = run_a or runs[0], run_b or runs[1]
    if not measure and run_a in runs[:-2] and run_b in runs[:-2] and run_a != run_b:
        measure = decide_measures(handle, run_a, run_b)[0]  # within the runs' depth
    try:
        target = decide_target(handle, run_a, run_b, measure or DECIDE_MEASURES[0])
    except TargetError as error:
        say("error", f"The address asks for {error}. Choose the runs and the measure below.")
        return
    st.session_state[RUN_A_KEY] = target.run_a
    st.session_state[RUN_B_KEY] = target.run_b
    st.session_state[MEASURE_KEY] = target.measure
    st.session_state.pop(_CARRIED_KEY, None)  # the address's measure, not a carried one


def _decide_target(handle: Study) -> DecideTarget | None:
    """The runs and measure selectors; the target they name (written to the address)."""
    runs = study_run_names(handle)
    if len(runs) < 2:
        st.info(f"The to-decide queue compares two runs; this study has {len(runs)}. "
                "Create or import runs on the Data page.")
        return None
    for key, default in zip((RUN_A_KEY, RUN_B_KEY), runs[:2], strict=True):  # the defaults
        if st.session_state.get(key) not in runs:
            st.session_state[key] = default
    pair = st.session_state[RUN_A_KEY], st.session_state[RUN_B_KEY]
    measures = decide_measures(handle, *pair)
    chosen = st.session_state.get(MEASURE_KEY)
    moved = decide_carried(handle, *pair, chosen) if chosen else None
    origin = st.session_state.get(_CARRIED_KEY)
    if moved is not None:  # the runs changed to shallower ones: the choice follows them
        origin = st.session_state[_CARRIED_KEY] = origin or chosen
        chosen = st.session_state[MEASURE_KEY] = moved[0]
    # the caption says so while the measure shown is the lead's choice carried to these runs
    carry = decide_carried(handle, *pair, origin) if origin else None
    if carry is None or carry[0] != chosen:
        st.session_state.pop(_CARRIED_KEY, None)
        carry = None
    if chosen and chosen not in measures:  # a measure of the catalogue the address asked for
        measures.append(chosen)
    elif not chosen:
        st.session_state[MEASURE_KEY] = measures[0]
    with st.container(horizontal=True):
        st.selectbox("Run A", runs, key=RUN_A_KEY, persist_state="session")
        st.selectbox("Run B", runs, key=RUN_B_KEY, persist_state="session")
        st.selectbox("Measure", measures, key=MEASURE_KEY, persist_state="session")
    note = carry[1] if carry is not None else decide_depth_note(handle, *pair)
    if note is not None:
        say("caption", note)
    try:
        target = decide_target(handle, *(st.session_state[key]
                                         for key in (RUN_A_KEY, RUN_B_KEY, MEASURE_KEY)))
    except TargetError as error:
        say("error", f"{error}.")
        return None
    values = (DECIDE, target.run_a, target.run_b, target.measure)
    write_address(PAGE, {QUERY_PARAM: None, UNIT_PARAM: None,
                         **dict(zip(DECIDE_PARAMS, values, strict=True))})
    return target


def _decide_workspace(handle: Study, target: DecideTarget, annotator: str) -> None:
    """The queue's next item beside the verdict panel; both follow every label. The queue's
    state is built again only when the store changed (a label, a run), shared by every
    session."""
    queries = decide_query_set(handle, target)
    state = shared_result(handle, ("decide", target, queries),
                          lambda: decide_state(handle, target, query_ids=queries))
    passed = {(q, u) for s, q, u in _desk().decide_passed if s == handle.study_id}
    item = next_queue_item(handle, state.items, annotator, passed)
    with st.container():  # one slot, so the messages never shift the columns below
        _show_messages()
    show_verdict_line(state)
    work, panel = st.columns([3, 2])
    with panel:
        show_verdict_panel(state)
        following = state.next_undecided()
        if state.decision.verdict != "undecided" and following is not None:
            st.button(f"Next undecided measure: {following}", key="next_measure",
                      type="primary", shortcut="Enter", on_click=st.session_state.update,
                      args=({MEASURE_KEY: following},))
        elif state.decision.verdict != "undecided":
            st.caption("No other offered measure is undecided.")
    def why() -> None:
        if state.settled:
            say("markdown", f"Nothing left to label for {target.measure}: the evidence has "
                            "decided it. Take the next undecided measure, or choose another "
                            "measure or runs above.")
        elif state.decision.verdict == "undecidable":
            say("markdown",
                f"Nothing to label here for {target.measure} yet: see the panel for why.")
        if state.decision.verdict == "undecided":
            st.info("Every item of the queue is labeled by you or waits for a reviewer "
                    "(in conflict): adjudicate on the Annotator agreement page.")

    with work:
        position = ""
        if item is not None:
            conflict = " · in conflict between annotators" if item.kind == "conflict" else ""
            position = f"queue item {state.items.index(item) + 1} of {len(state.items)}{conflict}"
        _queue_head(handle, annotator, item, position, why)


def _queue_head(handle: Study, annotator: str, item: Any, position: str,
                why: Callable[[], None]) -> None:
    """The head ``item`` of the to-decide or sample queue on screen, under its query (no
    browsing: the queue decides what comes next); ``item`` None: ``why()`` says why not."""
    token = _put_on_screen(handle, item.query_id if item else None,
                           item.unit_id if item else None, annotator)
    with st.container(border=True):
        if token is None:
            item_keys("", None, partial(_on_presses, None))
            why()
            _undo_and_browse(handle.study_id, annotator)
            return
        query_id = token.query_id
        text = query_text(handle, query_id) or ""
        st.markdown("#### " + escape_markdown(f"{query_id}: {text}"))
        show_information_need(handle, query_id, expanded=False)
        ranks = {p.unit_id: p.ranks for p in cached_pool(handle, query_id)}
        mine = query_labels(handle, query_id).mine(annotator)
        _item_area(_Query(handle, query_id, text, annotator, ranks, mine), token, position)


def _sample_choice(handle: Study) -> str | None:
    """The sample selector (``?sample=`` in the address chooses it once)."""
    names = [s.name for s in list_samples(handle)]
    if not names:
        return None
    wanted = str(st.query_params.get(SAMPLE_PARAM, ""))
    if wanted and new_request(PAGE, SAMPLE_PARAM):
        if wanted in names:
            st.session_state[SAMPLE_KEY] = wanted
        else:
            say("error", f"The address's sample={wanted!r} is not a sample of "
                         f"this study; its samples: {', '.join(names)}.")
    if st.session_state.get(SAMPLE_KEY) not in names:
        st.session_state[SAMPLE_KEY] = names[-1]
    name = st.selectbox("Sample", names, key=SAMPLE_KEY, format_func=lambda n: f"Sample {n}",
                        persist_state="session")
    queue, *choices = DECIDE_PARAMS  # the to-decide queue's runs and measure go
    write_address(PAGE, {queue: SAMPLE, **dict.fromkeys(choices), SAMPLE_PARAM: name})
    return name


def _sample_workspace(handle: Study, annotator: str) -> None:
    """A stored sample's units one after another in the sample's order: no choosing; a
    skip or can't judge is recorded as the sample's non-response (:func:`_pass`)."""
    sid = handle.study_id
    name = _sample_choice(handle)
    if name is None:
        st.session_state.pop(_SAMPLE_ACTIVE_KEY, None)
        item_keys("", None, partial(_on_presses, None))
        st.info("No sample drawn yet: a lead draws one on the Compare page (Estimate "
                "instead) or with evalcore sample draw.")
        return
    st.session_state[_SAMPLE_ACTIVE_KEY] = (sid, name)
    queue = sample_queue(handle, name)
    waiting = [u for u in queue if u.state == "open"]
    labeled = sum(1 for u in queue if u.state == "labeled")
    passed = sum(1 for u in queue if u.state == "non-response")
    with st.container():
        _show_messages()
    _progress(labeled + passed, len(queue), f"Sample {name}: {labeled} labeled, {passed} "
              f"non-response, {len(waiting)} to label of {len(queue)} units")
    st.caption("The sample's units come in its order (no choosing). Skip and can't judge "
               "are recorded as non-response: the estimate takes them at their worst case.")
    def why() -> None:
        say("success", f"Every unit of sample {name} is answered: its estimate is on the "
                       "Compare page (Estimate instead).")

    item = waiting[0] if waiting else None
    position = f"sample unit {item.position} of {len(queue)}" if item else ""
    _queue_head(handle, annotator, item, position, why)


@st.fragment
def _annotate(study: StudyIn, annotator: str) -> None:
    """The queue selector and the work area: a label re-renders only this fragment.

    The selector is inside, so its per-query counts ("you 3/10") follow each label. Each
    run of it (the page's or its own) opens one read handle and passes it to every read.
    """
    handle = open_study(get_db(), study.study_id, reader(), settings=study)
    mode = _queue_mode(handle)
    if mode == SAMPLE:
        _sample_workspace(handle, annotator)
        return
    st.session_state.pop(_SAMPLE_ACTIVE_KEY, None)
    if mode == DECIDE:
        target = _decide_target(handle)
        if target is not None:
            _decide_workspace(handle, target, annotator)
        return
    texts = query_texts(handle)
    chosen, progress = _queue(handle, annotator, texts)
    if chosen is not None:
        _workspace(handle, chosen, texts.get(chosen, ""), annotator, progress)


study, handle = study_page("Annotate")
who = current_annotator()
if not who:
    annotator_prompt("Enter your name as annotator to start labeling.")
    st.stop()
_annotate(study, who)
