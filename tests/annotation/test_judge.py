"""The judge's library: the prompt, the strict grade, the client's retries, rate and
timeouts against a stand-in endpoint, and batches kept when a run is interrupted."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from access_fixtures import ANNOTATOR, LEAD, OUTSIDER, REVIEWER, team_store
from judge_endpoint import Reply, stand_in
from store_fixtures import built_demo

from evalcore.access.decisions import PermissionDenied
from evalcore.annotation.judge import plan_judging, run_judging
from evalcore.annotation.judge_prompt import (
    DOCUMENT_CHARS,
    JudgeInput,
    UnparsableGrade,
    messages,
    parse_grade,
)
from evalcore.demo.study import DEMO_STUDY_ID
from evalcore.io.chat_completions import CallFailed, ChatClient, EndpointRefused, TokenBucket
from evalcore.store.audit import audit_entries
from evalcore.store.automatic_labels import automatic_labels
from evalcore.store.connection import open_store
from evalcore.store.corpus import get_documents
from evalcore.store.labels import record_label
from evalcore.store.members import add_member
from evalcore.store.query_reads import query_texts
from evalcore.store.resolution import resolved_gains
from evalcore.store.runs import add_run
from evalcore.store.study_handle import open_study

ITEM = JudgeInput(query="reset a forgotten password", description="How an admin resets it",
                  narrative="Pages about billing are not relevant", title="Password reset",
                  text="Open Settings, then Security. " + "x" * (DOCUMENT_CHARS + 500))


def test_prompt_holds_rubric_query_need_and_cut_document() -> None:
    system, user = messages(ITEM)
    assert system["role"] == "system" and user["role"] == "user"
    text = user["content"]
    for part in ("reset a forgotten password", "How an admin resets it",
                 "Pages about billing are not relevant", "Password reset",
                 "Open Settings, then Security.", "0 = represent that the passage has nothing",
                 "3 = represents that the passage is dedicated to the query",
                 "##final score"):
        assert part in text, part
    assert "4 = " not in text and "x" * (DOCUMENT_CHARS + 1) not in text and "[...]" in text
    assert "4 = represents" in messages(ITEM, "0-4")[1]["content"]
    no_need = JudgeInput(query="q", description="", narrative="", title="", text="t")
    assert "Information need" not in messages(no_need)[1]["content"]


@pytest.mark.parametrize(("reply", "grade"), [
    ("##final score: 2", 2), ("M: 1\nT: 2\n##final score: 3", 3), ("0", 0),
    ("Final score (O): 1", 1), ("##final score: 2\n##final score: 2", 2),
])
def test_grade_read_when_unambiguous(reply: str, grade: int) -> None:
    assert parse_grade(reply) == grade


@pytest.mark.parametrize(("reply", "reason", "grades"), [
    ("The passage is relevant.", "no grade", "0-3"), ("", "no grade", "0-3"),
    ("##final score: 2\n##final score: 3", "several grades", "0-3"),
    ("##final score: high", "no grade", "0-3"), ("##final score: 4", "grade off the scale", "0-3"),
    ("##final score: 5", "grade off the scale", "0-4"), ("2.5", "no grade", "0-3"),
    ("-1", "grade off the scale", "0-3"),
])
def test_grade_never_guessed(reply: str, reason: str, grades: str) -> None:
    with pytest.raises(UnparsableGrade) as caught:
        parse_grade(reply, grades)  # type: ignore[arg-type]
    assert caught.value.reason == reason
    assert parse_grade("##final score: 4", "0-4") == 4


def _client(url: str, **kw: object) -> ChatClient:
    return ChatClient(endpoint=url, model="m", backoff=0.01, max_backoff=0.05,
                      **kw)  # type: ignore[arg-type]


def test_429_then_success_is_retried() -> None:
    with stand_in(lambda n, _: Reply(status=429, headers={"Retry-After": "0"}) if n < 2
                  else Reply(content="##final score: 1")) as end:
        client = _client(end.url, key="sk-test")
        assert client.complete(messages(ITEM)) == "##final score: 1"
    assert client.requests == 3 and len(end.seen) == 3
    assert end.seen[0].path == "/v1/chat/completions"
    body = end.seen[0].body
    assert body["model"] == "m" and body["temperature"] == 0
    assert end.seen[0].headers["Authorization"] == "Bearer sk-test"


def test_500s_give_up_after_the_attempts() -> None:
    with stand_in(lambda n, _: Reply(status=500)) as end:
        client = _client(end.url, attempts=3)
        with pytest.raises(CallFailed) as caught:
            client.complete(messages(ITEM))
    assert caught.value.reason == "http 500" and len(end.seen) == 3


def test_refusals_and_malformed_replies_are_not_retried() -> None:
    with stand_in(lambda n, _: Reply(status=401)) as end:
        with pytest.raises(EndpointRefused, match="key"):
            _client(end.url, key="sk-secret").complete(messages(ITEM))
        assert len(end.seen) == 1
    with stand_in(lambda n, _: Reply(content=None, body=b"<html>oops")) as end:
        with pytest.raises(CallFailed) as caught:
            _client(end.url).complete(messages(ITEM))
        assert caught.value.reason == "malformed reply" and len(end.seen) == 1
    with stand_in(lambda n, _: Reply(status=400)) as end:
        with pytest.raises(CallFailed, match="http 400"):
            _client(end.url).complete(messages(ITEM))
        assert len(end.seen) == 1


def test_slow_reply_times_out_and_is_retried() -> None:
    with stand_in(lambda n, _: Reply(delay=1.0) if n == 0 else Reply()) as end:
        client = _client(end.url, timeout=0.2)
        started = time.monotonic()
        assert client.complete(messages(ITEM)) == "##final score: 2"
        assert time.monotonic() - started < 1.0
    with stand_in(lambda n, _: Reply(delay=0.6)) as end:
        with pytest.raises(CallFailed) as caught:
            _client(end.url, timeout=0.2, attempts=2).complete(messages(ITEM))
        assert caught.value.reason == "timeout"


def test_rate_limit_spaces_requests() -> None:
    with stand_in(lambda n, _: Reply()) as end:
        client = _client(end.url, bucket=TokenBucket(10.0))
        started = time.monotonic()
        for _ in range(6):
            client.complete(messages(ITEM))
        elapsed = time.monotonic() - started
    gaps = [b.at - a.at for a, b in zip(end.seen, end.seen[1:], strict=False)]
    assert elapsed >= 0.45  # 5 gaps of 0.1 s at least
    # as received: the spacing holds, give or take the scheduling of a loaded machine
    assert end.seen[-1].at - end.seen[0].at >= 0.4 and min(gaps) >= 0.04


def test_token_bucket_with_a_fake_clock() -> None:
    now = [0.0]
    slept: list[float] = []

    def sleep(s: float) -> None:
        slept.append(s)
        now[0] += s

    bucket = TokenBucket(4.0, clock=lambda: now[0], sleep=sleep)
    for _ in range(5):
        bucket.acquire()
    assert now[0] == pytest.approx(1.0) and len(slept) == 4
    with pytest.raises(ValueError):
        TokenBucket(0)


class _Interrupting(ChatClient):
    """Interrupts the run (as Ctrl-C) at its ``stop_at``-th call."""

    stop_at = 25

    def complete(self, msgs: list[dict[str, str]]) -> str:
        if self.requests >= self.stop_at:
            raise KeyboardInterrupt
        return super().complete(msgs)


def test_interrupted_run_keeps_its_answers_and_failures_are_counted(
    built_store_target, tmp_path: Path
) -> None:
    path = built_store_target("demo", built_demo, "d.sqlite")
    db = open_store(path)
    plan = plan_judging(db, study_id=DEMO_STUDY_ID, source="j", actor="lead")
    assert len(plan.units) > 40

    def answer(n: int, body: dict) -> Reply:
        return Reply(content="no idea") if n % 10 == 3 else Reply(content="##final score: 3")

    with stand_in(answer) as end:
        client = _Interrupting(endpoint=end.url, model="m", backoff=0.01)
        summary = run_judging(db, plan, client, actor="lead")
    assert summary.stopped == "interrupted"
    assert summary.calls == summary.requests == 25  # the interrupted call was not made
    assert summary.failures == {"reply without a grade (no grade)": 3}
    stored = automatic_labels(open_study(db, DEMO_STUDY_ID, None))["j"]
    assert len(stored) == summary.stored == 22  # one batch of 20, then the rest on the way out
    assert set(stored) == set(plan.units[:25]) - {plan.units[i] for i in (3, 13, 23)}
    assert set(stored.values()) == {3}
    again = plan_judging(db, study_id=DEMO_STUDY_ID, source="j", actor="lead")
    assert again.n_judged == 22 and not set(again.units) & set(stored)
    entries = [e for e in audit_entries(open_study(db, DEMO_STUDY_ID, None))
               if e.action == "import.automatic-labels"]
    assert len(entries) == 2
    assert {e.detail["model"] for e in entries} == {"m"}
    assert [e.detail["labels"] for e in entries] == [2, 20]  # newest first


def test_team_study_lead_only_and_unreadable_text_never_sent(tmp_path: Path, store_target) -> None:
    db, _ = team_store(store_target)
    add_run(db, study_id="s", name="r2", source="imported", k=4,
            results=[("q1", 1, "b2", 3.0), ("q1", 2, "a3", 2.0), ("q1", 3, "a1", 1.0),
                     ("q1", 4, "zz", 0.5)], actor=LEAD)
    for who in (ANNOTATOR, REVIEWER, OUTSIDER):
        with pytest.raises(PermissionDenied):
            plan_judging(db, study_id="s", source="j", actor=who)
    plan = plan_judging(db, study_id="s", source="j", actor=LEAD)
    assert sorted(plan.units) == [("q1", "a2"), ("q1", "a3")]
    assert plan.n_unknown == 4  # b2 is globex's, zz is in no corpus
    assert plan.withheld == {"text withheld": 1, "no document": 1}
    two = plan_judging(db, study_id="s", source="j", actor=LEAD, limit=2)
    assert two.units == [("q1", "a3"), ("q1", "a2")]  # by best rank; b2's place passed on
    assert two.n_beyond_limit == 1 and two.withheld == {"text withheld": 1}
    with stand_in(lambda n, _: Reply(content="##final score: 2")) as end:
        summary = run_judging(db, plan, _client(end.url), actor=LEAD)
    assert summary.stored == 2 and not any("b2" in p for p in end.prompts())
    assert automatic_labels(open_study(db, "s", LEAD))["j"] == {("q1", "a2"): 2, ("q1", "a3"): 2}


def test_annotators_write_while_the_judge_waits_for_answers(built_store_target, tmp_path: Path
                                                            ) -> None:
    path = built_store_target("demo", built_demo, "d.sqlite")
    db = open_store(path)
    plan = plan_judging(db, study_id=DEMO_STUDY_ID, source="j", actor="lead", limit=45)
    waits: list[float] = []

    def answer(n: int, body: dict) -> Reply:  # an annotator labels during every call
        other = open_store(path)
        try:
            started = time.monotonic()
            query, unit = plan.units[n]
            record_label(other, study_id=DEMO_STUDY_ID, query_id=query, unit_id=unit, gain=1,
                         annotator="ann")
            waits.append(time.monotonic() - started)
        finally:
            other.conn.close()
        return Reply(content="##final score: 0")

    with stand_in(answer) as end:
        summary = run_judging(db, plan, _client(end.url), actor="lead", batch=20)
    assert summary.stored == 45 and len(waits) == 45
    assert max(waits) < 0.5  # never behind the judge's transaction (busy timeout is longer)
    human = resolved_gains(open_study(db, DEMO_STUDY_ID, None), conflicts=True)  # some in conflict
    assert all(human[q][u] == 1 or 1 in human[q][u] for q, u in plan.units)
    assert set(automatic_labels(open_study(db, DEMO_STUDY_ID, None))["j"].values()) == {0}



def test_a_lead_demoted_during_the_run_stops_it(tmp_path: Path, store_target) -> None:
    db, _ = team_store(store_target)
    add_member(db, study_id="s", user=REVIEWER, role="lead", actor=LEAD)
    add_run(db, study_id="s", name="r2", source="imported", k=2,
            results=[("q1", 1, "a3", 2.0), ("q1", 2, "a4", 1.0)], actor=LEAD)
    plan = plan_judging(db, study_id="s", source="j", actor=REVIEWER)
    assert len(plan.units) == 3

    def answer(n: int, body: dict) -> Reply:
        if n == 1:  # while the second call waits, the lead makes the judge a reviewer again
            other = open_store(store_target)
            add_member(other, study_id="s", user=REVIEWER, role="reviewer", actor=LEAD)
            other.conn.close()
        return Reply(content="##final score: 1")

    with stand_in(answer) as end:
        summary = run_judging(db, plan, _client(end.url), actor=REVIEWER, batch=1)
    assert summary.calls == 2 and len(end.seen) == 2
    assert summary.stored == 1 and summary.failures == {"answer not stored (refused)": 1}
    assert summary.stopped.startswith("refused:")
    assert list(automatic_labels(open_study(db, "s", LEAD))["j"]) == [plan.units[0]]


def test_workers_wait_for_answers_together_and_keep_the_plan_order(
    built_store_target, tmp_path: Path
) -> None:
    path = built_store_target("demo", built_demo, "d.sqlite")
    db = open_store(path)
    texts = query_texts(open_study(db, DEMO_STUDY_ID, None))
    seconds = {}
    for workers, source in ((1, "one"), (4, "four")):
        plan = plan_judging(db, study_id=DEMO_STUDY_ID, source=source, actor="lead", limit=8)
        docs = get_documents(db, "northwind-kb", [u for _, u in plan.units])
        place = {messages(JudgeInput(query=texts[q], description="", narrative="",
                                     title=docs[u].title, text=docs[u].text))[1]["content"]: i
                 for i, (q, u) in enumerate(plan.units)}
        assert len(place) == 8

        def answer(n: int, body: dict, place: dict[str, int] = place) -> Reply:
            # the grade tells the unit's place in the plan
            return Reply(content=f"##final score: {place[body['messages'][-1]['content']] % 4}",
                         delay=0.25)

        with stand_in(answer) as end:
            summary = run_judging(db, plan, _client(end.url), actor="lead", batch=3,
                                  workers=workers)
        seconds[workers] = summary.seconds
        assert summary.stored == 8 and summary.calls == 8
        stored = automatic_labels(open_study(db, DEMO_STUDY_ID, None))[source]
        assert stored == {unit: i % 4 for i, unit in enumerate(plan.units)}
    assert seconds[1] >= 8 * 0.25 and seconds[4] < seconds[1] / 2


def test_rate_holds_across_workers(built_store_target, tmp_path: Path) -> None:
    path = built_store_target("demo", built_demo, "d.sqlite")
    db = open_store(path)
    plan = plan_judging(db, study_id=DEMO_STUDY_ID, source="j", actor="lead", limit=7)
    with stand_in(lambda n, _: Reply()) as end:
        summary = run_judging(db, plan, _client(end.url, bucket=TokenBucket(10.0)),
                              actor="lead", workers=4)
    assert summary.stored == 7 and summary.seconds >= 0.55  # 6 gaps of 0.1 s at least
    assert end.seen[-1].at - end.seen[0].at >= 0.5
