"""Annotator agreement: kappa per pair, alpha overall and per query, conflicts to adjudicate.

Coefficients come from :func:`evalcore.analysis.agreement.study_agreement`
(the agreement statistics on the store's current per-annotator labels); an
adjudication is written with the store's ``adjudicate`` by the reviewer named
in the sidebar.
"""

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from app.components.page import flash, show_flash, study_page
from app.components.queue import GRADE_MEANINGS
from app.components.safe_text import escape_markdown
from app.components.session import annotator as current_annotator
from app.components.session import get_db
from evalcore.analysis.agreement import open_conflicts, study_agreement
from evalcore.analysis.stats.agreement import GAIN_CATEGORIES, AgreementResult
from evalcore.store.labels import adjudicate

CONFLICTS_SHOWN = 30

_FLASH = "_rl_agree_flash"


def _coefficient(result: AgreementResult) -> str:
    if result.computed and result.value is not None:
        return f"{result.value:.3f}"
    return f"not computable ({result.reason})"


def _on_adjudicate(study_id: str, query_id: str, unit_id: str, key: str) -> None:
    reviewer = current_annotator()
    gain = st.session_state.get(f"{key}_gain")
    note = str(st.session_state.get(f"{key}_note", "")).strip()
    try:
        adjudicate(get_db(), study_id=study_id, query_id=query_id, unit_id=unit_id,
                   gain=gain, reviewer=reviewer, note=note)
    except (ValueError, PermissionError) as error:
        flash(_FLASH, "error", f"Not adjudicated: {error}")
        return
    flash(_FLASH, "success", f"{unit_id} on {query_id} adjudicated: gain {gain} by {reviewer}")


def _confusion_figure(pair) -> go.Figure:
    labels = [str(g) for g in GAIN_CATEGORIES]
    fig = go.Figure(go.Heatmap(
        z=pair.confusion, x=labels, y=labels, colorscale="Blues", text=pair.confusion,
        texttemplate="%{text}", hovertemplate="a: %{y}, b: %{x}: %{z} units<extra></extra>",
    ))
    fig.update_layout(
        height=380, margin={"t": 30},
        xaxis={"title": "gain by annotator b", "type": "category"},
        yaxis={"title": "gain by annotator a", "type": "category", "autorange": "reversed"},
    )
    return fig


db, study = study_page("Annotator agreement")
show_flash(_FLASH)

summary = study_agreement(db, study.study_id)
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
    st.dataframe(pd.DataFrame([
        {"annotator a": p.annotator_a, "annotator b": p.annotator_b, "shared units": p.n_units,
         "weighted kappa (quadratic)": _coefficient(p.kappa)}
        for p in summary.pairs
    ]), hide_index=True, width="stretch")
    names = [f"{p.annotator_a} × {p.annotator_b}" for p in summary.pairs]
    chosen = st.selectbox("Confusion matrix of", range(len(names)), format_func=names.__getitem__,
                          key="rl_agree_pair")
    pair = summary.pairs[chosen]
    st.caption(escape_markdown(f"a = {pair.annotator_a}, b = {pair.annotator_b}; "
                               f"{pair.n_units} shared units"))
    st.plotly_chart(_confusion_figure(pair), key="rl_agree_confusion")

if summary.per_query:
    st.subheader("Per query")
    st.dataframe(pd.DataFrame([
        {"query": q.query_id, "units": q.n_units, "annotators": q.n_annotators,
         "alpha": _coefficient(q.alpha), "low agreement": q.low_agreement,
         "why": q.why_flagged or ""}
        for q in sorted(summary.per_query, key=lambda q: (not q.low_agreement, q.query_id))
    ]), hide_index=True, width="stretch",
        column_config={"low agreement": st.column_config.CheckboxColumn()})

st.subheader("Conflicts to adjudicate")
pending = open_conflicts(db, study.study_id)
reviewer = current_annotator()
if not pending:
    st.success("No unit is in conflict.")
else:
    many = len(pending) != 1
    st.caption(f"{len(pending)} unit{'s are' if many else ' is'} in conflict: "
               f"{'they count' if many else 'it counts'} as unlabeled until a reviewer "
               "adjudicates. Largest disagreement first.")
    if not reviewer:
        st.info("Enter your name in the sidebar to adjudicate (it is recorded with the decision).")
    for query_id, label in pending[:CONFLICTS_SHOWN]:
        key = f"rl_adj_{query_id}_{label.unit_id}"
        with st.container(border=True):
            gains = ", ".join(f"{a}: {g}" for a, g in label.annotators.items())
            st.markdown(escape_markdown(f"{label.unit_id} · query {query_id} · {gains}"))
            left, mid, right = st.columns([2, 4, 1], vertical_alignment="bottom")
            left.selectbox("Gain", GAIN_CATEGORIES, key=f"{key}_gain",
                           format_func=lambda g: f"{g} · {GRADE_MEANINGS[g]}",
                           index=max(label.annotators.values()))
            mid.text_input("Note", key=f"{key}_note", max_chars=2000)
            right.button("Adjudicate", key=key, disabled=not reviewer,
                         on_click=_on_adjudicate, args=(study.study_id, query_id, label.unit_id,
                                                        key))
