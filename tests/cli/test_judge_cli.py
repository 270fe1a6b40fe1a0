"""``evalcore judge`` end to end against a stand-in endpoint (a small HTTP server in the
test): the count before starting, confirmation, --limit, resuming, the key kept out of the
output and the store, failures counted, and the answers stored as automatic judgments
that no evaluate or compare output reads."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from judge_endpoint import Reply, stand_in
from store_fixtures import built_demo

import evalcore.cli.judge as judge_cli
from evalcore.cli import main
from evalcore.demo.study import DEMO_STUDY_ID
from evalcore.io import clock
from evalcore.store.automatic_labels import automatic_labels, automatic_sources
from evalcore.store.connection import open_store
from evalcore.store.corpus import get_document
from evalcore.store.information_needs import InformationNeed, set_information_need
from evalcore.store.query_reads import query_texts
from evalcore.store.runs import list_runs
from evalcore.store.studies import get_study
from evalcore.store.study_handle import open_study

KEY = "sk-SECRET-judge-7731"


@pytest.fixture
def store(built_store_target, tmp_path: Path) -> Path:
    path = built_store_target("demo", built_demo, "d.sqlite")
    return path


def judge(path: Path, url: str, *args: str, yes: bool = True) -> Result:
    argv = ["judge", "--db", str(path), "--study", DEMO_STUDY_ID, "--endpoint", url,
            "--model", "umbrela-test", "--rate", "1000", *args]
    return CliRunner().invoke(main, argv + (["--yes"] if yes else []))


def _stored(path: Path, source: str = "judge:umbrela-test") -> dict[tuple[str, str], int]:
    db = open_store(path)
    try:
        return automatic_labels(open_study(db, DEMO_STUDY_ID, None)).get(source, {})
    finally:
        db.conn.close()


@pytest.mark.sqlite_only
def test_limit_then_resume_then_nothing_left(store: Path, monkeypatch: pytest.MonkeyPatch
                                             ) -> None:
    monkeypatch.setenv("RELEVANCE_LEDGER_JUDGE_KEY", KEY)
    with stand_in(lambda n, _: Reply(content="##final score: 1")) as end:
        first = judge(store, end.url, "--limit", "7")
        assert first.exit_code == 0, first.output
        assert "7 call(s) to" in first.output and "left for a later run" in first.output
        assert "calls made: 7" in first.output and "answers stored: 7" in first.output
        assert len(end.seen) == 7
        stored = _stored(store)
        assert len(stored) == 7 and set(stored.values()) == {1}
        second = judge(store, end.url)
        assert second.exit_code == 0, second.output
        assert "7 already judged by judge:umbrela-test" in second.output
        rest = len(end.seen) - 7
        assert rest > 50 and f"answers stored: {rest}" in second.output
        judged_units = [(s.body["messages"][-1]["content"]) for s in end.seen]
        assert len(set(judged_units)) == len(judged_units)  # no unit sent twice
        third = judge(store, end.url)
        assert third.exit_code == 0 and "nothing to judge" in third.output
        assert len(end.seen) == 7 + rest  # a third run makes no call
        assert all(s.headers["Authorization"] == f"Bearer {KEY}" for s in end.seen)
    for result in (first, second, third):
        assert KEY not in result.output and KEY not in (result.stderr or "")
    for file in store.parent.iterdir():
        assert KEY.encode() not in file.read_bytes(), file
    db = open_store(store)
    (source,) = automatic_sources(open_study(db, DEMO_STUDY_ID, None))
    assert source.source == "judge:umbrela-test" and source.n_labels == 7 + rest
    db.conn.close()


def test_prompt_holds_query_need_and_document(store: Path) -> None:
    db = open_store(store)
    need = InformationNeed(description="The admin wants the reset steps",
                           narrative="Billing pages are not relevant")
    set_information_need(db, study_id=DEMO_STUDY_ID, query_id="q01", need=need, actor=None)
    corpus = get_study(db, DEMO_STUDY_ID).corpus_id
    query = query_texts(open_study(db, DEMO_STUDY_ID, None))["q01"]
    db.conn.close()
    with stand_in(lambda n, _: Reply(content="##final score: 0")) as end:
        result = judge(store, end.url, "--limit", "3", "--source", "rater-1")
        assert result.exit_code == 0, result.output
        prompts = end.prompts()
    judged = sorted(_stored(store, "rater-1"))
    assert len(prompts) == 3 and {q for q, _ in judged} == {"q01"}
    db = open_store(store)
    docs = [get_document(db, corpus, u) for _, u in judged]
    db.conn.close()
    for prompt in prompts:
        assert f"Query: {query}" in prompt
        assert need.description in prompt and need.narrative in prompt
        assert "3 = represents that the passage is dedicated to the query" in prompt
    for doc in docs:
        assert doc is not None
        assert any(doc.text.strip()[:200] in p for p in prompts), doc.doc_id


def test_failures_are_counted_and_reported(store: Path) -> None:
    def answer(n: int, body: dict) -> Reply:
        return [Reply(content="It is relevant."), Reply(content=None, body=b"{not json"),
                Reply(content="##final score: 9"), Reply(status=400),
                Reply(content="##final score: 2")][n % 5]

    with stand_in(answer) as end:
        result = judge(store, end.url, "--limit", "10", "--grades", "0-3")
    assert result.exit_code == 1, result.output
    assert "calls made: 10" in result.output and "answers stored: 2" in result.output
    assert "failures: 8" in result.output
    for line in ("2 reply without a grade (no grade)", "2 malformed reply",
                 "2 reply without a grade (grade off the scale)", "2 http 400"):
        assert line in result.output, line
    assert set(_stored(store).values()) == {2}


def test_refused_key_stops_the_run(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_KEY", KEY)
    with stand_in(lambda n, _: Reply(status=401)) as end:
        result = judge(store, end.url, "--key-env", "MY_KEY")
    assert result.exit_code == 1 and len(end.seen) <= 4  # the calls already waiting
    assert "refused the key" in result.output and "stopped early" in result.output
    assert KEY not in result.output and "key from MY_KEY" in result.output
    assert _stored(store) == {}


def test_asks_before_calling(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with stand_in(lambda n, _: Reply()) as end:
        piped = judge(store, end.url, "--limit", "4", yes=False)
        assert piped.exit_code == 2 and "pass --yes to make the 4 call(s)" in piped.stderr
        assert "4 call(s) to" in piped.output and not end.seen
        assert _stored(store) == {}
        monkeypatch.setattr(judge_cli, "_interactive", lambda: True)
        argv = ["judge", "--db", str(store), "--study", DEMO_STUDY_ID, "--endpoint", end.url,
                "--model", "umbrela-test", "--limit", "4"]
        declined = CliRunner().invoke(main, argv, input="n\n")
        assert declined.exit_code == 0 and "Make 4 call(s)?" in declined.output
        assert "nothing sent" in declined.output and not end.seen
        accepted = CliRunner().invoke(main, argv, input="y\n")
        assert accepted.exit_code == 0 and len(end.seen) == 4
        assert "answers stored: 4" in accepted.output


def test_bad_source_or_endpoint_refused_before_any_call(store: Path) -> None:
    with stand_in(lambda n, _: Reply()) as end:
        bad = judge(store, end.url, "--source", "bad name!")
        assert bad.exit_code == 2 and "source name" in bad.stderr and not end.seen
        wrong = CliRunner().invoke(main, ["judge", "--db", str(store), "--study",
                                          DEMO_STUDY_ID, "--endpoint", "ftp://x",
                                          "--model", "m", "--yes"])
        assert wrong.exit_code == 2 and "http://" in wrong.output and not end.seen


class _FrozenClock(datetime):
    @classmethod
    def now(cls, tz=None):  # noqa: ANN001, ANN206 - datetime's own signature
        return datetime(2026, 12, 6, 8, 0, 0, tzinfo=tz or UTC)


def _outputs(path: Path, runs: list[str]) -> dict[str, bytes]:
    runner = CliRunner()
    db = ["--db", str(path), "--study", DEMO_STUDY_ID]
    measures = ["-m", "P@10", "-m", "nDCG@10", "-m", "AP@10"]
    commands = {f"evaluate {fmt} {run}": ["evaluate", *db, "--run", run, *measures,
                                          "--format", fmt]
                for run in runs for fmt in ("json", "table")}
    commands |= {f"compare {fmt}": ["compare", *db, "--runs", ",".join(runs), *measures,
                                    "--queue", "50", "--format", fmt]
                 for fmt in ("json", "table")}
    out = {}
    for name, args in commands.items():
        result = runner.invoke(main, args)
        assert result.exit_code == 0, (name, result.output)
        out[name] = result.stdout_bytes.replace(str(path).encode(), b"<db>")
    return out


def test_judged_units_never_reach_evaluate_or_compare(
    built_store_target, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(clock, "datetime", _FrozenClock)
    plain, judged = (built_store_target("demo", built_demo, name)
                     for name in ("plain.sqlite", "judged.sqlite"))
    db = open_store(plain)
    runs = [r.name for r in list_runs(open_study(db, DEMO_STUDY_ID, None))]
    db.conn.close()

    def answer(n: int, body: dict) -> Reply:  # every unknown unit judged relevant or not
        return Reply(content=f"##final score: {3 * (n % 2)}")

    with stand_in(answer) as end:
        result = judge(judged, end.url)
        assert result.exit_code == 0, result.output
    assert len(_stored(judged)) == len(end.seen) > 100
    before, after = _outputs(plain, runs), _outputs(judged, runs)
    assert before.keys() == after.keys()
    for name in before:
        assert before[name] and before[name] == after[name], name


def test_grades_0_to_4_asks_for_and_stores_a_4(store: Path) -> None:
    with stand_in(lambda n, _: Reply(content="##final score: 4")) as end:
        four = judge(store, end.url, "--limit", "2", "--grades", "0-4", "--source", "five")
        three = judge(store, end.url, "--limit", "2", "--source", "four")
        prompts = end.prompts()
    assert four.exit_code == 0, four.output
    assert set(_stored(store, "five").values()) == {4}
    assert all("integer scale of 0 to 4" in p and "4 = represents" in p for p in prompts[:2])
    assert three.exit_code == 1 and _stored(store, "four") == {}  # 4 is off the 0-3 scale
    assert "2 reply without a grade (grade off the scale)" in three.output
    assert all("integer scale of 0 to 3" in p for p in prompts[2:])
