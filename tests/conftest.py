"""Suite-wide safety: the tests never touch the user's home or data directory.

* Every test runs with ``HOME``, ``XDG_DATA_HOME``, ``XDG_CACHE_HOME``,
  ``RELEVANCE_LEDGER_DB`` and ``RELEVANCE_LEDGER_CACHE_DIR`` (cached lexical
  indexes) pointing into its own temporary directory, so nothing can open or create
  ``~/.local/share/relevance-ledger/demo.sqlite``, and without
  ``RELEVANCE_LEDGER_ARCHIVE_KEY_FILE`` (the user's archive signing key).
* Streamlit's AppTest installs the app script as ``sys.modules["__main__"]``
  and never puts the old one back; a process started with the ``spawn`` method
  afterwards would re-run that script as ``__mp_main__`` (opening the app's
  default store). The original ``__main__`` is restored after every test.
* No Hypothesis test keeps the 200 ms default deadline (it fails under load).
* ``@pytest.mark.needs_shared`` tests skip without ``../shared`` (see shared_data.py).
"""

import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from shared_data import require_shared

# A loaded 2-core CI machine makes data generation slow; that is not a defect of the code under test.
settings.register_profile(
    "relevance-ledger", deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("relevance-ledger")

_ORIGINAL_MAIN = sys.modules["__main__"]
_HOME_VARIABLES = ("HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "RELEVANCE_LEDGER_DB",
                   "RELEVANCE_LEDGER_CACHE_DIR")
_session_home: dict[str, str | None] = {}


def _point_home_at(home: Path, setenv) -> None:
    setenv("HOME", str(home))
    setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    setenv("XDG_CACHE_HOME", str(home / ".cache"))
    setenv("RELEVANCE_LEDGER_CACHE_DIR", str(home / "cache"))
    setenv("RELEVANCE_LEDGER_DB", str(home / "ledger.sqlite"))


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "needs_shared: reads trec_eval's test data from ../shared beside the repository")
    # For the whole session too: collection-time code and session/module fixtures
    # (the browser tests' app server) run before any per-test fixture.
    _session_home.update({name: os.environ.get(name) for name in _HOME_VARIABLES})
    home = Path(tempfile.mkdtemp(prefix="relevance-ledger-test-home-"))
    _session_home["_dir"] = str(home)
    _point_home_at(home, os.environ.__setitem__)


def pytest_unconfigure(config: pytest.Config) -> None:
    if "_dir" not in _session_home:
        return
    shutil.rmtree(_session_home.pop("_dir"), ignore_errors=True)
    for name, value in _session_home.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    _session_home.clear()


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("needs_shared") is not None:
        require_shared()


@pytest.fixture(autouse=True)
def _private_home(tmp_path_factory: pytest.TempPathFactory,
                  monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Point HOME, the XDG data and cache folders, the app's store and its cache folder at a
    fresh temporary home; never use
    the user's archive signing key."""
    home = tmp_path_factory.mktemp("home")
    _point_home_at(home, monkeypatch.setenv)
    monkeypatch.delenv("RELEVANCE_LEDGER_ARCHIVE_KEY_FILE", raising=False)
    yield home


@pytest.fixture(autouse=True)
def _restore_main_module() -> Iterator[None]:
    """Put back the ``__main__`` that AppTest replaces with the app script."""
    yield
    sys.modules["__main__"] = _ORIGINAL_MAIN
