"""Study home: the study, its corpus fingerprint(s), runs, label coverage and completeness."""

from urllib.parse import urlencode

import pandas as pd
import streamlit as st

from app.components.navigation import ANNOTATE, DATA
from app.components.safe_text import escape_markdown
from app.components.session import address_params, current_study, get_db, reader
from app.components.state import cached_study_progress
from evalcore.report.protocol_line import protocol_summary
from evalcore.store.corpus import count_documents
from evalcore.store.runs import list_runs
from evalcore.store.studies import query_texts

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

progress = cached_study_progress(db, study.study_id)
queries = query_texts(db, study.study_id)
runs = list_runs(db, study.study_id, viewer=reader())

cols = st.columns(5)
cols[0].metric("Documents", f"{count_documents(db, study.corpus_id):,}")
cols[1].metric("Queries", f"{len(queries):,}")
cols[2].metric("Runs", len(runs))
cols[3].metric(
    "Queries marked complete",
    f"{progress.complete} of {len(progress.queries)}",
)
cols[4].metric("Conflicts", progress.conflicts, help="Units on which annotators disagree; "
               "they count as unlabeled until a reviewer adjudicates.")

st.subheader("Label coverage")
if progress.pooled:
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
        st.code(f"{fingerprint}  (runs: {used_by})", language=None)
    if len(fingerprints) > 1:
        st.warning(
            "The runs were made on different corpus fingerprints (a changed corpus, or "
            "different visible organisations or cutoff): their numbers are not comparable."
        )
else:
    st.write("No run records a corpus fingerprint.")

st.subheader("Runs")
if runs:
    table = pd.DataFrame(
        [
            {
                "run": r.name,
                "source": r.source,
                "k": r.k,
                "scan complete": r.scan_complete,
                "fingerprint": (r.corpus_fingerprint or "")[:19],
                "protocol": protocol_summary(r.protocol),
                "created": r.created_at,
            }
            for r in runs
        ]
    )
    st.dataframe(table, hide_index=True, width="stretch")
else:
    st.write("No runs yet: create a lexical run or import one on the Data page.")

st.subheader("Queries")
rows = [
    {
        "query": qid,
        # a real address: opens this query on the Annotate page (in a new tab)
        "annotate": "annotate?" + urlencode(address_params(query=qid)),
        "text": queries.get(qid, ""),
        "pooled": p.pooled,
        "labeled": p.labeled,
        "conflicts": p.conflicts,
        "complete": p.complete,
    }
    for qid, p in progress.queries.items()
]
st.dataframe(
    pd.DataFrame(rows), hide_index=True, width="stretch", height=300,
    column_config={"annotate": st.column_config.LinkColumn(
        "annotate", display_text="label ›", width="small",
        help="Open this query on the Annotate page (new tab)")},
)
st.page_link(ANNOTATE.path, label="Start labeling", icon=":material/rate_review:")
