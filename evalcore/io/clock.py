"""Timestamps as evalcore reads and writes them: ISO-8601 UTC with a ``Z`` suffix.

The store, its exports and imported label rows all use this one format.
"""

from datetime import UTC, datetime


def to_iso(moment: datetime) -> str:
    """``2026-06-30T00:00:00Z``; a naive datetime is taken as UTC."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    text = moment.astimezone(UTC).isoformat(timespec="microseconds")
    text = text.replace("+00:00", "Z")
    return text.replace(".000000Z", "Z")


def utc_now_iso() -> str:
    return to_iso(datetime.now(UTC))
