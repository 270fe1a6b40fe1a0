"""The annotate page's query selector: its entries, and reading back what the browser sent."""

from app.components.safe_text import truncate
from evalcore.annotation.progress import QueryProgress


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
