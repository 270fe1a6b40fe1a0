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
* Store engines: a test taking ``store_target`` (or ``new_store_target``) runs once per
  engine chosen with ``--store-engines`` (or RELEVANCE_LEDGER_STORE_ENGINES): on SQLite
  a file in its temporary directory, on PostgreSQL a fresh database of a throwaway
  cluster started once per session (postgres_cluster.py). ``@pytest.mark.sqlite_only``
  tests (store files, PRAGMAs, raw SQLite) run on SQLite only.
"""

import os
import shutil
import signal
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from postgres_cluster import Cluster, PostgresUnavailable, postgres_required, start_cluster
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


STORE_ENGINES = ("sqlite", "postgres")
ENGINES_VARIABLE = "RELEVANCE_LEDGER_STORE_ENGINES"
# "database" (default): each PostgreSQL store is a database of its own; "schema": a schema of
# a shared database (about ten times cheaper; right only while the store's SQL never names
# a schema nor a database-wide object).
ISOLATION_VARIABLE = "RELEVANCE_LEDGER_PG_ISOLATION"
DEFAULT_ENGINES = "sqlite"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--store-engines", default=None, metavar="ENGINES",
        help=f"comma list of store engines the store tests run on ({', '.join(STORE_ENGINES)}); "
             f"default: ${ENGINES_VARIABLE}, else {DEFAULT_ENGINES}")


def selected_engines(config: pytest.Config) -> list[str]:
    """The engines named by --store-engines, else RELEVANCE_LEDGER_STORE_ENGINES, else the default."""
    raw = (config.getoption("--store-engines") or os.environ.get(ENGINES_VARIABLE)
           or DEFAULT_ENGINES)
    engines = [name.strip() for name in raw.split(",") if name.strip()]
    unknown = [name for name in engines if name not in STORE_ENGINES]
    if unknown or not engines:
        raise pytest.UsageError(
            f"--store-engines {raw!r}: unknown engine {', '.join(unknown) or '(none)'}; "
            f"choose from {', '.join(STORE_ENGINES)}")
    return engines


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "store_engine" not in metafunc.fixturenames:
        return
    engines = selected_engines(metafunc.config)
    if metafunc.definition.get_closest_marker("sqlite_only") is not None:
        engines = ["sqlite"]
    metafunc.parametrize("store_engine", engines, indirect=True)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "needs_shared: reads trec_eval's test data from ../shared beside the repository")
    selected_engines(config)  # a misspelt engine stops the run before collection
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


@pytest.fixture(scope="session")
def postgres_cluster() -> Iterator[Cluster]:
    """A throwaway PostgreSQL cluster for the session (skips, or fails under
    RELEVANCE_LEDGER_REQUIRE_POSTGRES=1, when PostgreSQL or psycopg is missing)."""
    try:
        cluster = start_cluster()
    except PostgresUnavailable as missing:
        if postgres_required():
            pytest.fail(f"PostgreSQL is required (RELEVANCE_LEDGER_REQUIRE_POSTGRES=1): {missing}",
                        pytrace=False)
        pytest.skip(f"PostgreSQL store engine unavailable: {missing}")
    # A terminated run (SIGTERM, as from a CI timeout) stops like Ctrl-C: the session ends and
    # the cluster with it, instead of leaving a server behind.
    previous = signal.getsignal(signal.SIGTERM)
    if previous is signal.SIG_DFL:
        signal.signal(signal.SIGTERM, _interrupt)
    try:
        yield cluster
    finally:
        cluster.stop()
        if previous is signal.SIG_DFL:
            signal.signal(signal.SIGTERM, previous)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


@pytest.fixture
def store_engine(request: pytest.FixtureRequest) -> str:
    """The engine this run of the test uses (parametrized by pytest_generate_tests)."""
    return getattr(request, "param", "sqlite")


@pytest.fixture
def new_store_target(store_engine: str, tmp_path: Path,
                     request: pytest.FixtureRequest) -> Iterator[Callable[[str], str | Path]]:
    """``new_store_target(name)``: where to open the test's store ``name`` (a file name such as
    ``"store.db"``): ``tmp_path/name`` on SQLite, on PostgreSQL the URL of a fresh empty
    database (a schema with RELEVANCE_LEDGER_PG_ISOLATION=schema) made at the first call for
    that name, gone after the test."""
    if store_engine == "sqlite":
        yield lambda name="store.db": tmp_path / name
        return
    cluster: Cluster = request.getfixturevalue("postgres_cluster")
    urls: dict[str, str] = {}
    with ExitStack() as databases:
        isolation = os.environ.get(ISOLATION_VARIABLE, "database")
        if isolation not in ("database", "schema"):
            raise pytest.UsageError(f"{ISOLATION_VARIABLE}={isolation!r}: choose database or schema")
        fresh = cluster.fresh_schema if isolation == "schema" else cluster.fresh_database

        def target(name: str = "store.db") -> str:
            if name not in urls:
                urls[name] = databases.enter_context(fresh())
            return urls[name]

        yield target


_BUILT_FILES: dict[str, Path] = {}
_BUILT_TEMPLATES: dict[str, str] = {}


@pytest.fixture
def built_store_target(store_engine: str, tmp_path: Path,
                       tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest,
                       ) -> Iterator[Callable[..., str | Path]]:
    """``built_store_target(key, build, name)``: a fresh copy, for this test alone, of the store
    that ``build(target)`` makes (and closes), built once per session for ``key``. On SQLite a
    copy of the built file at ``tmp_path/name``; on PostgreSQL a database made from the built
    one as a template (``CREATE DATABASE ... TEMPLATE``), gone after the test."""
    if store_engine == "sqlite":
        def copy(key: str, build: Callable[[Path], object], name: str = "store.db") -> Path:
            if key not in _BUILT_FILES:
                source = tmp_path_factory.mktemp(f"built-{key}") / f"{key}.db"
                build(source)
                _BUILT_FILES[key] = source
            path = tmp_path / name
            shutil.copy(_BUILT_FILES[key], path)
            return path

        yield copy
        return
    cluster: Cluster = request.getfixturevalue("postgres_cluster")
    with ExitStack() as databases:
        def clone(key: str, build: Callable[[str], object], name: str = "store.db") -> str:
            if key not in _BUILT_TEMPLATES:
                _BUILT_TEMPLATES[key] = cluster.build_template(f"built_{key}", build)
            return databases.enter_context(cluster.fresh_database(template=_BUILT_TEMPLATES[key]))

        yield clone


@pytest.fixture
def missing_store_target(store_engine: str, tmp_path: Path,
                         request: pytest.FixtureRequest) -> str | Path:
    """Where no store is: a file that is not there on SQLite; on PostgreSQL the URL of a
    database the test's cluster does not have (an empty database is an empty store)."""
    if store_engine == "sqlite":
        return tmp_path / "missing.db"
    cluster: Cluster = request.getfixturevalue("postgres_cluster")
    return cluster.url("no_such_database")


@pytest.fixture
def store_target(new_store_target: Callable[[str], str | Path]) -> str | Path:
    """Where to open this test's store: ``tmp_path/store.db`` on SQLite, a fresh database
    URL on PostgreSQL."""
    return new_store_target("store.db")
