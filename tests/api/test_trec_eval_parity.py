"""Parity with trec_eval on its own test data (read in place from ../shared/data/trec_eval).

Two halves:

* the historical contract checks (section 8): with ``--complete
  --unjudged-as-nonrelevant``, per-query P@k, recall@k, ndcg_cut@k and
  recip_rank (of the run cut at k) equal trec_eval's on the queries both
  evaluate, against trec_eval's golden files (4 decimals) and pytrec_eval
  (full precision);
* the ``trec_eval=True`` switch (``--trec-eval``): every per-query value and
  the ``all`` line of trec_eval's shipped expected outputs (``out.test*``, whose
  flags are those of trec_eval's ``make quicktest``) for every measure the
  catalogue shares with trec_eval, on every file pair; the same against a
  trec_eval built from ``../shared/tools/trec_eval-src.tar.gz`` (when it
  builds; otherwise only the shipped outputs are used), including file pairs
  without a shipped output; and randomized parity with pytrec_eval.
"""

import json
import math
import random
import shutil
import subprocess
import tarfile
from collections import Counter
from pathlib import Path

import pytest
import pytrec_eval
from click.testing import CliRunner
from shared_data import TREC_EVAL_DATA, TREC_EVAL_SOURCE

import evalcore
from evalcore.cli import main
from evalcore.compute.evaluate import evaluate
from evalcore.contract.evaluation_protocol import EvalProtocol
from evalcore.contract.measures import parse_measure
from evalcore.io.trec import read_qrels, read_run
from tests.trec_observations import trec_observations

DATA = TREC_EVAL_DATA
pytestmark = pytest.mark.needs_shared
COMPAT = EvalProtocol(unjudged_as_nonrelevant=True)


def golden(name: str) -> dict[tuple[str, str], float]:
    """``measure qid value`` lines of a trec_eval output file, without the ``all`` rows."""
    out = {}
    for line in (DATA / name).read_text().splitlines():
        measure, qid, value = line.split()
        if qid != "all":
            try:
                out[(measure, qid)] = float(value)
            except ValueError:
                continue
    return out


def cli_report(qrels: str, run: str, k: int) -> dict:
    args = ["evaluate", "--qrels", str(DATA / qrels), "--run", str(DATA / run), "--k", str(k)]
    result = CliRunner().invoke(main, [*args, "--complete", "--unjudged-as-nonrelevant"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.mark.parametrize(
    ("k", "metric", "measure"),
    [(10, "precision", "P_10"), (10, "ndcg", "ndcg_cut_10"), (100, "recall", "recall_100")],
)
def test_per_query_values_equal_trec_eval_golden_output(k, metric, measure):
    expected = golden("out.test.aq")
    report = cli_report("qrels.test", "results.test", k)
    assert report["protocol"]["unjudged_as_nonrelevant"] is True
    run_queries = set(read_run(DATA / "results.test").doc_ids)
    compared = 0
    for q in report["queries"]:
        if q["query_id"] not in run_queries:
            continue  # trec_eval evaluates only the run's queries
        value = q["metrics"][metric]
        assert value["status"] == "available"
        assert value["value"] == pytest.approx(expected[(measure, q["query_id"])], abs=5e-5)
        compared += 1
    assert compared == 3


def test_tied_pairs_are_reported_for_trec_eval_data():
    report = cli_report("qrels.test", "results.test", 10)
    # Counted independently: pairs of equal scores within each query of results.test.
    counts: dict[tuple[str, str], int] = {}
    for line in (DATA / "results.test").read_text().splitlines():
        f = line.split()
        key = (f[0], repr(float(f[4])))
        counts[key] = counts.get(key, 0) + 1
    expected = sum(c * (c - 1) // 2 for c in counts.values())
    assert expected > 0
    assert report["diagnostics"]["tied_score_pairs"] == expected


def _pytrec_run(path: Path, k: int | None) -> dict[str, dict[str, float]]:
    run = read_run(path)
    out: dict[str, dict[str, float]] = {}
    for q, docs in run.doc_ids.items():
        scores = run.scores_for(q)
        top = range(len(docs)) if k is None else range(min(k, len(docs)))
        out[q] = {docs[i]: scores[i] for i in top}
    return out


@pytest.mark.parametrize(
    ("qrels", "run"),
    [("qrels.test", "results.test"), ("qrels.comment.test", "results.comment.test")],
)
@pytest.mark.parametrize("k", [1, 5, 10, 100])
def test_full_precision_parity_with_pytrec_eval(qrels, run, k):
    q = read_qrels(DATA / qrels)
    r = read_run(DATA / run)
    report = evaluate(trec_observations(q, r, k, complete=True), COMPAT)
    qrels_dict = {qid: dict(zip(q.doc_ids[qid], q.gains[qid], strict=True)) for qid in q.doc_ids}
    measures = {f"P_{k}", f"recall_{k}", f"ndcg_cut_{k}", "recip_rank"}
    evaluator = pytrec_eval.RelevanceEvaluator(qrels_dict, measures)
    full = evaluator.evaluate(_pytrec_run(DATA / run, None))
    cut = evaluator.evaluate(_pytrec_run(DATA / run, k))  # recip_rank of the run cut at k
    common = set(full)
    no_relevant: set[str] = set()
    assert common == set(q.doc_ids) & set(r.doc_ids)
    for res in report.queries:
        if res.query_id not in common:
            assert res.reasons == ["missing_reference"] or res.query_id not in r.doc_ids
            continue
        m = res.metrics
        assert m["precision"].value == pytest.approx(full[res.query_id][f"P_{k}"], abs=1e-12)
        rr = cut[res.query_id]["recip_rank"]
        assert m["reciprocal_rank"].value == pytest.approx(rr, abs=1e-12)
        if not any(g >= 1 for g in q.gains[res.query_id]):
            # trec_eval prints 0; the contract says recall/nDCG are undefined without a
            # relevant unit (a documented divergence, not a compatibility gap).
            assert m["recall"].reasons == m["ndcg"].reasons == ["no_relevant_units"]
            no_relevant.add(res.query_id)
            continue
        assert m["recall"].value == pytest.approx(full[res.query_id][f"recall_{k}"], abs=1e-12)
        assert m["ndcg"].value == pytest.approx(full[res.query_id][f"ndcg_cut_{k}"], abs=1e-12)
    assert len(no_relevant) <= 1  # only one judged query of these files lacks a relevant doc


def test_comment_files_p10_mean_over_evaluated_queries_equals_trec_eval():
    q = read_qrels(DATA / "qrels.comment.test")
    r = read_run(DATA / "results.comment.test")
    report = evaluate(trec_observations(q, r, 10, complete=True), COMPAT)
    evaluated = [
        res for res in report.queries if res.query_id in q.doc_ids and res.query_id in r.doc_ids
    ]
    assert len(evaluated) == 31  # trec_eval's num_q
    p10 = sum(res.metrics["precision"].value for res in evaluated) / len(evaluated)
    assert p10 == pytest.approx(0.7710, abs=5e-5)
    # The other 270 run queries have no judgments: the contract makes the aggregate
    # unavailable instead of averaging the 31 judged ones.
    agg = report.aggregates["precision"]
    assert agg.status == "unavailable" and agg.reasons == {"missing_reference": 270}


@pytest.mark.parametrize("k", [3, 10])
def test_cli_file_path_equals_observation_path(k):
    from evalcore.api.result import report_json
    from tests.trec_observations import trec_diagnostics

    q = read_qrels(DATA / "qrels.comment.test")
    r = read_run(DATA / "results.comment.test")
    via_observations = evaluate(
        trec_observations(q, r, k, complete=False), COMPAT, diagnostics=trec_diagnostics(q, r)
    )
    args = ["evaluate", "--qrels", str(DATA / "qrels.comment.test")]
    args += ["--run", str(DATA / "results.comment.test"), "--k", str(k)]
    result = CliRunner().invoke(main, [*args, "--unjudged-as-nonrelevant"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == json.loads(report_json(via_observations))


# --- the trec_eval switch against trec_eval's outputs ---------------------------------------

#: Depth that covers every ranking of the test files: trec_eval's recip_rank and map
#: (no cutoff) are RR and AP at this cutoff.
FULL = 1000


def trec_eval_lines(text: str) -> dict[tuple[str, str], str]:
    """``measure qid value`` lines of trec_eval output (the ``all`` rows included)."""
    out = {}
    for line in text.splitlines():
        measure, qid, value = line.split()
        out[(measure, qid)] = value
    return out


def catalogue_name(te_measure: str, rel: int | None) -> str | None:
    """The catalogue measure that equals trec_eval's ``te_measure`` (None: not in the catalogue).

    ``P_k`` -> ``P@k``, ``recall_k`` -> ``R@k``, ``ndcg_cut_k`` -> ``nDCG@k``,
    ``map_cut_k`` -> ``AP@k``, ``success_k`` -> ``Success@k``, ``recip_rank`` and
    ``map`` -> ``RR`` and ``AP`` at the full depth; ``rel`` is trec_eval's ``-l``.
    """
    families = {"P": "P", "recall": "R", "ndcg_cut": "nDCG", "map_cut": "AP", "success": "Success"}
    if te_measure in ("recip_rank", "map"):
        family, k = ("RR" if te_measure == "recip_rank" else "AP"), FULL
    else:
        head, _, cutoff = te_measure.rpartition("_")
        if head not in families or not cutoff.isdigit():
            return None
        family, k = families[head], int(cutoff)
    param = f"(rel={rel})" if rel is not None and family != "nDCG" else ""
    return str(parse_measure(f"{family}{param}@{k}"))


def top(run_path: Path, depth: int) -> dict[str, dict[str, float]]:
    """A run cut at ``depth`` per query after trec_eval's ordering (trec_eval's ``-M``)."""
    run = read_run(run_path, extra_columns=True)
    return {
        q: dict(zip(docs[:depth], run.scores_for(q)[:depth], strict=True))
        for q, docs in run.doc_ids.items()
    }


def compare(expected: dict[tuple[str, str], str], *, qrels, run, rel=None, all_queries=False,
            gain_map=None) -> int:
    """Compare ``expected`` trec_eval lines with ``evalcore.evaluate(..., trec_eval=True)``.

    Every line whose measure is in the catalogue is compared at 4 decimals, per
    query and on the ``all`` line; ``num_q`` is compared with the query count.
    Returns the number of values compared.
    """
    names = {m: catalogue_name(m, rel) for m, _ in expected}
    wanted = sorted({n for n in names.values() if n is not None})
    assert wanted, "no measure in common"
    result = evalcore.evaluate(
        qrels, run, measures=wanted, trec_eval=True, trec_eval_all_queries=all_queries,
        gain_map=gain_map,
    )
    assert result.report.protocol.trec_eval is True
    queries = {q.query_id: q for q in result.report.queries}
    judged = {qid for (_, qid) in expected if qid != "all"}
    if judged:  # per-query output (-q): the same queries, no more
        assert set(queries) == judged
    assert int(expected[("num_q", "all")]) == len(queries)
    compared = 0
    for (measure, qid), text in expected.items():
        name = names[measure]
        if name is None:
            continue
        if qid == "all":
            agg = result.report.aggregates[name]
            assert agg.status == "available", (measure, agg)
            value = agg.value
        else:
            metric = queries[qid].metrics[name]
            assert metric.status == "available", (measure, qid, metric)
            value = metric.value
        assert abs(value - float(text)) <= 5e-5 + 1e-12, (measure, qid, value, text)
        compared += 1
    return compared


#: trec_eval's expected outputs and the flags ``make quicktest`` made them with.
GOLDEN = {
    # file: (qrels, run, -l, -c, -M, gain map)
    "out.test": ("qrels.test.with-comments", "results.test", None, False, None, None),
    "out.test.a": ("qrels.test", "results.test", None, False, None, None),
    "out.test.aq": ("qrels.test", "results.test", None, False, None, None),
    "out.test.aqc": ("qrels.test", "results.trunc", None, True, None, None),
    "out.test.aqcM": ("qrels.test", "results.trunc", None, True, 100, None),
    "out.test.aql": ("qrels.rel_level", "results.test", 2, False, None, {-1: 0}),
    "out.test.meas_params": ("qrels.test", "results.test", None, False, None, None),
    "out.comment.test": ("qrels.comment.test", "results.comment.test", None, False, None, None),
}
#: Values compared per file: every line of a catalogue measure (P_k, recall_k, ndcg_cut_k,
#: map_cut_k, success_k, recip_rank, map), per query and on the ``all`` line.
GOLDEN_COUNT = {"out.test": 11, "out.test.a": 41, "out.test.aq": 164, "out.test.aqc": 164,
                "out.test.aqcM": 164, "out.test.aql": 164, "out.test.meas_params": 44,
                "out.comment.test": 11}


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_trec_eval_switch_reproduces_trec_eval_expected_outputs(name):
    qrels, run, rel, all_queries, max_docs, gain_map = GOLDEN[name]
    expected = trec_eval_lines((DATA / name).read_text())
    if name == "out.test.meas_params":
        # ndcg_cut.23.4 is read by trec_eval as 23 (atol); the other lines are other measures.
        expected = {key: v for key, v in expected.items() if key[0] != "num_q"}
        expected[("num_q", "all")] = "3"
    run_input = DATA / run if max_docs is None else top(DATA / run, max_docs)
    compared = compare(expected, qrels=DATA / qrels, run=run_input, rel=rel,
                       all_queries=all_queries, gain_map=gain_map)
    assert compared == GOLDEN_COUNT[name]


def test_judgment_groups_average_like_trec_eval_qrels_jg(tmp_path):
    """qrels.123 holds three judgment groups (its second column): trec_eval's P_avgjg_k and
    map_avgjg are P@k and AP averaged over the groups, each group evaluated as its own qrels
    (its -1 labels, "in the pool, unjudged", and its two 6s mapped into 0..4)."""
    groups: dict[str, list[str]] = {}
    for line in (DATA / "qrels.123").read_text().splitlines():
        groups.setdefault(line.split()[1], []).append(line)
    expected = trec_eval_lines((DATA / "out.test.qrels_jg").read_text())
    measures = {m: m.replace("_avgjg", "") for m, _ in expected if m.startswith(("P_avgjg", "map"))}
    names = {m: catalogue_name(te, None) for m, te in measures.items()}
    per_group = []
    for jg, lines in sorted(groups.items()):
        path = tmp_path / f"qrels.jg{jg}"
        path.write_text("\n".join(lines) + "\n")
        per_group.append(evalcore.evaluate(path, DATA / "results.test", gain_map={-1: 0, 6: 4},
                                           measures=sorted(set(names.values())), trec_eval=True))
    assert len(per_group) == 3
    compared = 0
    for (measure, qid), text in expected.items():
        if measure not in names:
            continue
        if qid == "all":
            values = [r.report.aggregates[names[measure]].value for r in per_group]
        else:
            values = [
                next(q for q in r.report.queries if q.query_id == qid).metrics[names[measure]].value
                for r in per_group
            ]
        assert abs(sum(values) / 3 - float(text)) <= 5e-5 + 1e-12, (measure, qid)
        compared += 1
    assert compared == 40  # (9 P_avgjg_k + map_avgjg) x (3 queries + all)


def test_cli_trec_eval_switch_on_the_comment_files():
    """qrels.comment.test + results.comment.test: trec_eval evaluates 31 queries (one has 36
    labels, all 0, and gets 0), ignoring 270 run queries without qrels."""
    args = ["evaluate", "--qrels", str(DATA / "qrels.comment.test"),
            "--run", str(DATA / "results.comment.test"), "--trec-eval",
            "-m", "P@10", "-m", "R@1000", "-m", "nDCG@10", "-m", "MRR@100"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["protocol"]["trec_eval"] is True
    assert len(report["queries"]) == 31
    assert list(report["aggregates"]) == ["P@10", "R@1000", "nDCG@10", "RR@100"]
    expected = trec_eval_lines((DATA / "out.comment.test").read_text())
    assert report["aggregates"]["P@10"]["value"] == pytest.approx(
        float(expected[("P_10", "all")]), abs=5e-5)
    assert report["aggregates"]["RR@100"]["value"] == pytest.approx(
        float(expected[("recip_rank", "all")]), abs=5e-5)
    zero = [q for q in report["queries"] if q["metrics"]["R@1000"]["value"] == 0.0
            and q["metrics"]["nDCG@10"]["value"] == 0.0]
    assert zero, "the all-zero query is valued 0, as trec_eval values it"
    assert any("270 run queries without qrels ignored" in n
               for n in report["diagnostics"]["notes"])
    table = CliRunner().invoke(main, [*args, "--format", "table"])
    assert table.exit_code == 0, table.output
    assert "trec_eval: ON" in table.stdout
    assert "RR@100" in table.stdout and "MRR@" not in table.stdout and "nDCG@10" in table.stdout


def test_cli_trec_eval_reads_results_trunc_and_all_queries_is_dash_c():
    base = ["evaluate", "--qrels", str(DATA / "qrels.test"), "--run", str(DATA / "results.trunc"),
            "-m", "P@10"]
    refused = CliRunner().invoke(main, [*base, "--complete", "--unjudged-as-nonrelevant"])
    assert refused.exit_code == 2 and "got 9" in refused.stderr
    plain = CliRunner().invoke(main, [*base, "--trec-eval"])
    assert plain.exit_code == 0, plain.output
    report = json.loads(plain.stdout)
    assert [q["query_id"] for q in report["queries"]] == ["301", "303"]
    every = CliRunner().invoke(main, [*base, "--trec-eval", "--trec-eval-all-queries"])
    report = json.loads(every.stdout)
    assert [q["query_id"] for q in report["queries"]] == ["301", "302", "303"]
    assert report["queries"][1]["metrics"]["P@10"] == {"status": "available", "value": 0.0}
    expected = trec_eval_lines((DATA / "out.test.aqc").read_text())
    assert report["aggregates"]["P@10"]["value"] == pytest.approx(
        float(expected[("P_10", "all")]), abs=5e-5)
    alone = CliRunner().invoke(main, [*base, "--trec-eval-all-queries"])
    assert alone.exit_code == 2 and "give --trec-eval too" in alone.output


# --- against a trec_eval built from source --------------------------------------------------


@pytest.fixture(scope="session")
def trec_eval_binary(tmp_path_factory) -> Path | None:
    """trec_eval built from the shipped source, or None when it cannot be built here."""
    if not TREC_EVAL_SOURCE.is_file() or shutil.which("make") is None:
        return None
    where = tmp_path_factory.mktemp("trec_eval_build")
    with tarfile.open(TREC_EVAL_SOURCE) as archive:
        archive.extractall(where, filter="data")
    source = next(p.parent for p in where.rglob("Makefile"))
    built = subprocess.run(["make", "-C", str(source), "trec_eval"], capture_output=True,
                           timeout=300, check=False)
    binary = source / "trec_eval"
    return binary if built.returncode == 0 and binary.is_file() else None


#: Measures asked of the built trec_eval (every catalogue measure it has, several cutoffs).
BINARY_MEASURES = ["-m", "P.1,3,5,10,20,30,100,500", "-m", "recall.5,10,50,100,1000",
                   "-m", "ndcg_cut.1,5,10,20,100,1000", "-m", "map_cut.5,10,100,1000",
                   "-m", "success.1,3,5,10", "-m", "recip_rank", "-m", "map", "-m", "num_q"]
#: (qrels, run, -l, -c, gain map): every usable file pair, with and without -c.
BINARY_CASES = [
    ("qrels.test", "results.test", None, False, None),
    ("qrels.test", "results.test", 2, False, None),
    ("qrels.test.with-comments", "results.test", None, True, None),
    ("qrels.comment.test", "results.comment.test", None, False, None),
    ("qrels.comment.test", "results.comment.test", None, True, None),
    ("qrels.test", "results.trunc", None, True, None),
    ("qrels.rel_level", "results.test", 2, False, {-1: 0}),
    ("qrels.rel_level", "results.test", 3, True, {-1: 0}),
    ("qrels-302.test", "results-302.test", None, False, None),
    ("qrels-302.test", "results.test", None, True, None),
]


@pytest.mark.parametrize("case", BINARY_CASES, ids=lambda c: "+".join(map(str, c[:4])))
def test_trec_eval_switch_equals_trec_eval_built_from_source(trec_eval_binary, case):
    if trec_eval_binary is None:
        pytest.skip("trec_eval could not be built here; the shipped outputs are compared instead")
    qrels, run, rel, all_queries, gain_map = case
    flags = ["-q", *BINARY_MEASURES, *(["-c"] if all_queries else []),
             *([f"-l{rel}"] if rel else [])]
    done = subprocess.run([str(trec_eval_binary), *flags, str(DATA / qrels), str(DATA / run)],
                          capture_output=True, text=True, timeout=120, check=True)
    expected = trec_eval_lines(done.stdout)
    compared = compare(expected, qrels=DATA / qrels, run=DATA / run, rel=rel,
                       all_queries=all_queries, gain_map=gain_map)
    # 29 values per query and on the all line: P x8, recall x5, ndcg_cut x6, map_cut x4,
    # success x4, recip_rank, map.
    assert compared == 29 * (1 + len({q for _, q in expected if q != "all"}))


def test_built_trec_eval_prints_the_shipped_outputs(trec_eval_binary):
    """The build is trustworthy: it reproduces a shipped expected output byte for byte."""
    if trec_eval_binary is None:
        pytest.skip("trec_eval could not be built here; the shipped outputs are compared instead")
    done = subprocess.run(
        [str(trec_eval_binary), "-m", "all_trec", "-q", "-c", str(DATA / "qrels.test"),
         str(DATA / "results.trunc")], capture_output=True, text=True, timeout=120, check=True)
    assert done.stdout == (DATA / "out.test.aqc").read_text()


# --- randomized parity with pytrec_eval ------------------------------------------------------


def random_collection(rng: random.Random):
    """Qrels and a run with ties, unjudged documents, queries on one side only and queries
    whose labels are all 0."""
    docs = [f"d{i:02d}" for i in range(30)]
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in (f"q{i}" for i in range(rng.randint(1, 9))):
        side = rng.random()
        if side > 0.1:
            judged = rng.sample(docs, rng.randint(1, 15))
            zeros = rng.random() < 0.15
            qrels[q] = {d: 0 if zeros else rng.choice([0, 0, 1, 1, 2, 3, 4]) for d in judged}
        if side < 0.9:
            returned = rng.sample(docs, rng.randint(1, 25))
            run[q] = {d: rng.choice([0.5, 1.0, 1.5, 2.0, 2.25, 3.0]) for d in returned}
    if not qrels:
        qrels["q0"] = {"d00": 1}
    if not set(qrels) & set(run):  # at least one query that both evaluate
        run[next(iter(qrels))] = {"d00": 1.0}
    return qrels, run


def trec_order(docs: dict[str, float]) -> list[str]:
    """trec_eval's ranking, written independently: score descending, then doc ID descending."""
    return [d for d, _ in sorted(docs.items(), key=lambda item: (item[1], item[0]), reverse=True)]


@pytest.mark.parametrize("seed", range(40))
def test_randomized_parity_with_pytrec_eval(seed):
    rng = random.Random(seed)
    qrels, run = random_collection(rng)
    k = rng.choice([1, 2, 3, 5, 10, 20])
    rel = rng.choice([1, 1, 2, 3])
    as_param = seed % 2 == 0  # rel= in the measure names, or the protocol's threshold
    p = f"(rel={rel})" if as_param and rel != 1 else ""
    ours_names = {
        f"P_{k}": f"P{p}@{k}", f"recall_{k}": f"R{p}@{k}", f"ndcg_cut_{k}": f"nDCG@{k}",
        f"map_cut_{k}": f"AP{p}@{k}", f"success_{k}": f"Success{p}@{k}", "recip_rank": f"RR{p}@{k}",
    }
    ours_names = {te: str(parse_measure(n)) for te, n in ours_names.items()}
    result = evalcore.evaluate(qrels, run, measures=list(ours_names.values()), trec_eval=True,
                               relevance_threshold=1 if as_param else rel)
    evaluator = pytrec_eval.RelevanceEvaluator(
        qrels, {f"P_{k}", f"recall_{k}", f"ndcg_cut_{k}", f"map_cut_{k}", f"success_{k}"},
        relevance_level=rel)
    expected = evaluator.evaluate(run)
    cut = {q: {d: docs[d] for d in trec_order(docs)[:k]} for q, docs in run.items()}
    rr = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}, relevance_level=rel).evaluate(cut)
    ours = {q.query_id: q.metrics for q in result.report.queries}
    assert set(ours) == set(expected) == set(qrels) & set(run)
    for qid, metrics in ours.items():
        for te, name in ours_names.items():
            want = rr[qid][te] if te == "recip_rank" else expected[qid][te]
            assert metrics[name].status == "available"
            assert metrics[name].value == pytest.approx(want, abs=1e-12), (seed, qid, te)
    for te, name in ours_names.items():
        values = [(rr if te == "recip_rank" else expected)[q][te] for q in ours]
        assert result.aggregates[name] == pytest.approx(math.fsum(values) / len(values), abs=1e-12)
    tied = sum(c * (c - 1) // 2 for docs in run.values()
               for c in Counter(docs.values()).values())
    assert result.report.diagnostics.tied_score_pairs == tied

