"""Ranking inspector: why a query's numbers are what they are.

Per query and run, the ranked list (:func:`evalcore.analysis.inspector.inspect_query`) with
labels, gains, notes, automatic judgments (never counted), flags and links to Annotate; the
study's measures with reason chips and intervals; optionally a second run side by side.
Text from the data is shown in dataframes (plain text) or escaped.
"""

import pandas as pd
import streamlit as st

from app.components.address import restore_choice, write_address
from app.components.chips import render_measure_values
from app.components.information_need import show_information_need
from app.components.links import AGREEMENT_PATH, ANNOTATE_PATH, item_href
from app.components.page import say, study_page
from app.components.safe_text import escape_markdown, truncate
from evalcore.analysis.inspector import InspectedRow, QueryInspection, inspect_query, rank_changes
from evalcore.contract.query_order import natural_key
from evalcore.store.completeness import claim_withdrawal
from evalcore.store.query_reads import query_texts
from evalcore.store.references import list_references
from evalcore.store.runs import list_runs

NONE = "(none)"
PAGE = "inspector"
WORKING = "(working labels)"


def _notes(row: InspectedRow) -> str:
    """Each annotator's note on the row's unit, then the adjudicating reviewer's."""
    notes = [f"{a}: {n}" for a, n in row.notes.items()]
    if row.reviewer and row.reviewer_note:
        notes.append(f"{row.reviewer} (reviewer): {row.reviewer_note}")
    return " · ".join(notes)


def _frame(ins: QueryInspection, changes: dict[str, str] | None = None) -> pd.DataFrame:
    rows = []
    for r in ins.rows:
        row = {
            "rank": r.rank,
            "unit": r.unit_id,
            # label and state first: they explain the metrics, and stay visible side by side
            "label": "—" if r.gain is None else str(r.gain),  # no label is not 0
            "state": r.state,
            # the item on the Annotate page; a unit outside the permitted set is not opened
            # for reading (its text is withheld)
            "annotate": ("" if r.permission_violation
                         else item_href(ANNOTATE_PATH, ins.query_id, r.unit_id)),
            "adjudicate": (item_href(AGREEMENT_PATH, ins.query_id, r.unit_id)
                           if r.conflict else ""),
            "title": r.title_withheld or r.title or "",
            "score": r.score,
            "annotators": ", ".join(f"{a}: {g}" for a, g in r.annotators.items()),
            "notes": _notes(r),
            "unlabeled": r.unlabeled,
            "duplicate": f"of #{r.first_rank}" if r.duplicate else "",
            "permission violation": r.permission_violation,
            "conflict": r.conflict,
            "beyond k": r.beyond_k,
        }
        if any(x.automatic for x in ins.rows):  # marked apart from the human labels
            row["automatic"] = ", ".join(f"{s}: {g}" for s, g in r.automatic.items())
        if r.reviewer and r.state == "adjudicated":
            row["annotators"] += f" (adjudicated by {r.reviewer})"
        if changes is not None:
            row = {"change": changes.get(r.unit_id, "") if not r.duplicate else "", **row}
        rows.append(row)
    return pd.DataFrame(rows)


#: Rows tall enough for three lines: a table's text wraps only in rows taller than 4 rem, so
#: side by side (half width) titles and notes wrap instead of being cut.
WRAPPED_ROW_PX = 78
NARROW_ORDER = ("change, rank, label, title, score, notes, unit, state, annotators, automatic, "
                "annotate, adjudicate, unlabeled, duplicate, permission violation, conflict, "
                "beyond k").split(", ")


def _show(ins: QueryInspection, changes: dict[str, str] | None = None, *,
          narrow: bool = False) -> None:
    st.markdown(f"**{escape_markdown(ins.run)}** · k = {ins.k}")
    render_measure_values(ins.measure_values, ins.result.reasons)
    counts = ins.flag_counts()
    say("caption",
        f"in the top {ins.k}: {counts['unlabeled']} unlabeled, {counts['duplicate']} returned "
        f"duplicates, {counts['permission_violation']} permission violations, "
        f"{counts['conflict']} in conflict")
    if not ins.rows:
        st.info("This run returned nothing for this query.")
        return
    frame = _frame(ins, changes)
    st.dataframe(
        frame,
        hide_index=True,
        width="stretch",
        row_height=WRAPPED_ROW_PX if narrow else None,
        # at half width what a reader compares comes first: title, score and notes in view
        column_order=[c for c in NARROW_ORDER if c in frame.columns] if narrow else None,
        column_config={
            "rank": st.column_config.NumberColumn(width="small"),
            "title": st.column_config.TextColumn(width="medium"),
            "score": st.column_config.NumberColumn(format="%.4f", width="small"),
            "label": st.column_config.TextColumn(
                width="small", help="resolved gain 0-4; — = unlabeled (unknown, not 0)"),
            "unlabeled": st.column_config.CheckboxColumn(width="small"),
            "duplicate": st.column_config.TextColumn(width="small"),
            "permission violation": st.column_config.CheckboxColumn(
                "permission", width="small", help="a permission violation"),
            "conflict": st.column_config.CheckboxColumn(width="small"),
            "beyond k": st.column_config.CheckboxColumn(
                width="small", help="not measured by any metric"),
            "notes": st.column_config.TextColumn(
                width="medium", help="each annotator's note on their current label"),
            "automatic": st.column_config.TextColumn(
                "automatic (not evidence)", width="small",
                help="automatic judgments (a model, an LLM judge): shown, never counted"),
            "annotate": st.column_config.LinkColumn(
                display_text="open", width="small",
                help="this item on the Annotate page (opens a new tab)"),
            "adjudicate": st.column_config.LinkColumn(
                display_text="adjudicate", width="small",
                help="the conflict's adjudication (opens a new tab)"),
        },
    )


study, handle = study_page("Ranking inspector")
runs = [r.name for r in list_runs(handle)]
if not runs:
    st.info("This study has no run yet: create or import one on the Data page.")
    st.stop()
texts = query_texts(handle)
query_ids = sorted(texts, key=natural_key)
if not query_ids:
    st.info("This study has no query yet.")
    st.stop()

versions = [WORKING] + [v.name for v in list_references(handle)]
# the address names the query, the runs and the reference (a bookmark or a shared link opens
# the same view; a reload keeps it)
restore_choice(PAGE, "query", "rl_inspect_query", query_ids, what="query")
restore_choice(PAGE, "run", "rl_inspect_run", runs, what="run")
restore_choice(PAGE, "vs", "rl_inspect_run_b", [NONE, *runs], what="run")
restore_choice(PAGE, "reference", "rl_inspect_reference", versions, what="reference")
a, b, c, d = st.columns([3, 2, 2, 2])
query_id = a.selectbox("Query", query_ids, key="rl_inspect_query",
                       format_func=lambda q: f"{q} · {truncate(texts.get(q, ''), 60)}",
                       persist_state="session")
run_a = b.selectbox("Run", runs, key="rl_inspect_run", persist_state="session")
others = [NONE] + [r for r in runs if r != run_a]
if st.session_state.get("rl_inspect_run_b") not in others:
    st.session_state["rl_inspect_run_b"] = NONE
run_b = c.selectbox("Side by side with", others, key="rl_inspect_run_b", persist_state="session")
version = d.selectbox("Reference", versions, key="rl_inspect_reference", persist_state="session")
reference = None if version == WORKING else version
write_address(PAGE, {"query": query_id, "run": run_a,
                     "vs": None if run_b == NONE else run_b,
                     "reference": None if version == WORKING else version})

st.markdown("#### " + escape_markdown(texts.get(query_id, "") or query_id))
show_information_need(handle, query_id)
first = inspect_query(handle, run_a, query_id, reference, query_text=texts.get(query_id, ""))
st.caption(
    ("relevant set declared complete" if first.population_complete
     else "relevant set not declared complete: recall, nDCG and AP are unavailable, shown as "
          "the range they lie in")
    + (f" · frozen reference {escape_markdown(reference)}" if reference else " · working labels")
)
withdrawn = None if reference else claim_withdrawal(handle, query_id)
if withdrawn is not None:  # why the claim is gone, as plain text
    say("caption", withdrawn.text())
if run_b == NONE:
    _show(first)
else:
    second = inspect_query(handle, run_b, query_id, reference,
                           query_text=texts.get(query_id, ""))
    moves = rank_changes(first, second)
    left, right = st.columns(2)
    with left:
        _show(first, narrow=True)
    with right:
        _show(second, {m.unit_id: m.change for m in moves if m.rank_b is not None},
              narrow=True)
    dropped = [m for m in moves if m.change == "dropped"]
    if dropped:
        say("caption",
            f"Dropped by {run_b} from {run_a}'s top {first.k}: "
            + ", ".join(f"{m.unit_id} (was #{m.rank_a})" for m in dropped))
    st.caption("change: how the unit moved from the left run to the right run (↑ = ranked "
               "higher on the right; new = not in the left run's top k).")
