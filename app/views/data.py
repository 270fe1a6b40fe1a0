"""Data: import documents, queries, judgments and runs; information needs; lexical runs;
exports; the measures the study reports (a lead's choice).

Every import is all-or-nothing: on any error the page lists every error with its line and
nothing is written. Uploaded file names only label messages; they are never used as paths.
"""

import dataclasses
import io
from collections.abc import Callable
from datetime import UTC, datetime, time
from functools import partial

import streamlit as st
from pydantic import ValidationError

from app.components.auth import signed_in_user
from app.components.export_refusals import qrels_refusal_now, run_refusal_now
from app.components.page import say, show_rows
from app.components.progress import StreamlitProgress
from app.components.safe_text import escape_markdown
from app.components.session import annotator as current_annotator
from app.components.session import current_study, get_db, select_study_next_run
from evalcore.contract.gains import MAX_GAIN
from evalcore.io.documents import DocumentFields
from evalcore.io.errors import InputErrors
from evalcore.io.progress import reporting
from evalcore.io.queries import QueryFields
from evalcore.io.tool_labels import TOOL_FORMATS
from evalcore.retrieval.errors import ProtocolNotFoundError, RetrievalRefused
from evalcore.retrieval.lexical_protocol import MAX_TOP_K, parse_protocol
from evalcore.retrieval.pin import list_pinned_protocols, pin_protocol
from evalcore.retrieval.workflow import execute_protocol
from evalcore.store.exports import (
    export_labels,
    export_qrels,
    export_run,
    export_tool_labels,
    tool_labels_refusal,
)
from evalcore.store.imports.uploads import UPLOAD_KINDS, UploadKind, import_upload
from evalcore.store.information_needs import (
    MAX_NEED_CHARS,
    InformationNeed,
    information_need,
    set_information_need,
)
from evalcore.store.members import create_team_study
from evalcore.store.membership import organisation_ids
from evalcore.store.query_reads import query_texts
from evalcore.store.references import list_references
from evalcore.store.runs import list_runs
from evalcore.store.studies import StudyIn
from evalcore.store.study_handle import Study, open_study
from evalcore.store.study_measures import (
    measure_label,
    parse_measure_list,
    set_study_measures,
    study_measures,
)
from evalcore.store.study_setup import create_study

KIND_LABELS: dict[UploadKind, str] = {
    "qrels": "TREC qrels (query 0 doc gain)",
    "run": "TREC run (query Q0 doc rank score tag)",
    "observations": "Observation JSONL (the evidence contract)",
    "labels-csv": "Labels CSV",
    "labels-jsonl": "Labels JSONL",
    "beir": "BEIR dataset (.zip of the folder)",
    "documents": "Documents (JSONL, TSV, CSV or TREC <DOC> file, .gz too)",
    "queries": "Queries or TREC topics (with their information need)",
    "labels-quepid": "Quepid ratings CSV (query,docid,rating)",
    "labels-rre": "RRE ratings JSON",
    "labels-rank-eval": "Elasticsearch/OpenSearch _rank_eval request (ratings)",
}


def _actor() -> str:
    return current_annotator() or "app-user"


def _show_errors(title: str, error: Exception) -> None:
    say("error", title)
    if isinstance(error, InputErrors):
        at_least = "at least " if error.stopped else ""  # reading stopped at the error limit
        st.caption(f"{at_least}{error.total} error{'s' if error.total != 1 else ''} found; "
                   "nothing was written. Fix them all and upload again.")
    st.code(str(error), language=None, wrap_lines=True)


#: The upload kinds whose labels record an annotator (the form asks which).
_LABEL_KINDS = {"qrels", "observations", *(kind for kind in UPLOAD_KINDS if "labels" in kind)}
#: The owner organisation field of the uploads that add documents: its label and help.
_OWNER_FIELDS = {
    "documents": ("Owner organisation of new documents",
                  "The organisation whose lexical runs may see them."),
    "beir": ("Owner organisation of the new documents",
             "Default: the organisation that owns the corpus."),
}


def _import_options(kind: UploadKind) -> dict:
    """The form's fields for ``kind``, as :func:`import_upload`'s keyword arguments."""
    a, b = st.columns(2)
    options: dict = {}
    if kind == "run":
        k = a.number_input("k (cutoff depth)", min_value=1, max_value=10_000, value=10)
        options["k"] = int(k)
        options["run_name"] = b.text_input("Run name (default: the file's run tag)")
    if kind == "observations":
        options["run_name"] = a.text_input("Run name (default: the file name)")
    if kind in ("documents", "queries"):
        help_ = "auto: from the file name (.jsonl, .tsv, .csv; else TREC)."
        options["fmt"] = a.selectbox("Format", ["auto", "jsonl", "tsv", "csv", "trec"], help=help_)
        model = DocumentFields if kind == "documents" else QueryFields
        names = [field.name for field in dataclasses.fields(model)]
        cells = st.columns(len(names))
        fields = {n: cell.text_input(f"{n} field", value=n).strip() or n
                  for n, cell in zip(names, cells, strict=True)}
        options["document_fields" if kind == "documents" else "query_fields"] = model(**fields)
    owner = _OWNER_FIELDS.get(kind)
    if owner is not None:
        options["owner_org"] = b.text_input(owner[0], help=owner[1]).strip() or None
    if kind in _LABEL_KINDS:
        help_ = "Default: the file's kind and name."
        options["annotator"] = b.text_input("Annotator recorded on the labels", help=help_)
    if kind in ("labels-csv", "labels-jsonl"):
        options["keep_annotators"] = a.checkbox(
            "Keep the annotators the file names",
            help="You vouch for the names, times and sources in the file; without this "
                 "a file naming annotators is refused.")
    if kind in ("qrels", "beir"):
        options["complete"] = a.checkbox("Declare every judged query complete",
                                         help="Only if these judgments list every relevant unit.")
    options["allow_unknown_ids"] = st.checkbox("Allow ids not in the study's corpus or queries")
    return options


def _import_section(study_id: str) -> None:
    st.subheader("Import")
    kind = st.selectbox("What are you uploading?", UPLOAD_KINDS,
                        format_func=lambda k: KIND_LABELS[k], key="rl_import_kind")
    with st.form("import_form", clear_on_submit=False):
        upload = st.file_uploader("File", key="rl_import_file")
        options = _import_options(kind)
        submitted = st.form_submit_button("Import", type="primary")
    if not submitted:
        return
    if upload is None:
        st.warning("Choose a file first.")
        return
    bar = st.progress(0.0, text="Reading the upload…")
    data = upload.getvalue()
    try:
        with reporting(StreamlitProgress(bar)):
            summary = import_upload(get_db(), kind, data, upload.name, study_id=study_id,
                                    actor=_actor(), **options)
    except (InputErrors, ValueError, PermissionError) as error:
        bar.empty()  # the message below says how it ended (no full bar for a refusal)
        _show_errors("The import was refused; the store is unchanged.", error)
        return
    except OSError as error:  # the server's disk (full, read-only), not the upload
        bar.empty()
        reason = escape_markdown(error.strerror or type(error).__name__)
        st.error(f"The import could not be written on the server ({reason}); the store is "
                 "unchanged. Ask whoever runs the app to free disk space, then upload again.")
        return
    bar.empty()
    say("success", "\n".join(summary.lines()))


def _lexical_form(handle: Study, study_org: str | None) -> tuple[str, dict] | None:
    """The lexical run form: the run's name and its protocol, once submitted."""
    orgs = organisation_ids(handle.db)
    references = [""] + [r.name for r in list_references(handle)]
    with st.form("lexical_form"):
        a, b = st.columns(2)
        name = a.text_input("Protocol and run name", placeholder="bm25-title-2x")
        top_k = b.number_input("top_k (the run's k)", min_value=1, max_value=MAX_TOP_K, value=10)
        default_orgs = [study_org] if study_org in orgs else orgs
        organisations = a.multiselect("Visible organisations", orgs, default=default_orgs)
        today = datetime.now(UTC).date()
        cutoff_day = b.date_input("Historical cutoff (UTC, end of day)", value=today)
        bounds = {"min_value": 0.0, "max_value": 1000.0, "value": 1.0}
        fields = (("title", a), ("text", b))
        weights = {f: float(col.number_input(f"BM25 {f} weight", **bounds)) for f, col in fields}
        reference = a.selectbox("Reference version (optional)", references,
                                format_func=lambda name: name or "none")
        if not st.form_submit_button("Pin and run", type="primary"):
            return None
    cutoff = datetime.combine(cutoff_day, time(23, 59, 59), tzinfo=UTC).isoformat()
    protocol = {"method": "lexical", "top_k": int(top_k), "cutoff": cutoff.replace("+00:00", "Z")}
    protocol |= {"organisations": organisations, "weights": weights}
    if reference:
        protocol["reference_version"] = reference
    return name.strip(), protocol


def _lexical_section(handle: Study, study_org: str | None) -> None:
    st.subheader("Create a lexical run")
    st.caption("BM25 over the study's corpus (SQLite FTS5). The protocol is pinned first: the "
               "visible documents and their fingerprint are recorded, and the run is refused "
               "if the corpus changes afterwards.")
    submitted = _lexical_form(handle, study_org)
    if submitted is not None:
        name, protocol = submitted
        db, who = get_db(), {"study_id": handle.study_id, "actor": _actor()}
        bar = st.progress(0.1, text="Pinning the protocol…")
        try:
            pin_protocol(db, name=name, protocol=parse_protocol(protocol, source="protocol form"),
                         **who)
            bar.progress(0.4, text="Ranking every query…")
            with reporting(StreamlitProgress(bar)):
                run = execute_protocol(db, protocol_name=name, run_name=name, **who)
        except RetrievalRefused as refusal:
            bar.empty()  # the message below says how it ended (no full bar for a refusal)
            _show_errors("The run was refused; nothing was stored.", refusal)
            return
        except (InputErrors, ValueError, PermissionError, ProtocolNotFoundError) as error:
            bar.empty()
            _show_errors("The run was not created.", error)
            return
        bar.empty()
        say("success", f"Run {run.name} stored: k = {run.k}, corpus fingerprint "
                       f"{run.corpus_fingerprint}.")
    pinned = list_pinned_protocols(handle)
    if pinned:
        with st.expander(f"Pinned protocols ({len(pinned)})"):
            show_rows({"protocol": p.name, "documents": p.document_count,
                       "fingerprint": p.corpus_fingerprint, "pinned by": p.pinned_by,
                       "pinned at": p.pinned_at} for p in pinned)


def _export_labels(handle: Study, out: io.StringIO, fmt: str, ref: str | None) -> None:
    """The label events (csv, jsonl) or a reference's ratings in a tool's format."""
    if fmt in TOOL_FORMATS:
        export_tool_labels(handle, out, fmt, reference=ref)
    else:
        export_labels(handle, out, format=fmt)


def _download(column, handle: Study, refusal: str | None, button: tuple[str, str, str],
              write: Callable[[Study, io.StringIO], object]) -> bool:
    """A download button (``button``: its label, file name and key) whose file ``write``
    builds only when clicked (on a read handle of its own: the click comes after this script
    run), or the ``refusal`` found up front. Whether the button is shown."""
    if refusal is not None:  # e.g. an id with a space: TREC files cannot hold it
        column.warning(escape_markdown(refusal))
        return False
    db, study_id, viewer = get_db(), handle.study_id, _actor()

    def build() -> str:
        buffer = io.StringIO()
        write(open_study(db, study_id, viewer), buffer)
        return buffer.getvalue()

    label, file_name, key = button
    column.download_button(label, build, file_name=file_name, mime="text/plain", key=key)
    return True


def _exports_section(handle: Study) -> None:
    """Download buttons whose files are built only when clicked (a whole-study export is
    seconds at 10,000 queries); a refusal is found by a cheap check and said up front."""
    study_id = handle.study_id
    st.subheader("Export")
    versions = {r.name: r for r in list_references(handle)}
    a, b, c = st.columns(3)
    reference = a.selectbox("Qrels of", ["working reference", *versions])
    ref = None if reference == "working reference" else reference
    # Facts shared by every session, brought up to date from the labels written since.
    refusal = qrels_refusal_now(handle, versions.get(reference))
    qrels = partial(export_qrels, reference=ref)
    _download(a, handle, refusal, ("Download qrels", f"{study_id}.qrels", "dl_qrels"), qrels)
    fmt = b.selectbox("Label events as", ["csv", "jsonl", *TOOL_FORMATS],
                      help="csv/jsonl: every event; quepid/rre/rank-eval: the reference's "
                           "ratings in that tool's format.")
    if fmt in TOOL_FORMATS:
        suffix = {"quepid": "csv", "rre": "json", "rank-eval": "json"}[fmt]
        button = ("Download ratings", f"{study_id}-labels-{fmt}.{suffix}", "dl_labels")
        refusal = tool_labels_refusal(handle, fmt, ref)
    else:
        button, refusal = ("Download label events", f"{study_id}-labels.{fmt}", "dl_labels"), None
    _download(b, handle, refusal, button, lambda study, out: _export_labels(study, out, fmt, ref))
    runs = {r.name: r for r in list_runs(handle)}
    if runs:
        run = c.selectbox("Run", list(runs))
        safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in run)
        button = ("Download run (TREC)", f"{safe}.run", "dl_run")
        refusal = run_refusal_now(handle, runs[run])
        if _download(c, handle, refusal, button, lambda study, out: export_run(study, run, out)):
            c.caption("Queries whose stored order TREC tools would change (score ties, "
                      "missing scores) make the file carry rank-derived scores "
                      "(n - rank + 1) for the whole run.")


def _information_need_section(handle: Study) -> None:
    """A lead edits a query's information need (description, narrative); audited."""
    db = get_db()
    study_id = handle.study_id
    texts = query_texts(handle)
    if not texts:
        return
    st.subheader("Information needs")
    st.caption("What counts as relevant for a query, shown to annotators and reviewers beside "
               "it. Only a lead may change it; every change is recorded in the audit log.")
    query_id = st.selectbox("Query", sorted(texts), key="rl_need_query",
                            format_func=lambda q: f"{q} · {texts.get(q, '')[:60]}")
    need = information_need(handle, query_id)
    with st.form("need_form"):
        description = st.text_area("Description", value=need.description, max_chars=MAX_NEED_CHARS)
        narrative = st.text_area("Narrative (guideline for assessors)", value=need.narrative,
                                 max_chars=MAX_NEED_CHARS)
        if not st.form_submit_button("Save information need"):
            return
    try:
        set_information_need(db, study_id=study_id, query_id=query_id, actor=_actor(),
                             need=InformationNeed(description=description, narrative=narrative))
    except (ValidationError, ValueError, LookupError, PermissionError) as error:
        _show_errors("The information need was not saved.", error)
        return
    say("success", f"Information need of query {query_id} saved.")


def _measures_section(handle: Study) -> None:
    """A lead chooses the measures the study reports (dashboard, Inspector); audited."""
    db = get_db()
    study_id = handle.study_id
    st.subheader("Measures")
    chosen = study_measures(handle)
    shown = ", ".join(measure_label(m, aggregate=True) for m in chosen)
    say("caption",
        f"This study reports {shown} (k without a number: each run's cutoff), with Judged@k "
        "beside them. Only a lead may change them; every change is recorded in the audit log.")
    with st.form("measures_form"):
        text = st.text_input("Measures (comma-separated)", value=", ".join(map(str, chosen)),
                             help="e.g. P@10, nDCG@10, MRR@10, R@100, AP@100, Success@10, "
                                  "P(rel=2)@5, RBP(p=0.8)@10")
        if not st.form_submit_button("Save measures"):
            return
    try:
        set_study_measures(db, study_id=study_id, measures=parse_measure_list(text),
                           actor=_actor())
    except (ValueError, LookupError, PermissionError) as error:
        _show_errors("The measures were not saved.", error)
        return
    say("success", f"Measures of study {study_id} saved: the dashboard shows them "
                   "at its next refresh.")


def _new_study_section(expanded: bool) -> None:
    with st.expander("Create a study", expanded=expanded), st.form("study_form"):
        a, b = st.columns(2)
        study_id = a.text_input("Study id", placeholder="acme-search-2026")
        corpus_id = b.text_input("Corpus id", placeholder="acme-kb",
                                 help="Studies naming the same corpus share its documents.")
        name = a.text_input("Name")
        threshold = b.number_input("Relevant when gain ≥", min_value=1, max_value=MAX_GAIN)
        org = a.text_input("Organisation (optional)",
                           help="A corpus that belongs to an organisation is open only to "
                                "studies of that organisation, created by its members.")
        if not st.form_submit_button("Create study"):
            return
        try:
            new = StudyIn(study_id=study_id.strip(), corpus_id=corpus_id.strip(),
                          name=name.strip(), relevance_threshold=int(threshold),
                          org_id=org.strip() or None)
            lead = signed_in_user()
            if lead is None:
                create_study(get_db(), new)
            else:  # team mode: the creator is the study's first lead
                create_team_study(get_db(), new, lead=lead)
        except (ValidationError, ValueError, PermissionError) as error:
            _show_errors("The study was not created.", error)
            return
        select_study_next_run(study_id.strip())
        say("success", f"Study {study_id.strip()} created; it is now selected.")
        st.rerun()


db = get_db()
study = current_study(db)
st.title("Data")
_new_study_section(expanded=study is None)
if study is None:
    st.stop()
say("caption", f"study {study.study_id} · corpus {study.corpus_id}")
# the page's one read handle (a write checks its own permission; a download built on
# click opens its own, since it runs after this script run)
handle = open_study(db, study.study_id, _actor())
_measures_section(handle)
st.divider()
_import_section(study.study_id)
st.divider()
_lexical_section(handle, study.org_id)
st.divider()
_exports_section(handle)
st.divider()
_information_need_section(handle)
