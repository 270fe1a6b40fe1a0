"""The trec_eval test data that tests read in place from ``../shared`` beside the repository.

``../shared`` is not part of the repository. Tests that need it are marked
``@pytest.mark.needs_shared`` (or call :func:`require_shared`): without it they
skip and say why, unless ``RELEVANCE_LEDGER_REQUIRE_SHARED=1`` (CI sets it),
which turns the skip into a failure.
"""

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
TREC_EVAL_DATA = SHARED / "data" / "trec_eval"
REQUIRE_ENV = "RELEVANCE_LEDGER_REQUIRE_SHARED"


def require_shared(path: Path = TREC_EVAL_DATA) -> Path:
    """``path`` if it exists; otherwise skip the test (or fail it when the env asks)."""
    if path.exists():
        return path
    reason = (f"needs {path.resolve()} (trec_eval's test data in ../shared beside the "
              f"repository), which is absent")
    if os.environ.get(REQUIRE_ENV) == "1":
        pytest.fail(f"{reason}; {REQUIRE_ENV}=1 makes this a failure", pytrace=False)
    pytest.skip(reason)
