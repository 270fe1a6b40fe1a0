"""The annotator's walk through one query's pool: which item comes next.

Pure functions over the blind order, so the walk is testable without
Streamlit. "Passed" items (skipped or "can't judge" in this session) stay
unlabeled and come back only once every other unlabeled item was seen.
"""

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

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
    """The item to show: the cursor if it is in the pool, else the first unlabeled one."""
    if state.cursor in order:
        return state.cursor
    return next_unlabeled(order, labeled, state.passed)


def step(order: Sequence[str], current: str | None, delta: int) -> str | None:
    """The item ``delta`` places after ``current`` in the order (browsing, wraps around)."""
    if not order:
        return None
    if current not in order:
        return order[0] if delta >= 0 else order[-1]
    return order[(order.index(current) + delta) % len(order)]
