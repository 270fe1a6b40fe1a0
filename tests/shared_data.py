"""The shared data beside the checkout (``../shared``): trec_eval's test files and source.

Tests that read it are marked :data:`needs_shared`: they skip, saying why, when
``../shared`` is absent, unless ``RELEVANCE_LEDGER_REQUIRE_SHARED=1`` (CI sets
it), which makes them run and fail instead.
"""

import os
from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[1] / ".." / "shared"
TREC_DATA = SHARED / "data" / "trec_eval"
TREC_EVAL_SOURCE = SHARED / "tools" / "trec_eval-src.tar.gz"

REQUIRED = os.environ.get("RELEVANCE_LEDGER_REQUIRE_SHARED") == "1"

needs_shared = pytest.mark.skipif(
    not TREC_DATA.is_dir() and not REQUIRED,
    reason=f"{TREC_DATA} is absent (trec_eval's test data beside the checkout); "
    "RELEVANCE_LEDGER_REQUIRE_SHARED=1 makes this a failure",
)
