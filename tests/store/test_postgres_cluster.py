"""The throwaway PostgreSQL cluster of the test session and the per-engine store target."""

import os
import pwd
import tempfile
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import postgres_cluster
import pytest
from postgres_cluster import Cluster, missing_requirements, start_cluster


def _connect(url: str):
    import psycopg

    return psycopg.connect(url, autocommit=True)


def test_the_cluster_listens_on_its_unix_socket_only(postgres_cluster: Cluster) -> None:
    with postgres_cluster.fresh_database() as url, _connect(url) as conn:
        assert conn.execute("SHOW listen_addresses").fetchone() == ("",)
        assert conn.execute("SHOW unix_socket_directories").fetchone() == (
            str(postgres_cluster.socket_dir),)
        assert conn.execute("SELECT inet_server_port()").fetchone() == (None,)  # not over TCP
    parts = urlsplit(url)
    assert parts.scheme == "postgresql"
    assert parts.port is None and parts.hostname is None
    assert parse_qs(parts.query) == {"host": [str(postgres_cluster.socket_dir)]}


def _user_tables(url: str) -> int:
    with _connect(url) as conn:
        return conn.execute(
            "SELECT count(*) FROM information_schema.tables "
            "WHERE table_schema NOT IN ('pg_catalog', 'information_schema')").fetchone()[0]


def test_a_fresh_database_is_empty_isolated_and_emptied_or_dropped_after(
        postgres_cluster: Cluster) -> None:
    with postgres_cluster.fresh_database() as first, postgres_cluster.fresh_database() as second:
        assert first != second
        with _connect(first) as conn:
            conn.execute("CREATE SCHEMA private")
            conn.execute("CREATE TABLE private.left_behind (x int)")
            conn.execute("CREATE TABLE left_behind (x int)")
            conn.execute("INSERT INTO left_behind VALUES (1)")
        assert _user_tables(second) == 0
        left_open = _connect(first)  # a test that forgets to close its store
        left_open.execute("SELECT * FROM left_behind")  # and leaves a transaction open
    left_open.close()
    with _connect(postgres_cluster.url("postgres")) as admin:
        kept = [name for (name,) in admin.execute(
            "SELECT datname FROM pg_database WHERE datname = ANY(%s)",
            [[urlsplit(first).path[1:], urlsplit(second).path[1:]]]).fetchall()]
    for name in kept:  # kept for the next test: emptied
        assert _user_tables(postgres_cluster.url(name)) == 0
    with postgres_cluster.fresh_database() as third, _connect(third) as conn:
        assert third not in (first, second)  # never the same address twice
        assert conn.execute("SELECT to_regclass('left_behind'), to_regnamespace('private')"
                            ).fetchone() == (None, None)


def test_a_database_with_settings_of_its_own_is_not_reused(postgres_cluster: Cluster) -> None:
    with postgres_cluster.fresh_database() as url, _connect(url) as conn:
        name = urlsplit(url).path[1:]
        conn.execute(f'ALTER DATABASE "{name}" SET work_mem = \'8MB\'')
    with _connect(postgres_cluster.url("postgres")) as admin:
        assert admin.execute("SELECT count(*) FROM pg_database WHERE datname = %s",
                             [name]).fetchone() == (0,)


def test_a_fresh_schema_is_first_on_the_search_path_empty_and_dropped(
        postgres_cluster: Cluster) -> None:
    with postgres_cluster.fresh_schema() as first, postgres_cluster.fresh_schema() as second:
        assert first != second and urlsplit(first).port is None
        with _connect(first) as conn:
            conn.execute("CREATE TABLE left_behind (x int)")
            schema = conn.execute("SELECT current_schema()").fetchone()[0]
        with _connect(second) as conn:
            assert conn.execute("SELECT to_regclass('left_behind')").fetchone() == (None,)
            assert conn.execute("SELECT current_schema()").fetchone()[0] != schema
        left_open = _connect(first)
    try:
        with _connect(postgres_cluster.url("schemas")) as conn:
            assert conn.execute("SELECT count(*) FROM pg_namespace WHERE nspname = %s",
                                [schema]).fetchone() == (0,)
    finally:
        left_open.close()


def test_store_target_is_a_file_on_sqlite_and_a_fresh_database_on_postgres(
        store_engine: str, store_target, tmp_path: Path) -> None:
    if store_engine == "sqlite":
        assert store_target == store_target
        assert not store_target.exists()
        return
    parts = urlsplit(str(store_target))
    assert parts.scheme == "postgresql" and parts.port is None
    with _connect(str(store_target)) as conn:
        assert conn.execute(
            "SELECT count(*) FROM information_schema.tables "
            "WHERE table_schema NOT IN ('pg_catalog', 'information_schema')").fetchone() == (0,)


def _listing(directory: Path) -> set[str]:
    try:
        return {str(p.relative_to(directory)) for p in directory.rglob("*")}
    except (PermissionError, FileNotFoundError):
        return set()


def test_a_cluster_lives_in_a_temporary_directory_and_is_gone_when_stopped(
        postgres_cluster: Cluster) -> None:
    # The session's cluster proves PostgreSQL is there; this one is started and stopped here.
    home = Path(os.environ["HOME"])
    postgres_home = Path(pwd.getpwnam("postgres").pw_dir) if os.geteuid() == 0 else None
    before = _listing(home), _listing(postgres_home) if postgres_home else set()
    cluster = start_cluster()
    try:
        assert cluster.directory.parent == Path(tempfile.gettempdir())
        real_home = Path(pwd.getpwuid(os.getuid()).pw_dir)
        assert real_home not in cluster.directory.parents
        with cluster.fresh_database() as url, _connect(url) as conn:
            conn.execute("CREATE TABLE t (x text)")
    finally:
        cluster.stop()
    assert not cluster.directory.exists()
    assert (_listing(home), _listing(postgres_home) if postgres_home else set()) == before
    import psycopg

    with pytest.raises(psycopg.OperationalError):
        psycopg.connect(cluster.url("postgres"), connect_timeout=2)


def test_without_postgresql_the_reason_says_what_to_install(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(postgres_cluster.shutil, "which", lambda name: None)
    monkeypatch.setattr(postgres_cluster.glob, "glob", lambda pattern: [])
    reason = missing_requirements()
    assert reason is not None
    assert "initdb" in reason and "apt-get install -y postgresql" in reason


def test_requiring_postgresql_is_an_explicit_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    for value, required in (("1", True), ("", False), ("0", False)):
        monkeypatch.setenv(postgres_cluster.REQUIRE_VARIABLE, value)
        assert postgres_cluster.postgres_required() is required
    monkeypatch.delenv(postgres_cluster.REQUIRE_VARIABLE)
    assert postgres_cluster.postgres_required() is False
