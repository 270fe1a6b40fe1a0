"""Live dashboard: every run's metrics as labels arrive, and what to label next.

The numbers come from :class:`evalcore.live.dashboard.LiveDashboard` (the
metric computer on the working reference, shared by every session); this page
only lays them out. The cards and the blocking list are fragments (``st.fragment``) that
re-run every few seconds: when the store's label/completeness event ids and runs
are unchanged the state reads nothing more; after a label it re-evaluates only
the touched queries. The per-query chart (the heavy element) is drawn on full
runs only: the cards' fragment asks for one when the store has moved on since
the chart was drawn, so an unchanged store sends no chart at all.

Cards and chart show the study's chosen measures (a lead sets them on the Data
page or with ``evalcore study measures``) with Judged@k beside them; an
unavailable value shows the interval the truth lies in beside the word
unavailable, or why it has none.
"""

import streamlit as st

from app.components.address import restore_choice, write_address
from app.components.chips import reason_text
from app.components.figures import unchecked_figure
from app.components.links import item_params
from app.components.live_state import with_live_state
from app.components.navigation import AGREEMENT, ANNOTATE
from app.components.page import say, show_rows, study_page
from app.components.safe_text import escape_markdown
from app.components.session import get_db, reader
from evalcore.analysis.interval_text import aggregate_card
from evalcore.contract.measures import Measure, parse_measure
from evalcore.contract.reasons import reason_words
from evalcore.live import query_subsets
from evalcore.live.charts import per_query_figure, shows_summary, summary_figure
from evalcore.live.dashboard import LiveDashboard
from evalcore.store.resolution import resolve_study
from evalcore.store.study_handle import Study, open_study
from evalcore.store.study_measures import measure_label

REFRESH_SECONDS = 2.0
PAGE = "dashboard"
#: Cards per row (more measures wrap onto further rows).
CARDS_PER_ROW = 5
BLOCKING_SHOWN = 15
LIVE_KEY = "rl_dash_live"
METRIC_KEY = "rl_dash_metric"
SUBSET_KEY = "rl_dash_subset"
SUBSET_RUN_KEY = "rl_dash_subset_run"
PAGE_KEY = "rl_dash_page"
BLOCKING_PAGE_KEY = "rl_dash_blocking_page"
#: The rules a large study's per-query chart offers (see evalcore.live.query_subsets).
SUBSETS = {
    "lowest": "the lowest values of a run",
    "different": "the most different between runs",
    "unavailable": "unavailable in a run",
    "page": "a page of queries, by id",
}


def _figure(state: LiveDashboard, metric: Measure, label: str, slot="all", make=per_query_figure,
            *args):
    """A figure of the state, rebuilt only when the state, the metric or ``args`` changed."""
    key = (id(state), state.marks, metric, label, args)
    cached = st.session_state.get(f"_rl_dash_figure_{slot}")
    if cached is None or cached[0] != key:
        cached = (key, make(state, metric, label, *args))
        st.session_state[f"_rl_dash_figure_{slot}"] = cached
    return cached[1]


def _card(column, state: LiveDashboard, run: str, measure: Measure) -> None:
    k = state.k(run)
    value = state.measure_aggregate(run, measure)
    with column.container(border=True):
        st.markdown(f"**{escape_markdown(measure_label(measure, k, aggregate=True))}**")
        if value is None:
            st.markdown(":gray-badge[not computed]")
            st.caption(escape_markdown(f"the run was stored to depth {k}; "
                                       f"{measure} needs {measure.k}"))
            return
        card = aggregate_card(value, unknowns=state.measure_unknowns(run, measure))
        if card.available:
            st.markdown(f"### {card.headline}")
        else:  # the interval (or why there is none) beside the word
            st.markdown(f":orange-badge[unavailable] · {escape_markdown(card.interval or '')}")
        st.caption(escape_markdown(card.detail))


def _cards(state: LiveDashboard) -> None:
    for run in state.run_names:
        st.markdown(f"##### {escape_markdown(run)}  ·  k = {state.k(run)}")
        measures = state.measures
        for start in range(0, len(measures), CARDS_PER_ROW):
            row = measures[start:start + CARDS_PER_ROW]
            for column, measure in zip(st.columns(CARDS_PER_ROW), row, strict=False):
                _card(column, state, run, measure)


def _coverage(state: LiveDashboard) -> None:
    cov = state.coverage()
    if cov.pooled:
        st.progress(cov.labeled / cov.pooled,
                    text=f"Label coverage: {cov.labeled:,} of {cov.pooled:,} pooled returned "
                         f"items labeled ({cov.labeled / cov.pooled:.1%})")
    else:
        st.caption("No run has returned anything yet: nothing to label.")
    unlabeled = cov.pooled - cov.labeled - cov.in_conflict
    st.caption(f"{unlabeled:,} unlabeled · {cov.in_conflict:,} in conflict (they need a "
               "reviewer, not another label) · "
               f"{cov.queries_fully_labeled:,} of {cov.queries:,} queries fully labeled · "
               f"{cov.queries_complete:,} declared complete (recall and nDCG need that)")


def _blocking(state: LiveDashboard, handle: Study) -> None:
    total = state.n_blocking_items()
    st.markdown("#### What to label next")
    if not total:
        st.success("No unlabeled returned item blocks a metric.")
        return
    pages = -(-total // BLOCKING_SHOWN)
    number = 1
    if st.session_state.get(BLOCKING_PAGE_KEY, 1) > pages:  # the list got shorter
        st.session_state[BLOCKING_PAGE_KEY] = pages
    if pages > 1:  # a large study's list is read a page at a time: only that page is made
        label = f"Page of the list (of {pages:,})"
        number = int(st.number_input(label, 1, pages, value=1, step=1, key=BLOCKING_PAGE_KEY))
    offset = (number - 1) * BLOCKING_SHOWN
    items = state.blocking_list(BLOCKING_SHOWN, offset)
    st.caption(
        f"Items {offset + 1:,} to {offset + len(items):,} of {total:,} unlabeled returned "
        "items, those whose labels matter most first: "
        "'unlocks' counts the run metric values that item alone keeps unavailable (its label "
        "makes them available, whatever the gain); 'blocks' counts every value it is one of "
        "the blockers of. Ties: best rank, then query and unit id."
    )
    labeled = resolve_study(handle, [i.query_id for i in items])  # one read for the page
    conflict = {(i.query_id, i.unit_id): i.unit_id in labeled.get(i.query_id, {}) for i in items}
    show_rows(
        {"query": i.query_id, "unit": i.unit_id, "unlocks": i.unlocks, "blocks": i.blocks,
         "best rank": i.best_rank, "runs": ", ".join(i.runs),
         "needs": "adjudication" if conflict[(i.query_id, i.unit_id)] else "a label"}
        for i in items)
    if any(conflict.values()):
        st.caption("Items in conflict between annotators need a reviewer's adjudication "
                   "(Annotator agreement page), not another label.")
    columns = st.columns(3)
    for n, item in enumerate(items):  # real links: they also open in a new tab
        if conflict[(item.query_id, item.unit_id)]:  # the conflict's own address
            page, verb, icon = AGREEMENT.path, "Adjudicate", ":material/gavel:"
        else:
            page, verb, icon = ANNOTATE.path, "Label", ":material/rate_review:"
        label = f"{verb} {item.unit_id} for {item.query_id}"
        params = item_params(item.query_id, item.unit_id)
        columns[n % 3].page_link(page, label=label, icon=icon, query_params=params)


_EVERY = REFRESH_SECONDS if st.session_state.get(LIVE_KEY, True) else None
_CHART_MARKS = "_rl_dash_chart_marks"
#: The page's read handle while the whole page runs (its fragments run inside it).
_PAGE_HANDLE = "_rl_dash_page_handle"


def _run_handle(study_id: str) -> Study:
    """This run's read handle: the page's when the whole page runs (the state is brought up
    to date once per handle), else, a fragment rerunning on its own, one opened now."""
    handle = st.session_state.get(_PAGE_HANDLE)
    return handle if handle is not None else open_study(get_db(), study_id, reader())


@st.fragment(run_every=_EVERY)
def _live_cards(study_id: str) -> None:
    """Coverage and metric cards; asks for a full rerun when the chart is out of date."""
    marks = with_live_state(_run_handle(study_id), _render_cards)
    if marks != st.session_state.get(_CHART_MARKS):
        st.rerun()  # the store changed since the chart was drawn: redraw the whole page


def _render_cards(state: LiveDashboard, seconds: float, changed: bool):
    _coverage(state)
    _cards(state)
    aggregates = [state.measure_aggregate(run, m) for run in state.run_names for m in state.measures]
    codes = sorted({code for value in aggregates for code in getattr(value, "reasons", {})})
    if codes:  # what each reason the cards name means, right under them
        meanings = [f"{reason_words(c)}: {reason_text(c)}" for c in codes]
        st.caption(escape_markdown("; ".join(meanings)))
    st.caption(
        "A card shows the mean only when every query has the metric; otherwise it says how "
        "many queries are missing and why (no mean of the rest is ever shown), and the "
        "interval the mean lies in with the unknown items behind it (rounded outwards)."
        + ("" if changed else " Nothing changed since the last refresh.")
        + f" State refreshed in {1000 * seconds:.0f} ms."
    )
    return state.marks


def _common_k(state: LiveDashboard) -> int | None:
    ks = {state.k(r) for r in state.run_names}
    return ks.pop() if len(ks) == 1 else None


def _chart(handle: Study, name: str) -> None:
    """The per-query chart: drawn on full runs only, so an unchanged store sends nothing."""

    def build(state: LiveDashboard, *_):
        metric = parse_measure(name)
        label = measure_label(metric, _common_k(state))
        if not shows_summary(state):
            return state.marks, _figure(state, metric, label), None
        large = len(state.query_ids), query_subsets.n_pages(state)
        return state.marks, _figure(state, metric, label, "summary", summary_figure), large

    # the reason codes (on hover) are explained under the cards
    marks, figure, large = with_live_state(handle, build)
    st.session_state[_CHART_MARKS] = marks
    st.plotly_chart(unchecked_figure(figure), key="rl_dash_chart")
    if large is not None:
        _subset_chart(handle, name, *large)


def _subset_chart(handle: Study, name: str, n_queries: int, pages: int) -> None:
    """A large study's per-query chart, of a subset of queries the user chooses."""
    st.caption(f"{n_queries:,} queries: above, each run's distribution of the available "
               "values and its count of unavailable ones; below, the per-query chart of "
               f"{query_subsets.SUBSET_SIZE} queries chosen by a rule.")
    run_names = with_live_state(handle, lambda state, *_: state.run_names)
    left, middle, right = st.columns(3)
    restore_choice(PAGE, "queries", SUBSET_KEY, list(SUBSETS), what="rule")
    rule = left.selectbox("Queries of the per-query chart", list(SUBSETS), key=SUBSET_KEY,
                          format_func=SUBSETS.__getitem__, persist_state="session")
    run = number = None
    if rule in ("lowest", "unavailable"):
        restore_choice(PAGE, "run", SUBSET_RUN_KEY, run_names, what="run")
        run = middle.selectbox("Run", run_names, key=SUBSET_RUN_KEY, persist_state="session")
    elif rule == "page":
        number = middle.number_input(f"Page (of {pages:,})", 1, pages, value=1, step=1, key=PAGE_KEY)
    write_address(PAGE, {"queries": rule, "run": run})

    def subset(state: LiveDashboard, metric: Measure) -> tuple[list[str], str]:
        size = query_subsets.SUBSET_SIZE
        if rule == "lowest":
            return query_subsets.lowest(state, metric, run), f"the {size} lowest of {run}"
        if rule == "unavailable":
            found = query_subsets.unavailable(state, metric, run)
            return found, f"the first {size} unavailable in {run}"
        if rule == "different":
            found = query_subsets.most_different(state, metric)
            return found, f"the {size} most different between runs"
        return query_subsets.page(state, int(number or 1)), f"page {number} of {pages:,}"

    def detail(state: LiveDashboard, metric: Measure, label: str, *_):
        queries, said = subset(state, metric)
        return per_query_figure(state, metric, label, queries, said), len(queries)

    def build(state: LiveDashboard, *_):
        metric = parse_measure(name)
        return _figure(state, metric, measure_label(metric, _common_k(state)), "subset",
                       detail, rule, run, number)

    figure, shown = with_live_state(handle, build)
    if not shown:
        right.caption("No query matches this rule.")
        return
    st.plotly_chart(unchecked_figure(figure), key="rl_dash_subset_chart")


@st.fragment(run_every=_EVERY)
def _live_blocking(study_id: str) -> None:
    """What to label next."""
    handle = _run_handle(study_id)
    with_live_state(handle, lambda state, *_: _blocking(state, handle))


study, handle = study_page("Live dashboard")
live = f"refreshes every {REFRESH_SECONDS:g} s while live updates are on"
say("caption", f"{study.name} · working labels · {live}")
left, right = st.columns([3, 1])
run_names, measures, common_k = with_live_state(handle, lambda state, *_: (
    state.run_names, state.measures, _common_k(state)))
shown = [str(m) for m in measures]
restore_choice(PAGE, "measure", METRIC_KEY, shown, what="measure")
chosen_metric = left.selectbox(
    "Measure of the per-query chart", shown, key=METRIC_KEY,
    format_func=lambda name: measure_label(parse_measure(name), common_k),
    persist_state="session",
)
write_address(PAGE, {"measure": chosen_metric})
right.toggle("Live updates", value=True, key=LIVE_KEY)
if not run_names:
    st.info("This study has no run yet: create or import one on the Data page.")
    st.stop()
cards_slot, chart_slot, blocking_slot = st.container(), st.container(), st.container()
st.session_state[_PAGE_HANDLE] = handle
try:
    with chart_slot:  # drawn first so the cards' fragment sees the chart's store marks
        _chart(handle, chosen_metric)
    with cards_slot:
        _live_cards(study.study_id)
    with blocking_slot:
        _live_blocking(study.study_id)
finally:  # a fragment's own rerun opens its own handle
    del st.session_state[_PAGE_HANDLE]
