"""The store's corpus size bounds open populations in every store-backed evaluation.

A study over a corpus held in the store: every unit its runs return and its labels name
is a document of the corpus, so the corpus size is known and R@k's lower bound on a
query not declared complete is above 0 (contract section 12). A unit outside the corpus,
or a corpus the store does not hold, leaves outside units unbounded. The live dashboard
kept up to date incrementally equals a rebuild whichever way the size moves.
"""

import html
import random
from datetime import UTC, datetime
from pathlib import Path

import pytest

from evalcore.analysis.decision import stored_pair
from evalcore.analysis.run_evaluation import evaluate_run
from evalcore.live.dashboard import LiveDashboard
from evalcore.store.connection import open_store
from evalcore.store.corpus import DocumentIn, add_documents
from evalcore.store.labels import record_label
from evalcore.store.observations import observations_for_run
from evalcore.store.population import study_population
from evalcore.store.runs import add_run
from evalcore.store.studies import QueryIn, StudyIn
from evalcore.store.study_handle import open_study
from evalcore.store.study_setup import add_queries, create_study

STUDY = "s"
CORPUS = "c"
WHEN = datetime(2026, 1, 1, tzinfo=UTC)


def _docs(ids):
    return [DocumentIn(doc_id=d, title=d, text=f"text of {d}", created_at=WHEN) for d in ids]


def _store(new_store_target: Path, *, n_docs: int = 40, seed: int = 7):
    """Two runs over a 40-document corpus, each query's top 5 of both runs labeled."""
    rng = random.Random(seed)
    db = open_store(new_store_target("pop.sqlite"))
    docs = [f"d{i:03d}" for i in range(n_docs)]
    add_documents(db, CORPUS, _docs(docs))
    create_study(db, StudyIn(study_id=STUDY, name="pop", corpus_id=CORPUS))
    qids = [f"q{i}" for i in range(6)]
    add_queries(db, STUDY, [QueryIn(query_id=q, text=q) for q in qids])
    for run in ("a", "b"):
        rows = []
        for q in qids:
            for rank, d in enumerate(rng.sample(docs, 8), 1):
                rows.append((q, rank, d, 1.0 / rank))
        add_run(db, study_id=STUDY, name=run, source="imported", k=5, results=rows)
        for q, rank, d, _ in rows:
            if rank <= 5:
                record_label(
                    db,
                    study_id=STUDY,
                    query_id=q,
                    unit_id=d,
                    gain=int(d[1:]) % 3,
                    annotator="alice",
                )
    return db, qids, docs


def _recall(report, query_id: str):
    return next(r for r in report.queries if r.query_id == query_id).metrics["recall"]


def test_corpus_size_is_the_published_documents_when_every_unit_is_one(tmp_path: Path, new_store_target) -> None:
    db, qids, docs = _store(new_store_target)
    population = study_population(open_study(db, STUDY, None))
    assert population.corpus_size == len(docs)
    assert "corpus size 40" in population.note()
    observations = observations_for_run(open_study(db, STUDY, None), "a")
    assert {o.corpus_size for o in observations} == {40}


def test_store_evaluations_bound_recall_by_the_corpus(tmp_path: Path, new_store_target) -> None:
    db, qids, _ = _store(new_store_target)
    report = evaluate_run(open_study(db, STUDY, None), "a")
    bounded = [_recall(report, q) for q in qids]
    assert all(m.status == "unavailable" and "population_incomplete" in m.reasons for m in bounded)
    # 40 documents: at most 40 - labeled outside units may be relevant, so a query with a
    # relevant unit in its top 5 has R@5 above 0 at worst.
    assert any(m.lower is not None and m.lower > 0 for m in bounded)
    pair = stored_pair(open_study(db, STUDY, None), "a", "b", ["R@5", "AP@5", "nDCG@5"]).pair
    assert pair.measures


def test_a_unit_outside_the_corpus_leaves_outside_units_unbounded(tmp_path: Path, new_store_target) -> None:
    db, qids, _ = _store(new_store_target)
    record_label(
        db, study_id=STUDY, query_id=qids[0], unit_id="not-a-doc", gain=0, annotator="alice"
    )
    population = study_population(open_study(db, STUDY, None))
    assert population.corpus_size is None and population.outside == 1
    assert "1 unit(s)" in population.note()
    report = evaluate_run(open_study(db, STUDY, None), "a")
    assert all(_recall(report, q).lower in (None, 0.0) for q in qids)


def test_a_corpus_the_store_does_not_hold_has_no_size(tmp_path: Path, new_store_target) -> None:
    db = open_store(new_store_target("none.sqlite"))
    create_study(db, StudyIn(study_id=STUDY, name="x", corpus_id="elsewhere"))
    add_run(
        db,
        study_id=STUDY,
        name="a",
        source="imported",
        k=2,
        results=[("q", 1, "u1", 1.0), ("q", 2, "u2", 0.5)],
    )
    population = study_population(open_study(db, STUDY, None))
    assert population.corpus_size is None
    assert "holds no documents" in population.note()
    assert {o.corpus_size for o in observations_for_run(open_study(db, STUDY, None), "a")} == {None}


def _assert_same(a: LiveDashboard, b: LiveDashboard) -> None:
    assert a.query_ids == b.query_ids
    for run in a.run_names:
        assert a.aggregates(run) == b.aggregates(run)
        assert a.runs[run].results == b.runs[run].results
    assert a.coverage() == b.coverage()
    assert a.blocking_list(None) == b.blocking_list(None)


def test_incremental_refresh_equals_a_rebuild_as_the_corpus_size_moves(tmp_path: Path, new_store_target) -> None:
    db, qids, docs = _store(new_store_target)
    state = LiveDashboard.build(open_study(db, STUDY, None))
    steps = [
        # a label inside the corpus: only its query again
        lambda: record_label(
            db, study_id=STUDY, query_id=qids[1], unit_id=docs[0], gain=3, annotator="bob"
        ),
        # more documents: a larger corpus bounds every query less tightly
        lambda: add_documents(db, CORPUS, _docs(["extra-1", "extra-2"])),
        # a label on a unit that is not a document: the size is no longer known
        lambda: record_label(
            db, study_id=STUDY, query_id=qids[2], unit_id="stray", gain=2, annotator="bob"
        ),
        # the stray unit becomes a document: known again
        lambda: add_documents(db, CORPUS, _docs(["stray"])),
    ]
    sizes = []
    for step in steps:
        step()
        state.refresh(open_study(db, state.study_id, None))
        sizes.append(study_population(open_study(db, STUDY, None)).corpus_size)
        _assert_same(state, LiveDashboard.build(open_study(db, STUDY, None)))
    assert sizes == [40, 42, None, 43]
    report = evaluate_run(open_study(db, STUDY, None), "a")
    assert state.evaluation("a").queries == report.queries


def test_reports_record_the_corpus_size_they_were_bounded_by(tmp_path: Path, new_store_target) -> None:
    from evalcore.report.from_store import report_from_store
    from evalcore.report.html import render_html
    from evalcore.report.model import render_json

    db, _, _ = _store(new_store_target)
    report = report_from_store(
        open_study(db, STUDY, "lead"),
        runs=["a", "b"],
        created_by="lead",
        measures=["R@5", "nDCG@5"],
    )
    note = "corpus size 40 (documents of corpus 'c' in the store)"
    assert len(report.notes) == 1 and report.notes[0].startswith(note)
    assert html.escape(f"note: {note}") in render_html(report)
    assert note in render_json(report)
    for run in report.runs:
        assert run.evaluation.diagnostics.notes == report.notes
    for pc in report.decisions:
        assert pc.notes == report.notes
        assert all(m.decision.verdict != "undecidable" for m in pc.measures)
    # a unit outside the corpus: the size cannot bound anything, and the report says why
    record_label(db, study_id=STUDY, query_id="q0", unit_id="stray", gain=0, annotator="x")
    unbounded = report_from_store(open_study(db, STUDY, "lead"), runs=["a", "b"], created_by="lead")
    assert len(unbounded.notes) == 1
    assert unbounded.notes[0].startswith("corpus size unknown (1 unit(s) the study's runs")


def test_a_kept_population_follows_documents_and_new_units(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, new_store_target
) -> None:
    """Kept per store file while the corpus generation holds (here for any corpus size):
    every answer equals a count made from scratch."""
    from evalcore.store import population as module

    monkeypatch.setattr(module, "_KEEP_FROM", 0)
    monkeypatch.setattr(module, "_KEPT", {})
    db, qids, docs = _store(new_store_target)

    def fresh():
        kept = dict(module._KEPT)
        module._KEPT.clear()
        try:
            return study_population(open_study(db, STUDY, None))
        finally:
            module._KEPT.clear()
            module._KEPT.update(kept)

    steps = [
        lambda: None,
        lambda: record_label(
            db, study_id=STUDY, query_id=qids[0], unit_id="stray-1", gain=1, annotator="bob"
        ),
        lambda: record_label(
            db, study_id=STUDY, query_id=qids[1], unit_id="stray-2", gain=0, annotator="bob"
        ),
        lambda: add_documents(db, CORPUS, _docs(["stray-1"])),
        lambda: add_documents(db, CORPUS, _docs(["stray-2", "more"])),
        lambda: record_label(
            db, study_id=STUDY, query_id=qids[2], unit_id=docs[3], gain=2, annotator="bob"
        ),
    ]
    seen = []
    for step in steps:
        step()
        kept = study_population(open_study(db, STUDY, None))
        assert kept == fresh()
        assert study_population(open_study(db, STUDY, None)) == kept  # the kept answer
        seen.append((kept.outside, kept.corpus_size))
    assert module._KEPT
    assert seen == [(0, 40), (1, None), (2, None), (1, None), (0, 43), (0, 43)]
