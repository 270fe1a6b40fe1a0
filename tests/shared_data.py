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


def _main_checkout(repo: Path) -> Path:
    """The repository's main checkout: ``repo`` itself, or for a git worktree the folder
    whose ``.git`` its ``.git`` file points into (``gitdir: <main>/.git/worktrees/<name>``)."""
    dot_git = repo / ".git"
    if dot_git.is_file() and (line := dot_git.read_text().strip()).startswith("gitdir:"):
        return Path(line.removeprefix("gitdir:").strip()).parents[2]
    return repo


#: ``../shared`` beside the repository (beside its main checkout, from a git worktree).
SHARED = next((folder for folder in (REPO.parent / "shared",
                                     _main_checkout(REPO).parent / "shared")
               if folder.is_dir()), REPO.parent / "shared")
TREC_EVAL_DATA = SHARED / "data" / "trec_eval"
#: trec_eval's source, built by the parity tests (tests/api/test_trec_eval_parity.py).
TREC_EVAL_SOURCE = SHARED / "tools" / "trec_eval-src.tar.gz"
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
