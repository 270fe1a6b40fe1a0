"""A team-mode store for the access tests (not a test module).

Study ``s`` (organisation ``acme``, corpus ``c``) has a lead, a reviewer and an
annotator of acme; ``otto`` belongs to organisation ``globex`` only. Study
``g`` (organisation ``globex``, same corpus) is led by otto. Corpus ``c`` holds
acme documents a1..a4 and globex documents b1, b2.
"""

from pathlib import Path

import sqlite_utils
from lexical_builders import QUERIES, docs, protocol
from store_fixtures import new_store

from evalcore.report.from_store import report_from_store
from evalcore.report.model import Report
from evalcore.retrieval.pin import pin_protocol
from evalcore.store.completeness import mark_complete
from evalcore.store.corpus import add_documents
from evalcore.store.labels import record_label
from evalcore.store.members import add_member, add_to_organisation
from evalcore.store.runs import add_run
from evalcore.store.studies import QueryIn, StudyIn
from evalcore.store.study_handle import open_study
from evalcore.store.study_setup import add_queries, create_study

LEAD = "lena@acme.org"
REVIEWER = "rita@acme.org"
ANNOTATOR = "ann@acme.org"
OUTSIDER = "otto@globex.org"
#: role name -> user (None: not a member of study s)
USERS = {"annotator": ANNOTATOR, "reviewer": REVIEWER, "lead": LEAD, None: OUTSIDER}


def team_store(target: str | Path) -> tuple[sqlite_utils.Database, Report]:
    """The store described in the module docstring (at ``target``, as for ``new_store``) and a
    report ready to be saved."""
    db = new_store(target, org_id="acme")
    add_documents(db, "c", docs())
    add_queries(db, "s", [QueryIn(query_id=q, text=t) for q, t in QUERIES.items()])
    pin_protocol(db, study_id="s", name="p1", protocol=protocol(), actor="setup")
    record_label(db, study_id="s", query_id="q1", unit_id="a1", gain=2, annotator="setup")
    record_label(db, study_id="s", query_id="q1", unit_id="b1", gain=1, annotator="setup")
    mark_complete(db, study_id="s", query_id="q1", actor="setup")
    add_run(db, study_id="s", name="r1", source="imported", k=3,
            results=[("q1", 1, "a1", 3.0), ("q1", 2, "b1", 2.0), ("q1", 3, "a2", 1.0)])
    report = report_from_store(open_study(db, "s", "setup"), runs=["r1"], created_by="setup")
    add_member(db, study_id="s", user=LEAD, role="lead", actor=LEAD)
    add_member(db, study_id="s", user=REVIEWER, role="reviewer", actor=LEAD)
    add_member(db, study_id="s", user=ANNOTATOR, role="annotator", actor=LEAD)
    # globex's study over acme's corpus: acme's lead vouches for it (corpus ownership)
    create_study(db, StudyIn(study_id="g", corpus_id="c", org_id="globex"), actor=LEAD)
    add_member(db, study_id="g", user=OUTSIDER, role="lead", actor=OUTSIDER)
    add_to_organisation(db, user=OUTSIDER, org_id="globex", actor=OUTSIDER)
    return db, report
