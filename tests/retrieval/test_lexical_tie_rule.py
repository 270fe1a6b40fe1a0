"""One tie rule across the product: a lexical run orders equal scores as trec_eval does
(score descending, then doc id descending), so exporting it as a TREC run file with its
original scores and evaluating that file gives the numbers of the stored run."""

import json
import random

from click.testing import CliRunner
from lexical_builders import BEFORE, lexical_store, pinned

from evalcore.cli import main
from evalcore.retrieval.workflow import execute_protocol
from evalcore.store.completeness import mark_complete
from evalcore.store.corpus import DocumentIn, add_documents
from evalcore.store.labels import record_label
from evalcore.store.runs import get_run, run_results
from evalcore.store.studies import QueryIn
from evalcore.store.study_handle import open_study
from evalcore.store.study_setup import add_queries

TWINS = [f"t{i}" for i in range(8)]  # identical documents: every score ties
#: query -> unit -> gain. Every returned unit is labeled, so every number is available.
GAINS = {
    "qt": {**{t: 0 for t in TWINS}, "t7": 3, "t1": 2},
    "qs": {**{t: 0 for t in TWINS}, "t5": 1, "t0": 4, "s1": 2, "s2": 0},
}


def _cli(*args: object):
    return CliRunner().invoke(main, [str(a) for a in args])


def _per_query(report_json: str) -> dict[str, dict]:
    return {q["query_id"]: q["metrics"] for q in json.loads(report_json)["queries"]}


def test_exported_lexical_run_with_ties_evaluates_to_the_stored_runs_numbers(tmp_path, store_target) -> None:
    db = lexical_store(store_target)
    shuffled = TWINS[:]
    random.Random(7).shuffle(shuffled)
    add_documents(db, "c", [
        *(DocumentIn(doc_id=d, title="twin", text="identical twin text", owner_org="tie",
                     created_at=BEFORE) for d in shuffled),
        DocumentIn(doc_id="s1", title="twin twin", text="twin sister text twin", owner_org="tie",
                   created_at=BEFORE),
        DocumentIn(doc_id="s2", title="sister", text="a twin sister", owner_org="tie",
                   created_at=BEFORE),
    ])
    add_queries(db, "s", [QueryIn(query_id="qt", text="identical"),
                          QueryIn(query_id="qs", text="twin sister")])
    for query, gains in GAINS.items():
        for unit, gain in gains.items():
            record_label(db, study_id="s", query_id=query, unit_id=unit, gain=gain,
                         annotator="alice")
    for query in ("q1", "q2", "q3", "q4", *GAINS):
        mark_complete(db, study_id="s", query_id=query, actor="lead")
    pinned(db, "ties", organisations=["tie"], top_k=4)
    execute_protocol(db, study_id="s", protocol_name="ties", run_name="lex", actor="tester")
    stored = run_results(open_study(db, "s", None), get_run(open_study(db, "s", None), "lex").run_id)
    qt = stored["qt"]
    assert len({score for _, score in qt}) == 1  # the ties are real
    assert [unit for unit, _ in qt] == ["t7", "t6", "t5", "t4"]  # doc id descending

    store = store_target
    out = tmp_path / "lex.run"
    exported = _cli("export", "run", "--db", store, "--study", "s", "--run", "lex", "-o", out)
    assert exported.exit_code == 0, exported.output
    assert "rank-derived" not in exported.output  # nothing rewritten
    lines = [line.split() for line in out.read_text().splitlines()]
    file_scores = {(q, u): float(s) for q, _, u, _, s, _ in lines}
    assert file_scores == {(q, u): s for q, items in stored.items() for u, s in items}

    qrels = tmp_path / "qrels"
    qrels.write_text("".join(f"{q} 0 {u} {g}\n" for q, units in GAINS.items()
                             for u, g in units.items()))
    from_file = _cli("evaluate", "--qrels", qrels, "--run", out, "--k", 4, "--complete")
    assert from_file.exit_code == 0, from_file.output
    from_store = _cli("evaluate", "--db", store, "--study", "s", "--run", "lex")
    assert from_store.exit_code == 0, from_store.output
    file_values = _per_query(from_file.stdout)
    store_values = _per_query(from_store.stdout)
    for query in GAINS:
        assert file_values[query] == store_values[query], query
    assert store_values["qt"]["precision"] == {"status": "available", "value": 0.25}
    assert store_values["qt"]["reciprocal_rank"] == {"status": "available", "value": 1.0}
