"""Whether the Data page's TREC exports would be refused, said up front without a scan.

:mod:`evalcore.store.exports` reads the suspects (ids a TREC file cannot hold): a run's
and the working labels' are recorded as they are written, a frozen version's is read and
cached per store and content hash. Only when there is a suspect is the export run for its
message, once per store state.
"""

import streamlit as st

from app.components.shared_results import shared_result, study_store
from evalcore.store.exports import qrels_refusal, qrels_suspect, run_refusal, run_suspect
from evalcore.store.references import ReferenceVersion
from evalcore.store.runs import RunInfo
from evalcore.store.study_handle import Study


@st.cache_resource(show_spinner=False, max_entries=256)
def _version_suspect(path: str, study_id: str, name: str, content_hash: str,
                     _study: Study) -> bool:
    return qrels_suspect(_study, name)


def _reference_suspect(study: Study, reference: ReferenceVersion) -> bool:
    version = (reference.name, reference.content_hash)
    return _version_suspect(study_store(study), study.study_id, *version, study)


def qrels_refusal_now(study: Study, reference: ReferenceVersion | None) -> str | None:
    """Why the qrels export of the working labels (``reference`` None) or of a frozen
    version would be refused now, or None."""
    suspect = _reference_suspect(study, reference) if reference else qrels_suspect(study, None)
    name = None if reference is None else reference.name
    if not suspect:
        return qrels_refusal(study, name, suspect=False)
    return shared_result(study, ("qrels_refusal", name, study.actor),
                         lambda: qrels_refusal(study, name, suspect=True))


def run_refusal_now(study: Study, run: RunInfo) -> str | None:
    """Why the TREC export of the stored ``run`` would be refused, or None."""
    suspect = run_suspect(study, run.run_id)
    if not suspect:
        return run_refusal(study, run.name, suspect=False)
    return shared_result(study, ("run_refusal", run.run_id, study.actor),
                         lambda: run_refusal(study, run.name, suspect=True))
