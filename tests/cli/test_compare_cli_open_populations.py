"""``evalcore compare`` on a real-collection shape: a corpus held in the store, no query
marked complete, both runs' top k labeled (contract section 12).

nDCG@k, R@k and AP@k are never undecidable there: each comparison is decided or
undecided with a finite interval, and here (one run ranks relevant documents far more
often) decided. The corpus size used is recorded beside the verdicts.
"""

import json
import math
import random
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner

from evalcore.cli import main
from evalcore.store.connection import open_store
from evalcore.store.corpus import DocumentIn, add_documents
from evalcore.store.labels import record_label
from evalcore.store.runs import add_run
from evalcore.store.studies import QueryIn, StudyIn
from evalcore.store.study_setup import add_queries, create_study

K = 10
MEASURES = ("nDCG@10", "R@10", "AP@10")
N_DOCS = 300


@pytest.fixture(scope="module")
def open_store_path(tmp_path_factory) -> Path:
    """Two runs over a 300-document corpus; every document in either run's top 10 is
    labeled; no completeness claim anywhere."""
    rng = random.Random(11)
    path = tmp_path_factory.mktemp("open") / "open.db"
    db = open_store(path)
    docs = [f"doc-{i:04d}" for i in range(N_DOCS)]
    when = datetime(2026, 1, 1, tzinfo=UTC)
    add_documents(db, "corpus", [DocumentIn(doc_id=d, text=d, created_at=when) for d in docs])
    create_study(db, StudyIn(study_id="s", name="open", corpus_id="corpus"))
    queries = [f"q{i:02d}" for i in range(24)]
    add_queries(db, "s", [QueryIn(query_id=q, text=q) for q in queries])
    gains = {(q, d): rng.choice((1, 2, 3)) for q in queries for d in rng.sample(docs, 25)}
    labeled: set[tuple[str, str]] = set()
    for run, hit_rate in (("strong", 0.8), ("weak", 0.2)):
        rows = []
        for q in queries:
            relevant = [d for d in docs if (q, d) in gains]
            other = [d for d in docs if (q, d) not in gains]
            ranked: list[str] = []
            while len(ranked) < 2 * K:
                pick = rng.choice(relevant if rng.random() < hit_rate else other)
                if pick not in ranked:
                    ranked.append(pick)
            rows += [(q, rank, d, 1.0 / rank) for rank, d in enumerate(ranked, 1)]
        add_run(db, study_id="s", name=run, source="imported", k=K, results=rows)
        for q, rank, d, _ in rows:
            if rank <= K and (q, d) not in labeled:
                labeled.add((q, d))
                record_label(
                    db,
                    study_id="s",
                    query_id=q,
                    unit_id=d,
                    gain=gains.get((q, d), 0),
                    annotator="alice",
                )
    db.conn.close()
    return path


def _compare(path: Path, *extra: str):
    # the baseline first: differences are strong (the candidate) - weak
    args = ["compare", "--db", str(path), "--study", "s", "--runs", "weak,strong", "--queue", "0"]
    for m in MEASURES:
        args += ["-m", m]
    return CliRunner().invoke(main, [*args, *extra])


def test_json_verdicts_are_decided_with_finite_intervals(open_store_path: Path) -> None:
    result = _compare(open_store_path, "--format", "json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert (data["candidate"], data["baseline"]) == ("strong", "weak")
    assert [d["decision"]["measure"] for d in data["measures"]] == list(MEASURES)
    assert data["notes"] == [
        f"corpus size {N_DOCS} (documents of corpus 'corpus' in the store): bounds R, "
        "nDCG and AP where a relevant set is not declared complete"
    ]
    for item in data["measures"]:
        decision = item["decision"]
        assert decision["verdict"] != "undecidable", decision["summary"]
        assert decision["verdict"] in {"a_better", "b_better", "tied", "undecided"}
        assert math.isfinite(decision["lower"]) and math.isfinite(decision["upper"])
        assert decision["lower"] <= decision["upper"]
        # the strong run ranks relevant documents four times as often
        assert decision["verdict"] == "a_better", decision["summary"]


def test_table_shows_each_interval_and_the_corpus_size(open_store_path: Path) -> None:
    result = _compare(open_store_path)
    assert result.exit_code == 0, result.output
    heads = [line for line in result.output.splitlines() if line and not line.startswith(" ")]
    for measure in MEASURES:
        head = next(line for line in heads if line.startswith(f"{measure}: "))
        assert "undecidable" not in head and "cannot be decided" not in head
        assert re.search(
            r"decided: better — mean candidate − baseline: [−+]\d\.\d{3} to "
            r"[−+]\d\.\d{3}",
            head,
        ), head
    assert f"note: corpus size {N_DOCS} " in result.output
