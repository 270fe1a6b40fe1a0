"""Annotator agreement: kappa per pair, alpha overall and per query, conflicts to adjudicate.

Each conflict shows what the reviewer needs
(:func:`evalcore.analysis.adjudication.conflict_contexts`): the query, the document (escaped
text, never HTML or markdown), every annotator's gain, note and time; no gain is preselected.
``?study=S&query=Q&unit=U`` shows that conflict first, or what became of it.
"""

from collections import Counter

import plotly.graph_objects as go
import streamlit as st

from app.components.address import restore_choice, write_address
from app.components.information_need import show_information_need
from app.components.links import AGREEMENT_PAGE, QUERY_PARAM, UNIT_PARAM, item_params
from app.components.page import flash, say, show_flash, show_rows, study_page
from app.components.queue import GRADE_MEANINGS
from app.components.safe_text import escape_markdown, truncate
from app.components.session import annotator as current_annotator
from app.components.session import annotator_prompt, get_db
from app.components.shared_results import shared_result
from evalcore.analysis.adjudication import ConflictContext, conflict_contexts
from evalcore.analysis.agreement import agreement_and_conflicts
from evalcore.analysis.automatic_agreement import SourceAgreement, automatic_agreement
from evalcore.analysis.stats.agreement import GAIN_CATEGORIES, AgreementResult
from evalcore.contract.query_order import natural_key
from evalcore.store.dialect import database_errors
from evalcore.store.labels import adjudicate
from evalcore.store.study_handle import Study
from evalcore.store.transaction import retry_busy

#: Conflicts per page of the list (a study with many is paged, and filtered by query).
CONFLICTS_PER_PAGE = 10
PAGE = "agreement"
ALL_QUERIES = "all queries"
FILTER_PARAM, FILTER_KEY = "conflicts_of", "rl_agree_conflicts_of"
PAGE_PARAM, PAGE_KEY = "page", "rl_agree_page"

_FLASH = "_rl_agree_flash"
_NAME_PROMPT = "Enter your name to adjudicate (it is recorded with the decision)."


def _coefficient(result: AgreementResult) -> str:
    if result.computed and result.value is not None:
        return f"{result.value:.3f}"
    return f"not computable ({result.reason})"


def _on_adjudicate(study_id: str, query_id: str, unit_id: str, key: str) -> None:
    reviewer = current_annotator()
    gain = st.session_state.get(f"{key}_gain")
    note = str(st.session_state.get(f"{key}_note", "")).strip()
    if gain is None:  # nothing is preselected: the reviewer chooses
        flash(_FLASH, "error", f"Not adjudicated: choose a gain for {unit_id} on {query_id} first")
        return
    try:
        item = {"study_id": study_id, "query_id": query_id, "unit_id": unit_id}
        retry_busy(lambda: adjudicate(get_db(), **item, gain=gain, reviewer=reviewer, note=note))
    except (ValueError, PermissionError, *database_errors()) as error:
        flash(_FLASH, "error", f"Not adjudicated: {error}")
        return
    flash(_FLASH, "success", f"{unit_id} on {query_id} adjudicated: gain {gain} by {reviewer}")


#: The document text shown in full up to this many characters (longer: the rest in an expander).
TEXT_SHOWN = 700


def _address_conflict() -> tuple[str, str] | None:
    """The (query, unit) the address names (``?query=Q&unit=U``), if any."""
    query_id = str(st.query_params.get(QUERY_PARAM, "")).strip()
    unit_id = str(st.query_params.get(UNIT_PARAM, "")).strip()
    if not (query_id and unit_id):
        return None
    # Written back: a link from this page to itself (the list's "Address of this conflict")
    # hands the parameters to the script but leaves the browser's address bar as it was.
    st.query_params[QUERY_PARAM] = query_id
    st.query_params[UNIT_PARAM] = unit_id
    return query_id, unit_id


def _when(created_at: str) -> str:
    """``2026-12-03T07:05:09.123Z`` -> ``2026-12-03 07:05 UTC``."""
    return created_at[:16].replace("T", " ") + " UTC" if len(created_at) >= 16 else created_at


def _context(handle: Study, ctx: ConflictContext) -> None:
    """The query, the document and every annotator's gain, note and time, all as plain text."""
    st.markdown(f"**{escape_markdown(ctx.unit_id)}** · query {escape_markdown(ctx.query_id)}")
    st.markdown("**Query:** " + escape_markdown(ctx.query_text or "(no text)"))
    show_information_need(handle, ctx.query_id)
    if ctx.document_note is not None:
        say("caption", ctx.document_note)
    else:
        st.markdown("**Document:** " + escape_markdown(ctx.title or "(untitled)"))
        text = ctx.text or ""
        if not text:
            st.caption("(the document has no text)")
        elif len(text) <= TEXT_SHOWN:
            say("markdown", text)
        else:
            say("markdown", truncate(text, TEXT_SHOWN))
            with st.expander("Full text"):
                say("markdown", text)
    for j in ctx.judgements:
        meaning = GRADE_MEANINGS.get(j.gain, "")
        said = f"{j.annotator} said {j.gain} ({meaning}) · {_when(j.created_at)}"
        note = f"note: {j.note}" if j.note else "no note"
        st.markdown("- " + escape_markdown(said) + "  \n  " + escape_markdown(note))
    for source, gain in ctx.automatic.items():
        said = f"automatic ({source}) said {gain} ({GRADE_MEANINGS.get(gain, '')})"
        st.markdown("- " + escape_markdown(f"{said}: a helper, not a judgement"))


def _conflict_card(handle: Study, ctx: ConflictContext, reviewer: str, *, linked: bool) -> None:
    """A conflict with its context and the reviewer's decision (no gain preselected)."""
    _context(handle, ctx)
    key = f"rl_adj_{ctx.query_id}_{ctx.unit_id}"
    left, mid, right = st.columns([2, 4, 1], vertical_alignment="bottom")
    left.selectbox("Gain", GAIN_CATEGORIES, key=f"{key}_gain", index=None,
                   placeholder="choose a gain",
                   format_func=lambda g: f"{g} · {GRADE_MEANINGS[g]}")
    mid.text_input("Note", key=f"{key}_note", max_chars=2000)
    right.button("Adjudicate", key=key, disabled=not reviewer,
                 help=None if reviewer else "enter your name above first",
                 on_click=_on_adjudicate, args=(ctx.study_id, ctx.query_id, ctx.unit_id, key))
    if linked:
        st.page_link(AGREEMENT_PAGE, label="Address of this conflict", icon=":material/link:",
                     query_params=item_params(ctx.query_id, ctx.unit_id))


def _focused(handle: Study, ctx: ConflictContext, reviewer: str) -> None:
    """The conflict the address names, or what became of it."""
    with st.container(border=True):
        if ctx.in_conflict:
            st.markdown("##### The conflict this address names")
            if not reviewer:
                annotator_prompt(_NAME_PROMPT)
            _conflict_card(handle, ctx, reviewer, linked=False)
            return
        said = "nobody has a current label on it"
        if ctx.state == "adjudicated":
            note = f" (note: {ctx.reviewer_note})" if ctx.reviewer_note else ""
            said = f"adjudicated by {ctx.reviewer}: gain {ctx.adjudicated_gain}{note}"
        elif ctx.state == "labeled":
            said = "its annotators agree"
        say("info", f"{ctx.unit_id} on query {ctx.query_id} is not in conflict: {said}.")
        if ctx.state is not None:
            _context(handle, ctx)


def _conflict_page(listed: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The conflicts of the chosen query (or all), one page of them; both in the address."""
    queries = sorted({q for q, _ in listed}, key=natural_key)
    restore_choice(PAGE, FILTER_PARAM, FILTER_KEY, [ALL_QUERIES, *queries], what="query")
    left, right = st.columns(2)
    counts = Counter(q for q, _ in listed)

    def conflicts_of(q: str) -> str:
        return q if q == ALL_QUERIES else f"query {q} ({counts[q]})"

    chosen = left.selectbox("Conflicts of", [ALL_QUERIES, *queries], key=FILTER_KEY,
                            format_func=conflicts_of, persist_state="session")
    rows = listed if chosen == ALL_QUERIES else [c for c in listed if c[0] == chosen]
    pages = [str(n) for n in range(1, (len(rows) - 1) // CONFLICTS_PER_PAGE + 2)]
    restore_choice(PAGE, PAGE_PARAM, PAGE_KEY, pages, what="page")

    def page_of(n: str) -> str:
        first = (int(n) - 1) * CONFLICTS_PER_PAGE + 1
        last = min(int(n) * CONFLICTS_PER_PAGE, len(rows))
        return f"{n} of {len(pages)} (conflicts {first}–{last} of {len(rows)})"

    number = right.selectbox("Page", pages, key=PAGE_KEY, format_func=page_of,
                             persist_state="session")
    shown = {FILTER_PARAM: None if chosen == ALL_QUERIES else chosen}
    write_address(PAGE, {**shown, PAGE_PARAM: None if number == "1" else number})
    start = (int(number) - 1) * CONFLICTS_PER_PAGE
    return rows[start:start + CONFLICTS_PER_PAGE]


def _show_confusion(confusion: list[list[int]], colors: str, rows: str, columns: str, key: str):
    """A confusion matrix over the gains: ``rows`` (who is read down) against ``columns``."""
    labels = [str(g) for g in GAIN_CATEGORIES]
    hover = f"{rows}: %{{y}}, {columns}: %{{x}}: %{{z}} units<extra></extra>"
    cells = {"z": confusion, "text": confusion, "texttemplate": "%{text}", "hovertemplate": hover}
    fig = go.Figure(go.Heatmap(x=labels, y=labels, colorscale=colors, **cells))
    yaxis = {"title": rows, "type": "category", "autorange": "reversed"}
    xaxis = {"title": columns, "type": "category"}
    fig.update_layout(height=380, margin={"t": 30}, yaxis=yaxis, xaxis=xaxis)
    st.plotly_chart(fig, key=key)


def _automatic_section(sources: list[SourceAgreement]) -> None:
    """Each automatic source against the human gains that count (never evidence)."""
    st.subheader("Automatic judgments (not evidence)")
    st.caption(
        "Labels from a model or an LLM judge, imported with `evalcore import labels "
        "--automatic NAME`. They never count: no value, bound, verdict or completeness "
        "reads them. Each source is compared with the human gain that counts (labeled in "
        "agreement or adjudicated; units in conflict are left out)."
    )
    show_rows(
        # what a phone shows first: the source and how far it agrees
        {"source": s.source, "weighted kappa (quadratic)": _coefficient(s.kappa),
         "exact agreement": "—" if s.exact_agreement is None else f"{s.exact_agreement:.1%}",
         "shared with humans": s.n_units, "units judged": s.n_labels}
        for s in sources)
    names = [s.source for s in sources]
    chosen = st.selectbox("Automatic source", range(len(names)), format_func=names.__getitem__,
                          key="rl_agree_automatic")
    source = sources[chosen]
    say("caption", f"{source.source}: {source.n_units} units with a human gain; "
                   "rows: human gain, columns: automatic gain. Per grade below: "
                   "human and automatic on those units, and over every unit the "
                   "source judged.")
    _show_confusion(source.confusion, "Oranges", "human gain", "automatic gain",
                    key="rl_agree_automatic_confusion")
    counts = (source.human_counts, source.automatic_counts, source.automatic_all_counts)
    show_rows({"grade": g, "human": h, "automatic": a, "automatic (all judged)": every}
              for g, h, a, every in zip(GAIN_CATEGORIES, *counts, strict=True))


study, handle = study_page("Annotator agreement")
show_flash(_FLASH)
focus = _address_conflict()
if focus is not None:  # the address names a conflict: it comes first, before the statistics
    (focused,) = conflict_contexts(handle, [focus])
    _focused(handle, focused, current_annotator())

# Shared by every session until a label, adjudication or run changes the store's marks; the
# statistics and the conflicts from one read of where annotators overlap.
summary, pending = shared_result(handle, ("agreement_and_conflicts",),
                                 lambda: agreement_and_conflicts(handle))
cols = st.columns(3)
cols[0].metric("Annotators", len(summary.annotators))
cols[1].metric("Units labeled by two or more", summary.n_units_multiply_labeled)
alpha = summary.overall_alpha
if alpha.computed and alpha.value is not None:
    cols[2].metric("Krippendorff's alpha (ordinal)", _coefficient(alpha))
else:  # the reason is a sentence: too long for a metric tile, so it goes underneath
    cols[2].metric("Krippendorff's alpha (ordinal)", "not computable")
    cols[2].caption(escape_markdown(str(alpha.reason)))
st.caption(
    "Alpha uses every unit labeled by two or more annotators (missing values allowed); kappa "
    "(quadratic weights) uses the units both annotators of a pair labeled. Adjudications are "
    f"not judgements and are left out. Queries with alpha below "
    f"{summary.low_agreement_threshold} (or not computable) are flagged."
)
if not summary.pairs:
    st.info("No two annotators have labeled the same unit yet: agreement needs overlap.")
else:
    st.subheader("Annotator pairs")
    show_rows(
        {"annotator a": p.annotator_a, "annotator b": p.annotator_b, "shared units": p.n_units,
         "weighted kappa (quadratic)": _coefficient(p.kappa)}
        for p in summary.pairs)
    names = [f"{p.annotator_a} × {p.annotator_b}" for p in summary.pairs]
    chosen = st.selectbox("Confusion matrix of", range(len(names)), format_func=names.__getitem__,
                          key="rl_agree_pair")
    pair = summary.pairs[chosen]
    say("caption", f"a = {pair.annotator_a}, b = {pair.annotator_b}; "
                   f"{pair.n_units} shared units")
    _show_confusion(pair.confusion, "Blues", "gain by annotator a", "gain by annotator b",
                    key="rl_agree_confusion")

if summary.per_query:
    st.subheader("Per query")
    show_rows([
        {"query": q.query_id, "units": q.n_units, "annotators": q.n_annotators,
         "alpha": _coefficient(q.alpha), "low agreement": q.low_agreement,
         "why": q.why_flagged or ""}
        for q in sorted(summary.per_query,
                        key=lambda q: (not q.low_agreement, natural_key(q.query_id)))],
        column_config={"low agreement": st.column_config.CheckboxColumn()})

automatic = automatic_agreement(handle)
if automatic:
    _automatic_section(automatic)

st.subheader("Conflicts to adjudicate")
reviewer = current_annotator()
listed = [(q, label.unit_id) for q, label in pending if (q, label.unit_id) != focus]
if not pending:
    st.success("No unit is in conflict.")
elif listed:
    many = len(pending) != 1
    st.caption(f"{len(pending)} unit{'s are' if many else ' is'} in conflict: "
               f"{'they count' if many else 'it counts'} as unlabeled until a reviewer "
               "adjudicates. Largest disagreement first. Each one has its own address "
               "(study, query and unit): open it to share or bookmark it.")
    if not reviewer and focus is None:
        annotator_prompt(_NAME_PROMPT)
    shown = _conflict_page(listed)
    for context in conflict_contexts(handle, shown):
        with st.container(border=True):
            _conflict_card(handle, context, reviewer, linked=True)
