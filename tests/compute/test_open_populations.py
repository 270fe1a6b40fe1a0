"""Contract section 12 in the metric computer: bounds without a completeness claim.

Worked examples with the numbers written out; the properties over every completion are in
tests/compute/test_measure_bounds.py (against tests/oracle.py).
"""

import json
import math

import pytest
from click.testing import CliRunner

from evalcore.cli import main
from evalcore.compute.batch import ObservationBatch
from evalcore.compute.evaluate import compute, evaluate
from evalcore.contract.measures import parse_measure
from evalcore.contract.observation import Observation

MEASURES = [parse_measure(m) for m in ("P@3", "R@3", "nDCG@3", "AP@3", "RR@3", "Success@3",
                                       "RBP(p=0.8)@3", "Judged@3")]


def obs(returned, labels, *, complete=False, corpus_size=None, query_id="q", k=3):
    return Observation(query_id=query_id, k=k, returned_ids=list(returned),
                       labels=[{"id": i, "gain": g} for i, g in labels],
                       population_complete=complete, corpus_size=corpus_size)


def metrics(o):
    return evaluate([o], measures=MEASURES).queries[0].metrics


def dcg(gains):
    return sum(g / math.log2(i + 1) for i, g in enumerate(gains, start=1))


def test_fully_labeled_top_on_an_open_population_bounds_recall_ndcg_and_ap():
    # A(2) X(0) B(1) returned, C(3) known elsewhere; the corpus holds 10 units: 6 of them
    # have no label and none is in the top 3, so U_out = 6.
    m = metrics(obs(["A", "X", "B"], [("A", 2), ("X", 0), ("B", 1), ("C", 3)], corpus_size=10))
    for name in ("R@3", "nDCG@3", "AP@3"):
        assert m[name].reasons == ["population_incomplete"], name
    # R: 2 of |R| = 3 with no outside unit relevant, of 3 + 6 with all of them.
    assert (m["R@3"].lower, m["R@3"].upper) == (pytest.approx(2 / 9), pytest.approx(2 / 3))
    # AP: (1 + 2/3) / |R| over the same |R| range.
    assert (m["AP@3"].lower, m["AP@3"].upper) == (pytest.approx(5 / 27), pytest.approx(5 / 9))
    # nDCG: IDCG between the known ideal and min(k, U_out) = 3 outside units of gain 4.
    known = dcg([2, 0, 1])
    assert m["nDCG@3"].lower == pytest.approx(known / dcg([4, 4, 4]))
    assert m["nDCG@3"].upper == pytest.approx(known / dcg([3, 2, 1]))
    # measures of the top k alone stay available
    assert m["P@3"].value == pytest.approx(2 / 3) and m["RR@3"].value == 1.0


def test_without_a_corpus_size_recall_and_ap_fall_to_zero_and_ndcg_stays_finite():
    m = metrics(obs(["A", "X", "B"], [("A", 2), ("X", 0), ("B", 1), ("C", 3)]))
    assert (m["R@3"].lower, m["R@3"].upper) == (0.0, pytest.approx(2 / 3))
    assert (m["AP@3"].lower, m["AP@3"].upper) == (0.0, pytest.approx(5 / 9))
    assert m["nDCG@3"].lower == pytest.approx(dcg([2, 0, 1]) / dcg([4, 4, 4]))


def test_a_small_corpus_leaves_few_outside_units():
    # 5 units: 4 labeled, so U_out = 1 (and IDCG@3 can gain only one unit of gain 4).
    m = metrics(obs(["A", "X", "B"], [("A", 2), ("X", 0), ("B", 1), ("C", 3)], corpus_size=5))
    assert m["R@3"].lower == pytest.approx(2 / 4)
    assert m["nDCG@3"].lower == pytest.approx(dcg([2, 0, 1]) / dcg([4, 3, 2]))
    # A corpus no larger than the labels: no outside unit, the bounds of a complete population.
    closed = metrics(obs(["A", "X", "B"], [("A", 2), ("X", 0), ("B", 1), ("C", 3)],
                         corpus_size=4))
    assert closed["R@3"].lower == closed["R@3"].upper == pytest.approx(2 / 3)


def test_unlabeled_returned_units_are_not_counted_twice_as_outside_units():
    # Y unlabeled in the top 3; corpus 6: 4 labeled, Y inside, so U_out = 1.
    m = metrics(obs(["A", "Y", "B"], [("A", 2), ("X", 0), ("B", 1), ("C", 3)], corpus_size=6))
    # lowest: Y non-relevant, the one outside unit relevant: 2 / 4; highest: Y relevant: 3 / 4.
    assert (m["R@3"].lower, m["R@3"].upper) == (pytest.approx(2 / 4), pytest.approx(3 / 4))


def test_known_relevant_units_all_unlabeled_in_the_cut_still_bounded():
    # The case: no relevant unit known, but returned units may be relevant.
    m = metrics(obs(["Y", "Z", "N"], [("N", 0)], corpus_size=20))
    assert "no_relevant_units" in m["R@3"].reasons
    assert m["R@3"].lower == 0.0 and m["R@3"].upper == 1.0
    assert m["nDCG@3"].lower == 0.0 and m["nDCG@3"].upper > 0.5
    # complete, nothing relevant, nothing unknown: no completion defines R: no bounds
    none = metrics(obs(["N"], [("N", 0)], complete=True))
    assert none["R@3"].lower is None and none["nDCG@3"].lower is None


def test_a_query_with_nothing_returned_has_nothing_to_label():
    q = evaluate([obs([], [])], measures=MEASURES).queries[0]
    assert q.valid and q.reasons == []  # no missing_reference: nothing to label
    for name in ("P@3", "RR@3", "Success@3", "RBP(p=0.8)@3", "Judged@3"):
        assert q.metrics[name].available and q.metrics[name].value == 0.0, name
    for name in ("R@3", "nDCG@3", "AP@3"):  # 0 wherever an outside unit makes them defined
        mv = q.metrics[name]
        assert sorted(mv.reasons) == ["no_relevant_units", "population_incomplete"], name
        assert (mv.lower, mv.upper) == (0.0, 0.0), name
    # with labels it was a real zero already; with something returned and no label it is
    # still missing_reference
    assert evaluate([obs([], [("A", 2)])], measures=MEASURES).queries[0].metrics[
        "P@3"].value == 0.0
    assert evaluate([obs(["A"], [])], measures=MEASURES).queries[0].reasons == [
        "missing_reference"]


def test_aggregate_bounds_are_the_mean_of_open_population_bounds():
    a = obs(["A", "X", "B"], [("A", 2), ("X", 0), ("B", 1), ("C", 3)], corpus_size=10)
    b = obs(["A"], [("A", 1)], complete=True, query_id="q2")
    report = evaluate([a, b], measures=[parse_measure("R@3")])
    agg = report.aggregates["R@3"]
    assert agg.n_missing == 1 and agg.reasons == {"population_incomplete": 1}
    assert (agg.lower, agg.upper) == (pytest.approx((2 / 9 + 1) / 2), pytest.approx((2 / 3 + 1) / 2))


def test_corpus_size_per_query_through_the_batch():
    observations = [obs(["A", "X", "B"], [("A", 2), ("X", 0), ("B", 1), ("C", 3)],
                        query_id=f"q{i}") for i in range(3)]
    batch = ObservationBatch.from_observations(observations, min_depth=3)
    sized = batch.with_corpus_size([10, None, 5])
    lower, _ = compute(sized, measures=[parse_measure("R@3")]).bounds("R@3")
    assert lower.tolist() == pytest.approx([2 / 9, 0.0, 2 / 4])
    with pytest.raises(ValueError, match="3 queries"):
        batch.with_corpus_size([10, 5])
    with pytest.raises(ValueError, match=">= 0"):
        batch.with_corpus_size(-1)


def test_corpus_size_in_observation_jsonl_round_trips(tmp_path):
    from observation_strategies import write_observations

    from evalcore.io.observations_jsonl import read_observations

    o = obs(["A"], [("A", 1)], corpus_size=1400)
    path = tmp_path / "o.jsonl"
    write_observations(path, [o])
    assert json.loads(path.read_text())["corpus_size"] == 1400
    assert read_observations(path)[0].corpus_size == 1400
    assert "corpus_size" not in obs(["A"], [("A", 1)]).model_dump(exclude_none=True)


def _trec(tmp_path):
    qrels = tmp_path / "qrels.txt"
    run = tmp_path / "run.txt"
    qrels.write_text("q1 0 A 2\nq1 0 C 3\n")
    run.write_text("q1 Q0 A 1 3 r\nq1 Q0 X 2 2 r\nq1 Q0 B 3 1 r\n")
    return qrels, run


def test_cli_corpus_size_bounds_recall_from_trec_files(tmp_path):
    qrels, run = _trec(tmp_path)
    runner = CliRunner()
    args = ["evaluate", "--qrels", str(qrels), "--run", str(run), "-m", "R@3"]
    open_ = json.loads(runner.invoke(main, args).stdout)
    assert open_["queries"][0]["metrics"]["R@3"]["lower"] == 0.0
    sized = runner.invoke(main, [*args, "--corpus-size", "6"])
    assert sized.exit_code == 0, sized.output
    report = json.loads(sized.stdout)
    # 6 units, 2 labeled, X and B unlabeled in the top 3: U_out = 2; A relevant, X and B not.
    mv = report["queries"][0]["metrics"]["R@3"]
    assert (mv["lower"], mv["upper"]) == (pytest.approx(1 / 4), pytest.approx(3 / 4))
    assert any("corpus size 6" in note for note in report["diagnostics"]["notes"])
    table = runner.invoke(main, [*args, "--corpus-size", "6", "--format", "table"]).stdout
    assert "(0.2500..0.7500)" in table and "corpus size 6 (--corpus-size)" in table


def test_cli_corpus_size_replaces_the_observations_own(tmp_path):
    path = tmp_path / "o.jsonl"
    path.write_text(obs(["A", "X", "B"], [("A", 2), ("X", 0), ("B", 1), ("C", 3)],
                        corpus_size=5).model_dump_json(exclude_none=True) + "\n")
    runner = CliRunner()
    args = ["evaluate", "--observations", str(path), "-m", "R@3"]
    own = json.loads(runner.invoke(main, args).stdout)["queries"][0]["metrics"]["R@3"]
    assert own["lower"] == pytest.approx(2 / 4)
    given = json.loads(runner.invoke(main, [*args, "--corpus-size", "10"]).stdout)
    assert given["queries"][0]["metrics"]["R@3"]["lower"] == pytest.approx(2 / 9)


def test_cli_corpus_size_is_refused_for_a_store(tmp_path):
    from store_fixtures import new_store

    new_store(tmp_path)
    db = next(tmp_path.glob("*.db"))
    result = CliRunner().invoke(main, ["evaluate", "--db", str(db), "--study", "s", "--run", "A",
                                       "--corpus-size", "10"])
    assert result.exit_code == 2
    assert "--corpus-size is for files" in result.output
