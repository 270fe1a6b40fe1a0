"""Several processes label one PostgreSQL store at once: no label lost, doubled or half-written.

Each of 4 processes runs 2 writer threads, each with its own connection (as app
servers do). Every writer first saves the same item from the same view of it (all
saw it unlabeled): the advisory write lock serialises them, so exactly one save
succeeds and every other writer is told the item changed. Then each writer saves
labels of its own; every save it was told succeeded is in the store exactly once,
under the event id it was given.

Runs on the session's throwaway PostgreSQL cluster (``postgres_cluster``; skipped
where PostgreSQL is missing unless RELEVANCE_LEDGER_REQUIRE_POSTGRES=1).
"""

import multiprocessing
import threading

import pytest

PROCESSES, THREADS, OWN_LABELS = 4, 2, 10


@pytest.fixture
def store_url(postgres_cluster):
    with postgres_cluster.fresh_database() as url:
        yield url


def _writer(url: str, who: str, shared_view, barrier, out: list) -> None:
    from evalcore.annotation.item_token import label_as_shown, show_item
    from evalcore.store.connection import open_store
    from evalcore.store.labels import ItemChangedError
    from evalcore.store.study_handle import open_study
    from evalcore.store.transaction import retry_busy

    db = open_store(url)
    try:
        barrier.wait()
        try:  # every writer saves the shared item from the view it had before anyone saved
            event = retry_busy(lambda: label_as_shown(
                db, shared_view, 2, on_screen=shared_view, note=f"{who}#shared")).event
            out.append((f"{who}#shared", event.event_id))
        except ItemChangedError:
            out.append((f"{who}#shared", None))
        for i in range(OWN_LABELS):
            token = show_item(open_study(db, "s", who), query_id=f"q{i % 3}",
                              unit_id=f"{who}-{i}", annotator=who)
            event = retry_busy(lambda t=token, g=i % 5, n=f"{who}#{i}": label_as_shown(
                db, t, g, on_screen=t, note=n)).event
            out.append((f"{who}#{i}", event.event_id))
    finally:
        db.conn.close()


def _process(url: str, process: int, shared_views: list, barrier, results) -> None:
    out: list = []
    threads = [threading.Thread(target=_writer, args=(
        url, f"ann{process}-{t}@acme.org", shared_views[process * THREADS + t], barrier, out))
        for t in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    results.put(out)


def test_concurrent_writers_lose_and_double_nothing(store_url):
    from evalcore.annotation.item_token import show_item
    from evalcore.store.connection import open_store
    from evalcore.store.studies import StudyIn
    from evalcore.store.study_handle import open_study
    from evalcore.store.study_setup import create_study

    db = open_store(store_url)
    create_study(db, StudyIn(study_id="s", corpus_id="c"))
    views = [show_item(open_study(db, "s", a), query_id="shared", unit_id="u", annotator=a)
             for a in (f"ann{p}-{t}@acme.org" for p in range(PROCESSES) for t in range(THREADS))]
    ctx = multiprocessing.get_context("spawn")
    barrier, results = ctx.Barrier(PROCESSES * THREADS), ctx.Queue()
    processes = [ctx.Process(target=_process, args=(store_url, p, views, barrier, results))
                 for p in range(PROCESSES)]
    for p in processes:
        p.start()
    saved = [s for _ in processes for s in results.get(timeout=120)]
    for p in processes:
        p.join(timeout=60)
        assert p.exitcode == 0
    stored: dict[str, list[int]] = {}
    for note, event_id in db.execute("SELECT note, event_id FROM label_events").fetchall():
        stored.setdefault(note, []).append(event_id)
    db.conn.close()

    writers = PROCESSES * THREADS
    assert len(saved) == writers * (OWN_LABELS + 1)  # every writer finished every write
    shared = [(note, event_id) for note, event_id in saved if note.endswith("#shared")]
    winners = [(note, event_id) for note, event_id in shared if event_id is not None]
    assert len(winners) == 1  # the others were told the item changed
    own = [(note, event_id) for note, event_id in saved if not note.endswith("#shared")]
    assert {note: [event_id] for note, event_id in [*own, *winners]} == stored


def _round_trips_under_lock(trace: str) -> int:
    """Client round trips in a libpq protocol trace, from the message that asks for the
    write lock to the reply to ``COMMIT``: each time the client, having sent, reads."""
    lines = trace.splitlines()
    start = next(i for i, line in enumerate(lines)
                 if line.startswith("F") and "pg_advisory_xact_lock" in line)
    end = next(i for i, line in enumerate(lines)
               if i > start and line.startswith("B") and 'CommandComplete\t "COMMIT"' in line)
    window = [line[:1] for line in lines[start:end + 1]]
    return sum(1 for a, b in zip(window, window[1:], strict=False) if (a, b) == ("F", "B"))


def test_a_label_write_holds_the_lock_for_two_round_trips(store_url, tmp_path):
    """The lock, the checks and the membership read travel in one round trip; the event,
    the cleared draft and the COMMIT in another (each round trip is time every other
    writer waits), even for a connection's first write on a new query. The label is stored
    once, under the event id returned, and the item's draft is gone."""
    from psycopg import pq

    from evalcore.annotation.item_token import label_as_shown, show_item
    from evalcore.store.connection import open_store
    from evalcore.store.drafts import drafts, save_draft
    from evalcore.store.studies import StudyIn
    from evalcore.store.study_handle import open_study
    from evalcore.store.study_setup import create_study

    setup = open_store(store_url)
    create_study(setup, StudyIn(study_id="s", corpus_id="c"))
    who = "ann@acme.org"
    save_draft(setup, study_id="s", query_id="q", unit_id="u", annotator=who, note="typed")
    assert "u" in drafts(open_study(setup, "s", who), "q", who)
    setup.conn.close()
    db = open_store(store_url)  # a fresh connection: its first write (the query is new too)

    def label(unit: str):
        token = show_item(open_study(db, "s", who), query_id="q", unit_id=unit, annotator=who)
        return label_as_shown(db, token, 2, on_screen=token, note=unit).event

    path = tmp_path / "libpq.trace"
    with path.open("w") as out:
        db.conn.raw.pgconn.trace(out.fileno())
        db.conn.raw.pgconn.set_trace_flags(pq.Trace.SUPPRESS_TIMESTAMPS)
        event = label("u")
        db.conn.raw.pgconn.untrace()
    assert _round_trips_under_lock(path.read_text()) == 2
    assert db.execute("SELECT event_id FROM label_events WHERE note = 'u'").fetchall() == [
        (event.event_id,)]
    assert "u" not in drafts(open_study(db, "s", who), "q", who)  # cleared with the label
    db.conn.close()
