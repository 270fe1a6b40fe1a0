"""Progress of long work: one hook, a bar on a terminal only, --quiet, the app's bar (issue 34).

Library code reports stages and steps to evalcore.io.progress; the command line draws a
bar on stderr when it is a terminal, the app a Streamlit bar, everything else nothing.
"""

from __future__ import annotations

import gzip
import io
from pathlib import Path

import pytest
from click.testing import CliRunner
from store_fixtures import new_store

from app.components.progress import StreamlitProgress
from evalcore.cli import main
from evalcore.io.progress import SILENT, TerminalProgress, counted, reporter, reporting
from evalcore.io.text_lines import read_source
from evalcore.store.imports import import_run


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Recorder:
    """A Progress that keeps every call."""

    def __init__(self) -> None:
        self.stages: list[tuple[str, int | None, str]] = []
        self.counts: list[int] = []
        self.finished = False

    def stage(self, label: str, total: int | None = None, unit: str = "") -> None:
        self.stages.append((label, total, unit))
        self.counts.append(0)

    def advance(self, n: int = 1) -> None:
        self.counts[-1] += n

    def done(self) -> None:
        self.finished = True


def test_the_bar_shows_counts_rate_and_time_left() -> None:
    screen, clock = Terminal(), Clock()
    bar = TerminalProgress(screen, clock=clock)
    bar.stage("writing run r", 1000, "rows")
    assert screen.getvalue().endswith("writing run r ...")
    clock.now += 0.1
    bar.advance(100)  # before the delay: not redrawn
    assert screen.getvalue().endswith("writing run r ...")
    clock.now += 0.9
    bar.advance(150)
    assert screen.getvalue().endswith(
        "\r\x1b[Kwriting run r [######------------------]  25% 250/1,000 rows 250 rows/s "
        "0:03 left")
    bar.done()
    assert screen.getvalue().endswith("\r\x1b[K")


def test_bytes_and_stages_without_a_total() -> None:
    screen, clock = Terminal(), Clock()
    bar = TerminalProgress(screen, clock=clock, delay=0, interval=0)
    bar.stage("reading run.txt", 4 * 1024 * 1024, "B")
    clock.now += 2
    bar.advance(3 * 1024 * 1024)
    assert "75% 3.0 MiB/4.0 MiB 1.5 MiB/s 0:00 left" in screen.getvalue()
    bar.stage("copying store.db")
    clock.now += 61
    bar.advance(5)
    assert screen.getvalue().endswith("copying store.db 5 0/s 1:01")


def test_nothing_is_drawn_off_a_terminal_or_when_quiet() -> None:
    for stream, quiet in ((io.StringIO(), False), (Terminal(), True)):
        bar = TerminalProgress(stream, quiet=quiet, delay=0, interval=0)
        bar.stage("reading x", 10, "B")
        bar.advance(5)
        bar.done()
        assert stream.getvalue() == ""


def test_counted_reports_in_batches() -> None:
    recorder = Recorder()
    with reporting(recorder):
        recorder.stage("items", 2500)
        assert sum(1 for _ in counted(range(2500), every=1000)) == 2500
    assert recorder.counts == [2500] and recorder.finished
    assert reporter() is SILENT


def test_an_import_reports_reading_and_writing(tmp_path: Path) -> None:
    db = new_store(tmp_path)
    path = tmp_path / "run.txt"
    lines = "".join(f"q{q} Q0 d{d} {d + 1} {1 / (d + 1)} r\n" for q in range(50) for d in range(20))
    path.write_bytes(gzip.compress(lines.encode()))
    recorder = Recorder()
    with reporting(recorder):
        import_run(db, read_source(path), study_id="s", k=10)
    assert recorder.stages == [(f"reading {path.name}", path.stat().st_size, "B"),
                               ("writing run r", 1000, "rows")]
    assert recorder.counts == [path.stat().st_size, 1000]


def test_a_terminal_shows_an_import_in_progress(tmp_path: Path) -> None:
    db = new_store(tmp_path)
    path = tmp_path / "run.txt"
    path.write_text("".join(f"q{q} Q0 d1 1 1.0 r\n" for q in range(300)))
    screen = Terminal()
    with reporting(TerminalProgress(screen, delay=0, interval=0)):
        import_run(db, read_source(path), study_id="s", k=10)
    shown = screen.getvalue()
    assert "reading run.txt [" in shown and "writing run r [" in shown
    assert "300/300 rows" in shown and shown.endswith("\r\x1b[K")


@pytest.mark.parametrize("command", [
    ["import", "qrels"], ["import", "run"], ["import", "beir"], ["import", "observations"],
    ["import", "labels-csv"], ["import", "labels-jsonl"], ["import", "documents"],
    ["import", "queries"], ["import", "labels"], ["import", "study"], ["export", "qrels"],
    ["export", "labels"], ["export", "run"], ["export", "study"], ["backup"], ["verify"],
    ["retrieve"],
])
def test_every_long_command_takes_quiet(command: list[str]) -> None:
    result = CliRunner().invoke(main, [*command, "--help"])
    assert result.exit_code == 0 and "--quiet" in result.output


def test_the_command_line_prints_no_bar_into_a_pipe(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    runner = CliRunner()
    assert runner.invoke(main, ["init", "--db", str(db), "--study", "s", "--corpus", "c"]
                         ).exit_code == 0
    path = tmp_path / "run.txt"
    path.write_text("q1 Q0 d1 1 1.0 r\n")
    result = runner.invoke(main, ["import", "run", "--db", str(db), "--study", "s", str(path),
                                  "--k", "1", "--quiet"])
    assert result.exit_code == 0
    assert "\r" not in result.output and "\x1b" not in result.output


class FakeBar:
    def __init__(self) -> None:
        self.calls: list[tuple[float, str]] = []

    def progress(self, value: float, text: str = "") -> None:
        self.calls.append((value, text))


def test_the_app_bar_follows_the_same_calls(monkeypatch) -> None:
    bar = FakeBar()
    progress = StreamlitProgress(bar, interval=0)
    progress.stage("reading docs.jsonl", 200, "B")
    progress.advance(50)
    progress.stage("writing 3 documents")
    progress.advance(3)
    assert bar.calls == [(0.0, "Reading docs.jsonl…"), (0.25, "Reading docs.jsonl: 50 of 200"),
                         (0.05, "Writing 3 documents…"), (0.05, "Writing 3 documents: 3")]
