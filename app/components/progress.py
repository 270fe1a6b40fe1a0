"""Streamlit progress for long actions: :class:`StreamlitProgress` implements
:class:`evalcore.io.progress.Progress` on an ``st.progress`` bar, redrawn at most every
``interval`` seconds (each redraw is a message to the browser).
"""

from __future__ import annotations

import time
from typing import Any


class StreamlitProgress:
    """A :class:`~evalcore.io.progress.Progress` drawn on a Streamlit progress bar."""

    def __init__(self, bar: Any, *, interval: float = 0.25) -> None:
        self.bar = bar
        self.interval = interval
        self._label = ""
        self._total: int | None = None
        self._done = 0
        self._drawn = 0.0

    def stage(self, label: str, total: int | None = None, unit: str = "") -> None:
        self._label, self._total, self._done = label, total, 0
        self._drawn = time.monotonic()
        self.bar.progress(0.0 if total else 0.05, text=f"{label[:1].upper()}{label[1:]}…")

    def advance(self, n: int = 1) -> None:
        self._done += n
        now = time.monotonic()
        if now - self._drawn < self.interval:
            return
        self._drawn = now
        share = min(self._done / self._total, 1.0) if self._total else 0.05
        count = f"{self._done:,}" + (f" of {self._total:,}" if self._total else "")
        self.bar.progress(share, text=f"{self._label[:1].upper()}{self._label[1:]}: {count}")

    def done(self) -> None:
        """The page empties the bar itself (success or a refusal message replaces it)."""
