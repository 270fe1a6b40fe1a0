"""Progress of long work: the one hook readers, imports, exports and archives report to.

Library code reports what it does through :func:`reporter` -- ``stage("reading
run.txt", total=bytes, unit="B")`` then ``advance(n)`` as it goes -- and never
draws anything. Whoever owns the screen decides how it is shown, for the code
it runs inside ``with reporting(progress):``:

* the command line: :class:`TerminalProgress`, a one-line bar on stderr with
  counts, rate and time left, drawn only when stderr is a terminal (nothing in
  pipes, logs or tests) and silenced by ``--quiet``;
* the app: a Streamlit progress bar fed by the same calls
  (``app.components.progress``);
* everything else (the library, tests): :data:`SILENT`, which does nothing.

The reporter is held in a context variable (as the audit channel is), so it is
set only for the caller's context and its threads' own contexts are untouched.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Protocol, TextIO, TypeVar

T = TypeVar("T")


class Progress(Protocol):
    """What long work reports: stages, each with an optional total, and steps within them."""

    def stage(self, label: str, total: int | None = None, unit: str = "") -> None:
        """Start a stage (``unit`` "B" counts bytes; "" counts items)."""

    def advance(self, n: int = 1) -> None:
        """``n`` more units of the current stage are done."""

    def done(self) -> None:
        """The work is over: clear what is shown."""


class _Silent(Progress):
    """Shows nothing: the protocol's methods do nothing."""


#: The reporter that shows nothing (the default).
SILENT: Progress = _Silent()

_CURRENT: ContextVar[Progress] = ContextVar("evalcore_progress", default=SILENT)


def reporter() -> Progress:
    """The reporter of the running work (:data:`SILENT` unless someone shows progress)."""
    return _CURRENT.get()


def counted(items: Iterable[T], every: int = 1000) -> Iterator[T]:
    """``items`` as they are consumed, advancing the current stage by one per item (reported
    ``every`` items, so a loop of millions costs little)."""
    progress = reporter()
    n = 0
    for item in items:
        yield item
        n += 1
        if n == every:
            progress.advance(n)
            n = 0
    if n:
        progress.advance(n)


@contextmanager
def reporting(progress: Progress) -> Iterator[Progress]:
    """Report the progress of the work inside the block to ``progress``; clear it at the end."""
    token = _CURRENT.set(progress)
    try:
        yield progress
    finally:
        _CURRENT.reset(token)
        progress.done()


def _count(n: float, unit: str) -> str:
    if unit == "B":
        for name, size in (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
            if n >= size:
                return f"{n / size:.1f} {name}"
        return f"{n:.0f} B"
    return f"{n:,.0f} {unit}".rstrip()


def _duration(seconds: float) -> str:
    seconds = int(seconds)
    if seconds >= 3600:
        return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"
    return f"{seconds // 60}:{seconds % 60:02d}"


class TerminalProgress:
    """A one-line progress bar on a terminal: ``label [#####-----] 45% 1.2 MiB/2.6 MiB
    3.1 MiB/s 0:04 left``; without a total: the count and the rate.

    Draws nothing unless ``stream`` is a terminal and not ``quiet``. A stage's
    label is drawn when it starts (work that cannot count, such as a backup's
    copy, shows what it is doing); the bar is redrawn at most every
    ``interval`` seconds, and only after ``delay`` seconds of the stage, so quick
    work does not flicker; the line is cleared when the work ends.
    """

    WIDTH = 24

    def __init__(self, stream: TextIO | None = None, *, quiet: bool = False,
                 interval: float = 0.2, delay: float = 0.5,
                 clock: object = time.monotonic) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.quiet = quiet
        self.interval = interval
        self.delay = delay
        self._clock = clock
        self._label = ""
        self._total: int | None = None
        self._unit = ""
        self._done = 0
        self._started = 0.0
        self._drawn = 0.0
        self._shown = False

    @property
    def visible(self) -> bool:
        """Would anything be drawn (a terminal, not quiet)?"""
        if self.quiet:
            return False
        isatty = getattr(self.stream, "isatty", None)
        try:
            return bool(isatty and isatty())
        except (OSError, ValueError):
            return False

    def stage(self, label: str, total: int | None = None, unit: str = "") -> None:
        self._label, self._total, self._unit, self._done = label, total, unit, 0
        self._started = self._clock()  # type: ignore[operator]
        self._drawn = self._started
        self._draw(self._label + " ...")

    def advance(self, n: int = 1) -> None:
        self._done += n
        now = self._clock()  # type: ignore[operator]
        if now - self._drawn >= self.interval and now - self._started >= self.delay:
            self._drawn = now
            self._draw(self.line(now))

    def line(self, now: float) -> str:
        """The bar as drawn at time ``now``."""
        elapsed = max(now - self._started, 1e-9)
        rate = self._done / elapsed
        count = _count(self._done, self._unit)
        speed = f"{_count(rate, self._unit)}/s"
        if self._total:
            share = min(self._done / self._total, 1.0)
            filled = int(share * self.WIDTH)
            bar = "#" * filled + "-" * (self.WIDTH - filled)
            left = (self._total - self._done) / rate if rate > 0 else None
            eta = f" {_duration(left)} left" if left is not None else ""
            total = _count(self._total, self._unit)
            if self._unit != "B":
                count = f"{self._done:,}"
            return f"{self._label} [{bar}] {share:4.0%} {count}/{total} {speed}{eta}"
        return f"{self._label} {count} {speed} {_duration(elapsed)}"

    def _draw(self, text: str) -> None:
        if not self.visible:
            return
        self.stream.write("\r\x1b[K" + text[:200])
        self.stream.flush()
        self._shown = True

    def done(self) -> None:
        if self._shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self._shown = False
