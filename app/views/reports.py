"""Reports: freeze a reference version, generate a pinned report, export it.

A report (:func:`evalcore.report.from_store.report_from_store`, optionally with a stored
sample's estimates apart from the verdicts) is stored once and never changed. Exports leave
out annotator notes and internal identifiers unless the lead ticks the box.
"""

import streamlit as st

from app.components.address import restore_choice, write_address
from app.components.page import (
    flash,
    results_rows,
    say,
    show_bottom_line,
    show_flash,
    show_rows,
    study_page,
)
from app.components.query_set_choice import choose_query_set
from app.components.safe_text import escape_markdown
from app.components.session import annotator as current_annotator
from app.components.session import get_db
from evalcore.report.csv_export import render_csv, render_verdicts_csv
from evalcore.report.from_store import report_from_store
from evalcore.report.html import render_html
from evalcore.report.measure_table import measures_line, run_cells
from evalcore.report.model import Report, render_json
from evalcore.report.stored import load_report, save_report
from evalcore.store.references import freeze_reference, list_references
from evalcore.store.reports import list_reports
from evalcore.store.runs import list_runs
from evalcore.store.samples import sample_names
from evalcore.store.study_handle import open_study

WORKING = "(working labels — not pinned)"
PAGE = "reports"
#: The sample choice meaning "no estimate" (the default).
NO_SAMPLE = "(none)"
#: The confidence levels a report's estimates may use (the address holds the chosen one).
LEVELS = ["0.95", "0.9", "0.99"]
SAMPLE_KEY = "rl_report_sample"
LEVEL_KEY = "rl_report_level"
_FLASH = "_rl_reports_flash"
#: The report's downloads: label, key part, file name suffix, type.
_FILES = (("HTML", "html", ".html", "text/html"), ("JSON", "json", ".json", "application/json"),
          ("CSV (per query)", "csv", ".csv", "text/csv"),
          ("CSV (verdicts)", "verdicts", "-verdicts.csv", "text/csv"))
#: The runs table's "comparable" column for each :meth:`ReportRun.status` label.
_COMPARABLE = {"comparable": "yes", "accepted without verification": "yes (accepted, not verified)",
               "comparability not verified": "NOT VERIFIED", "not comparable": "NOT COMPARABLE"}


def _on_freeze(study_id: str) -> None:
    name = str(st.session_state.get("rl_freeze_name", "")).strip()
    try:
        version = freeze_reference(get_db(), study_id=study_id, name=name,
                                   actor=current_annotator())
    except (ValueError, LookupError, PermissionError) as error:
        flash(_FLASH, "error", f"Not frozen: {error}")
        return
    st.session_state["rl_freeze_name"] = ""
    st.session_state["rl_report_reference"] = version.name
    flash(_FLASH, "success", f"Reference version {version.name} frozen: {version.n_labels} "
                             f"labels on {version.n_queries} queries, {version.n_complete} "
                             f"complete ({version.content_hash[:19]}…)")


def _on_generate(study_id: str) -> None:
    state = st.session_state
    runs = list(state.get("rl_report_runs", []))
    version = state.get("rl_report_reference")
    reference = None if version in (None, WORKING) else version
    kind = str(state.get("rl_report_queries", "all"))
    queries = str(state.get("rl_report_queries_ids", "")).lstrip("@") if kind == "list" else kind
    chosen = state.get(SAMPLE_KEY, NO_SAMPLE)
    sample = None if chosen in (None, NO_SAMPLE) else str(chosen)
    if sample is not None and reference is not None:
        why = f"sample {sample} estimates from the working labels"
        flash(_FLASH, "error", f"No report generated: {why}; choose the reference {WORKING} "
                               "or no sample.")
        return
    choice = {"runs": runs, "reference": reference, "queries": queries, "sample": sample}
    choice["name"] = str(state.get("rl_report_name", "")).strip() or None
    choice["accept_unverified"] = runs if state.get("rl_report_accept_unverified") else []
    choice["level"] = float(state.get(LEVEL_KEY, LEVELS[0]))
    db, lead = get_db(), current_annotator()
    try:
        report = report_from_store(open_study(db, study_id, lead), created_by=lead, **choice)
        stored = save_report(db, report)
    except (ValueError, LookupError, PermissionError) as error:
        flash(_FLASH, "error", f"No report generated: {error}")
        return
    state["rl_report_name"] = ""
    state["rl_report_show"] = stored.report_id
    done = f"Report {stored.name} generated and stored ({stored.content_hash[:19]}…)"
    flash(_FLASH, "success", done)


def _shared_k(report: Report) -> int | None:
    """The cutoff every comparable run shares (None: they differ)."""
    ks = {r.k for r in report.runs if r.comparable}
    return ks.pop() if len(ks) == 1 else None


def _show_report(report: Report, report_id: int) -> None:
    st.markdown(f"#### {escape_markdown(report.name)}")
    facts = [
        f"reference {report.reference_version or 'working labels (not pinned)'}",
        f"corpus fingerprint {report.corpus_fingerprint or 'none recorded'}",
        f"protocol: relevant when gain ≥ {report.protocol.relevance_threshold}, "
        f"{report.protocol.gain} gain",
        f"evalcore {report.evalcore_version}",
        f"generated {report.created_at} by {report.created_by}",
        *([report.query_set.describe()] if report.query_set is not None else []),
    ]
    say("caption", " · ".join(facts))
    for warning in report.warnings:
        say("warning", warning)
    for note in report.notes:  # e.g. the corpus size that bounds open populations
        say("caption", f"Note: {note}.")
    show_rows(
        {"run": r.name, "k": r.k, "queries": r.n_queries,
         "comparable": _COMPARABLE[r.status()[0]], "why not": r.status()[1] or "",
         "corpus fingerprint": r.corpus_fingerprint}
        for r in report.runs)
    for line in report.pair_bottom_lines():  # the bottom line before the results table
        show_bottom_line(line, glossary=True)
    if report.measures:  # one table of averages: the chosen measures (+ Judged@k)
        say("caption", f"Measures: {measures_line(report)}")
        show_rows(
            {"run": r.name, **{c.label: c.text for c in run_cells(report, r)}}
            for r in report.runs)
    elif report.comparison is not None:  # a report stored before chosen measures
        show_rows(results_rows(report.comparison.table, _shared_k(report)))
        say("caption", report.comparison.table.legend)
    if report.comparison is None and report.comparison_note:
        say("info", report.comparison_note)
    internal = st.checkbox("Include annotator notes and internal identifiers", value=False,
                           key=f"rl_report_internal_{report_id}",
                           help="Off: exports hold no annotator names, notes or row ids.")
    base = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in report.name)[:80]
    texts = [render_html(report, include_internal=internal),
             render_json(report, include_internal=internal), render_csv(report),
             render_verdicts_csv(report)]
    for column, (label, kind, suffix, mime), text in zip(st.columns(4), _FILES, texts, strict=True):
        column.download_button(f"Download {label}", text, file_name=f"{base}{suffix}", mime=mime,
                               key=f"rl_dl_{kind}_{report_id}", on_click="ignore",
                               disabled=kind == "verdicts" and not report.decisions)


study, handle = study_page("Reports")
show_flash(_FLASH)
lead = current_annotator()
if not lead:
    st.info("Enter your name in the sidebar: freezing and generating are recorded under it.")

st.subheader("Reference versions")
versions = list_references(handle)
if versions:
    show_rows(
        {"version": v.name, "frozen": v.created_at, "by": v.created_by, "queries": v.n_queries,
         "labels": v.n_labels, "complete": v.n_complete, "content hash": v.content_hash}
        for v in versions)
else:
    st.caption("No reference version is frozen yet.")
left, right = st.columns([3, 1])
left.text_input("New version name", key="rl_freeze_name", placeholder="e.g. v1")
right.button("Freeze working labels", key="rl_freeze", disabled=not lead,
             on_click=_on_freeze, args=(study.study_id,),
             help="Snapshots the resolved labels (conflicts excluded) and completeness claims; "
                  "a name is never reused.")

st.subheader("Generate a report")
runs = [r.name for r in list_runs(handle)]
if not runs:
    st.info("This study has no run yet.")
else:
    a, b, c = st.columns([3, 2, 2])
    a.multiselect("Runs (the first is the baseline)", runs, default=runs[:2],
                  key="rl_report_runs")
    b.selectbox("Reference version", [v.name for v in reversed(versions)] + [WORKING],
                key="rl_report_reference")
    c.text_input("Report name (optional)", key="rl_report_name")
    query_spec = choose_query_set("rl_report_queries")
    samples = [NO_SAMPLE, *sample_names(handle)]
    restore_choice(PAGE, "sample", SAMPLE_KEY, samples, what="sample")
    restore_choice(PAGE, "level", LEVEL_KEY, LEVELS, what="confidence level")
    d, e = st.columns([3, 2])
    sample_choice = d.selectbox(
        "Estimates from a sample", samples, key=SAMPLE_KEY,
        help="A sample drawn for a compared pair (Compare page, or evalcore sample draw): the "
             "report shows its estimates apart from the decided verdicts, never as evidence. "
             "Estimates use the working labels.", persist_state="session")
    level_choice = e.selectbox("Confidence level of the estimates", LEVELS, key=LEVEL_KEY,
                               format_func=lambda v: f"{float(v):.0%}",
                               disabled=sample_choice == NO_SAMPLE, persist_state="session")
    no_sample = sample_choice == NO_SAMPLE
    write_address(PAGE, {"sample": None if no_sample else sample_choice,
                         "level": None if no_sample or level_choice == LEVELS[0]
                         else level_choice})
    st.checkbox("Accept runs whose comparability is not verified", value=False,
                key="rl_report_accept_unverified",
                help="A run with no corpus fingerprint recorded (or a baseline without one) "
                     "cannot be shown to have searched the same corpus. Ticked: such runs are "
                     "compared anyway, and the report records that you accepted them.")
    st.button("Generate and store report", key="rl_report_generate", type="primary",
              disabled=not lead or not st.session_state.get("rl_report_runs")
              or query_spec is None,
              on_click=_on_generate, args=(study.study_id,))

st.subheader("Stored reports")
stored = list_reports(handle)
if not stored:
    st.caption("No report is stored yet.")
else:
    show_rows(
        {"report": s.name, "reference": s.reference_version or "(working labels)",
         "generated": s.created_at, "by": s.created_by, "evalcore": s.evalcore_version,
         "content hash": s.content_hash}
        for s in stored)
    ids = [s.report_id for s in stored]
    names = {s.report_id: s.name for s in stored}
    if st.session_state.get("rl_report_show") not in ids:
        st.session_state["rl_report_show"] = ids[-1]
    shown = st.selectbox("Open report", ids, format_func=names.get, key="rl_report_show")
    st.caption("Stored reports are immutable: a new report needs a new name.")
    _show_report(load_report(handle, shown), shown)
