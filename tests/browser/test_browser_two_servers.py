"""Two app servers on one PostgreSQL database: a team deployment behind a load balancer.

Two ``streamlit run`` processes share one fresh (empty) PostgreSQL database. Both
first requests arrive together, so both servers try to seed the demo study at once;
then two annotators, each in their own browser on their own server, label the same
query with keys pressed 50 ms apart. Every press lands once, on the item that
annotator saw, and each server shows what the other one wrote.
"""

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from annotate_watch import (
    assert_labels_match_presses,
    open_annotate,
    presses,
    refusals,
    shown,
    wait_quiet,
)
from browser_helpers import AppServer, chromium_pages, start_app, stop_app_process, wait_for_app

from evalcore.store.connection import open_store

pytestmark = [pytest.mark.browser, pytest.mark.slow]

QUERY = "q13"
#: Not the demo's own annotators (alice and bob hold its seeded labels), so every label event
#: of these two is one of their presses.
KEYS = {"carol": "2130", "dave": "1243"}


@pytest.fixture
def two_servers(postgres_cluster, tmp_path: Path, chromium_path: str,
                ) -> Iterator[tuple[str, AppServer, AppServer]]:
    with postgres_cluster.fresh_database("two_servers") as url:
        first = start_app(url, tmp_path / "first.log")
        try:
            second = start_app(url, tmp_path / "second.log")
        except BaseException:
            stop_app_process(first.process)
            raise
        try:
            yield url, first, second
        finally:
            stop_app_process(first.process)
            stop_app_process(second.process)


def _events(url: str, annotator: str) -> list[tuple[str, str, int | None, str]]:
    db = open_store(url, migrate=False)
    try:
        return [tuple(row) for row in db.execute(
            "SELECT query_id, unit_id, gain, note FROM label_events WHERE annotator = ? "
            "ORDER BY event_id", [annotator]).fetchall()]
    finally:
        db.conn.close()


def _count(url: str, sql: str) -> int:
    db = open_store(url, migrate=False)
    try:
        return int(db.execute(sql).fetchone()[0])
    finally:
        db.conn.close()


def test_two_servers_on_one_database_seed_once_and_keep_every_label(
        two_servers, tmp_path: Path, chromium_path: str) -> None:
    url, first, second = two_servers
    with chromium_pages([tmp_path / "carol", tmp_path / "dave"], chromium_path,
                        viewport={"width": 1400, "height": 1000}) as (carol, dave):
        # Both servers' first requests reach the empty database together.
        carol.goto(f"{first.url}/annotate?study=demo&annotator=carol&query={QUERY}",
                   wait_until="commit")
        dave.goto(f"{second.url}/annotate?study=demo&annotator=dave&query={QUERY}",
                 wait_until="commit")
        wait_for_app(carol, "Metrics for this query", timeout_ms=90_000)
        wait_for_app(dave, "Metrics for this query", timeout_ms=90_000)
        assert _count(url, "SELECT count(*) FROM studies") == 1
        queries = _count(url, "SELECT count(*) FROM queries WHERE study_id = 'demo'")

        open_annotate(carol, first.url, annotator="carol", query=QUERY)
        open_annotate(dave, second.url, annotator="dave", query=QUERY)
        # Interleaved: a key on one server, then a key on the other, 50 ms apart.
        for a_key, b_key in zip(KEYS["carol"], KEYS["dave"], strict=True):
            carol.keyboard.press(a_key)
            carol.wait_for_timeout(50)
            dave.keyboard.press(b_key)
            dave.wait_for_timeout(50)
        wait_quiet(carol)
        wait_quiet(dave)

        for name, page in (("carol", carol), ("dave", dave)):
            stored = _events(url, name)
            assert stored, f"none of {name}'s presses was saved"
            assert {q for q, *_ in stored} == {QUERY}, stored
            assert all(unit in shown(page) for _, unit, _, _ in stored), (name, stored)
            assert_labels_match_presses(stored, presses(page))
            assert len({unit for _, unit, _, _ in stored}) == len(stored), (
                f"an item of {name} was labeled twice: {stored}")
            if len(stored) < len(KEYS[name]):
                assert refusals(page), (
                    f"{name}'s presses were dropped without a word: stored {stored}, "
                    f"presses {presses(page)}, shown {shown(page)}")

        # Each server shows what was written through the other: Carol's labels, written
        # through the first server, counted on the second.
        carol_labels = {unit for _, unit, _, _ in _events(url, "carol")}
        dave.goto(f"{second.url}/annotate?study=demo&annotator=carol&query={QUERY}")
        wait_for_app(dave, "Metrics for this query", timeout_ms=60_000)
        body = dave.inner_text("body")
        match = re.search(r"This query: you labeled (\d+) of (\d+) pooled items", body)
        assert match, body[:2000]
        assert int(match.group(1)) == len(carol_labels), (match.group(0), carol_labels)

    # Nothing seeded twice while both servers raced on the empty database.
    assert _count(url, "SELECT count(*) FROM queries WHERE study_id = 'demo'") == queries
    assert _count(url, "SELECT count(*) FROM studies") == 1
