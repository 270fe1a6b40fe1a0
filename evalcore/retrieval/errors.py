"""What the lexical workflow raises: refusals (exit 1) and unknown names (exit 2)."""

from typing import Any


class RetrievalRefused(RuntimeError):
    """The workflow would not run: the corpus or the access rules changed since the pin.

    ``detail`` holds the machine-readable reasons (as stored in
    ``retrieval_refusals.detail_json``). Nothing of the run is stored.
    """

    def __init__(self, message: str, detail: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.detail: dict[str, Any] = detail or {}


class ProtocolNotFoundError(LookupError):
    """No protocol of that name is pinned in the study."""
