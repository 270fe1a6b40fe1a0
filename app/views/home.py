"""Study home: the study, its corpus fingerprint(s), runs, label coverage and completeness.

On a large study's first visit in a server process the label coverage is counted in the
background (:func:`app.components.state.study_progress_if_ready`): the page is drawn at once
without the counts and shows them on its next run once they are ready (as the Annotate page's
selector does; polling for them kept the page's script running on a loaded machine).
"""

from urllib.parse import quote_plus, urlencode

import pandas as pd
import streamlit as st

from app.components.address import write_address
from app.components.navigation import ANNOTATE, DATA
from app.components.page import show_rows
from app.components.safe_text import escape_markdown
from app.components.session import address_params, current_study, get_db, reader
from app.components.state import study_progress_if_ready
from evalcore.report.protocol_line import protocol_summary
from evalcore.store.corpus import count_documents
from evalcore.store.query_reads import query_texts
from evalcore.store.runs import list_runs
from evalcore.store.study_handle import open_study

db = get_db()
study = current_study(db)
if study is None:
    st.title("Relevance Ledger")
    st.info("This store holds no study yet. Import qrels and runs on the Data page.")
    st.page_link(DATA.path, label="Go to Data", icon=":material/upload_file:")
    st.stop()

st.title(escape_markdown(study.name))
st.caption(
    escape_markdown(
        f"study {study.study_id} · corpus {study.corpus_id} · unit: {study.retrieval_unit} · "
        f"relevant when gain ≥ {study.relevance_threshold} · {study.gain} gain"
    )
)

# the annotator's way in comes first (above the fold on a phone); the lead's figures follow
if st.button("Start labeling", key="rl_start_labeling", type="primary",
             icon=":material/rate_review:"):
    st.switch_page(ANNOTATE.path, query_params=address_params())

handle = open_study(db, study.study_id, reader())  # this page run's one check
queries = query_texts(handle)
progress = study_progress_if_ready(handle, "", len(queries))
runs = list_runs(handle)
COUNTING = "counting…"
FILTER_PARAM, FILTER_KEY = "filter", "rl_home_filter"
OPEN_PARAM, OPEN_KEY = "unfinished", "rl_home_unfinished"

cols = st.columns(5)
cols[0].metric("Documents", f"{count_documents(db, study.corpus_id):,}")
cols[1].metric("Queries", f"{len(queries):,}")
cols[2].metric("Runs", len(runs))
cols[3].metric(
    "Queries marked complete",
    f"{progress.complete} of {len(progress.queries)}" if progress else COUNTING,
)
cols[4].metric("Conflicts", progress.conflicts if progress else COUNTING,
               help="Units on which annotators disagree; "
               "they count as unlabeled until a reviewer adjudicates.")

st.subheader("Label coverage")
if progress is None:
    st.info(f"Counting the labels of {len(queries):,} queries in the background (once per "
            "server start); this page shows them on its next run once they are counted "
            "(reload it, or come back to it).", icon=":material/hourglass_top:")
elif progress.pooled:
    share = progress.labeled / progress.pooled
    st.progress(
        share,
        text=f"{progress.labeled:,} of {progress.pooled:,} pooled returned items labeled "
        f"({share:.1%}) · {progress.conflicts:,} in conflict (need a reviewer) · "
        f"{progress.pooled - progress.labeled - progress.conflicts:,} unlabeled",
    )
else:
    st.write("No run has returned anything yet, so there is nothing to label.")
st.caption(
    "The pool of a query is every unit a run returned in its top k. Unlabeled items are "
    "unknown, never non-relevant: a metric that depends on one is shown as unavailable."
)

st.subheader("Corpus fingerprints")
fingerprints = sorted({r.corpus_fingerprint for r in runs if r.corpus_fingerprint})
if fingerprints:
    for fingerprint in fingerprints:
        used_by = ", ".join(r.name for r in runs if r.corpus_fingerprint == fingerprint)
        # plain text (no markdown): st.code would make the browser load its syntax
        # highlighter (1.5 MB of JavaScript) for the first page of every cold start
        st.text(f"{fingerprint}  (runs: {used_by})")
    if len(fingerprints) > 1:
        st.warning(
            "The runs were made on different corpus fingerprints (a changed corpus, or "
            "different visible organisations or cutoff): their numbers are not comparable."
        )
else:
    st.write("No run records a corpus fingerprint.")

st.subheader("Runs")
if runs:
    show_rows({"run": r.name, "source": r.source, "k": r.k, "scan complete": r.scan_complete,
               "fingerprint": (r.corpus_fingerprint or "")[:19],
               "protocol": protocol_summary(r.protocol), "created": r.created_at}
              for r in runs)
else:
    st.write("No runs yet: create a lexical run or import one on the Data page.")

st.subheader("Queries")
# the study and annotator part of every row's address, encoded once (10,000 rows on a
# large study): the same address as urlencode(address_params(query=qid))
session_params = urlencode(address_params())
here = f"annotate?{session_params}&query=" if session_params else "annotate?query="
# "annotate": a real address, opening the query on the Annotate page (in a new tab)
rows = [{"query": qid, "annotate": here + quote_plus(qid), "text": queries.get(qid, "")}
        for qid in (queries if progress is None else progress.queries)]
if progress is not None:
    for row in rows:
        p = progress.queries[row["query"]]
        row.update(pooled=p.pooled, labeled=p.labeled, conflicts=p.conflicts, complete=p.complete)
# a long list is filtered (by id or words of the text; unfinished only), the filter in the
# address so a reload or a shared link keeps it
left, right = st.columns([3, 1], vertical_alignment="bottom")
if FILTER_KEY not in st.session_state:
    st.session_state[FILTER_KEY] = str(st.query_params.get(FILTER_PARAM, ""))[:200]
if OPEN_KEY not in st.session_state:
    st.session_state[OPEN_KEY] = st.query_params.get(OPEN_PARAM) == "1"
wanted = left.text_input("Filter queries", key=FILTER_KEY, max_chars=200,
                         placeholder="query id or words of its text").strip()
open_only = right.toggle("Unfinished only", key=OPEN_KEY, disabled=progress is None,
                         help="Queries with pooled items still unlabeled or in conflict.")
write_address("home", {FILTER_PARAM: wanted or None, OPEN_PARAM: "1" if open_only else None})
if wanted:
    words = wanted.casefold().split()
    rows = [r for r in rows
            if all(w in f"{r['query']} {r['text']}".casefold() for w in words)]
if open_only and progress is not None:
    rows = [r for r in rows if r["labeled"] < r["pooled"] or r["conflicts"]]
st.caption(f"{len(rows):,} of {len(queries):,} queries"
           + (" match the filter" if wanted or open_only else ""))
st.dataframe(
    pd.DataFrame(rows, columns=list(rows[0]) if rows else ["query", "annotate", "text"]),
    hide_index=True, width="stretch", height=300,
    column_config={"annotate": st.column_config.LinkColumn(
        "annotate", display_text="label ›", width="small",
        help="Open this query on the Annotate page (new tab)")},
)
