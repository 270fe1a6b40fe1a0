"""The annotator's walk through one query's pool: which item comes next.

Pure functions over the blind order, so the walk is testable without
Streamlit. "Passed" items (skipped or "can't judge" in this session) stay
unlabeled and come back only once every other unlabeled item was seen.
"""

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

from app.components.safe_text import truncate
from evalcore.annotation.progress import QueryProgress

GRADE_MEANINGS: dict[int, str] = {
    0: "not relevant",
    1: "marginal",
    2: "relevant",
    3: "highly relevant",
    4: "perfect",
}


@dataclass
class WalkState:
    """Where one annotator is in one query's pool (kept in the session)."""

    cursor: str | None = None
    skipped: list[str] = field(default_factory=list)
    cant_judge: list[str] = field(default_factory=list)
    #: the item last labeled or passed (cursor None): the walk goes on after it
    after: str | None = None

    @property
    def passed(self) -> set[str]:
        return set(self.skipped) | set(self.cant_judge)


def next_unlabeled(
    order: Sequence[str],
    labeled: Collection[str],
    passed: Collection[str],
    after: str | None = None,
) -> str | None:
    """The next item after ``after`` (cyclically) that is not labeled.

    Items not passed come first; a passed item is offered again only when
    nothing else is left. None when every item is labeled.
    """
    if not order:
        return None
    start = order.index(after) if after in order else -1
    rotated = [order[(start + step) % len(order)] for step in range(1, len(order) + 1)]
    for unit in rotated:
        if unit not in labeled and unit not in passed:
            return unit
    for unit in rotated:
        if unit not in labeled:
            return unit
    return None


def current_item(
    order: Sequence[str], labeled: Collection[str], state: WalkState
) -> str | None:
    """The item to show: the cursor if it is in the pool, else the next unlabeled one (after
    the item last labeled or passed)."""
    if state.cursor in order:
        return state.cursor
    return next_unlabeled(order, labeled, state.passed, after=state.after)


def step(order: Sequence[str], current: str | None, delta: int) -> str | None:
    """The item ``delta`` places after ``current`` in the order (browsing, wraps around)."""
    if not order:
        return None
    if current not in order:
        return order[0] if delta >= 0 else order[-1]
    return order[(order.index(current) + delta) % len(order)]


def query_option(qid: str, progress: QueryProgress | None, text: str) -> str:
    """One selector entry: id and counts first (a narrow screen cuts the end), then the text
    (no counts while the study's progress is being counted)."""
    if progress is None:
        return f"{qid} · {truncate(text, 60)}"
    done = " ✓" if progress.complete else ""
    conflicts = f" · {progress.conflicts} in conflict" if progress.conflicts else ""
    return f"{qid} · you {progress.mine}/{progress.pooled}{done}{conflicts} · {truncate(text, 60)}"


def picked_query(value: object, ids: list[str]) -> str | None:
    """The query id a selector value names.

    The browser sends the entry's *text*, whose counts change with every label: an entry
    sent before a label ("you 2/10") matches no current one ("you 3/10"), so it is read by
    its id prefix (never as the first query, whose items the next keys would label).
    """
    if value in ids:
        return str(value)
    text = str(value)
    matches = [q for q in ids if text.startswith(q + " · ")]
    return max(matches, key=len) if matches else None
