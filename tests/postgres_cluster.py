"""A throwaway PostgreSQL cluster for the test session (not a test module).

The cluster lives in a fresh temporary directory: ``initdb`` with trust authentication,
``pg_ctl`` listening only on a Unix socket in that directory (no TCP port, so nothing
outside the machine, nor another session, can reach it), fsync off. Running as root
(CI), ``initdb`` and ``pg_ctl`` run as the ``postgres`` user that the Debian package
creates, since ``initdb`` refuses root. The directory is deleted when the cluster stops,
also on Ctrl-C or an error half-way through starting.

Every test gets a database of its own (:meth:`Cluster.fresh_database`). Making one
(``CREATE DATABASE``) copies the template's whole catalog, so a database a test used is
emptied afterwards instead (its schemas dropped, its connections ended), checked against
the empty template and handed to the next test under a new name. A schema per test (:meth:`Cluster.fresh_schema`,
``search_path`` in the URL) is cheaper still, but the store then shares its database, so
the code under test must never name a schema nor a database-wide object (an extension).
:meth:`Cluster.build_template` makes another template (say, a built demo store).
"""

import atexit
import glob
import itertools
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

REQUIRE_VARIABLE = "RELEVANCE_LEDGER_REQUIRE_POSTGRES"
SUPERUSER = "ledger"
# An empty database cloned for every test; ``template0`` cannot be connected to.
TEMPLATE = "ledger_template"
_OS_USER_AS_ROOT = "postgres"


_USER_SCHEMAS = ("SELECT nspname FROM pg_namespace WHERE nspname NOT LIKE 'pg\\_%' "
                 "AND nspname <> 'information_schema'")
# What a test may leave in a database besides its schemas' contents: schemas (with owners,
# grants and comments), extensions, user objects anywhere, database settings, large
# objects, event triggers, publications, casts and languages.
_SHAPE = """
SELECT
  (SELECT array_agg(nspname || ':' || nspowner::regrole || ':' || coalesce(nspacl::text, '')
                    || ':' || coalesce(obj_description(oid, 'pg_namespace'), '') ORDER BY nspname)
     FROM pg_namespace),
  (SELECT array_agg(extname ORDER BY extname) FROM pg_extension),
  (SELECT count(*) FROM pg_class WHERE oid >= 16384),
  (SELECT count(*) FROM pg_proc WHERE oid >= 16384),
  (SELECT count(*) FROM pg_type WHERE oid >= 16384),
  (SELECT count(*) FROM pg_db_role_setting s JOIN pg_database d ON d.oid = s.setdatabase
    WHERE d.datname = current_database()),
  (SELECT count(*) FROM pg_largeobject_metadata),
  (SELECT count(*) FROM pg_event_trigger),
  (SELECT count(*) FROM pg_publication),
  (SELECT count(*) FROM pg_cast WHERE oid >= 16384),
  (SELECT count(*) FROM pg_language WHERE oid >= 16384),
  (SELECT count(*) FROM pg_collation WHERE oid >= 16384),
  (SELECT count(*) FROM pg_ts_config WHERE oid >= 16384)
"""


class PostgresUnavailable(RuntimeError):
    """The PostgreSQL binaries or the psycopg driver are missing, or the cluster did not start."""


def find_binary(name: str) -> str | None:
    """``name`` on PATH, else in the newest ``/usr/lib/postgresql/*/bin`` (Debian's layout)."""
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"),
                        key=lambda p: int(Path(p).parts[-3]) if Path(p).parts[-3].isdigit() else 0)
    return candidates[-1] if candidates else None


def missing_requirements() -> str | None:
    """Why no cluster can be started here (a sentence), or None when everything is present."""
    missing = [name for name in ("initdb", "pg_ctl") if find_binary(name) is None]
    if missing:
        return (f"PostgreSQL is not installed ({', '.join(missing)} not on PATH nor in "
                "/usr/lib/postgresql/*/bin): apt-get install -y postgresql")
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return "the psycopg driver is not installed: pip install 'psycopg>=3.2'"
    if os.geteuid() == 0:
        if shutil.which("runuser") is None:
            return "running as root, and runuser (util-linux) is missing to start PostgreSQL"
        try:
            import pwd

            pwd.getpwnam(_OS_USER_AS_ROOT)
        except KeyError:
            return (f"running as root, and there is no '{_OS_USER_AS_ROOT}' user to run "
                    "PostgreSQL as (the Debian postgresql package creates it)")
    return None


def postgres_required() -> bool:
    """CI sets RELEVANCE_LEDGER_REQUIRE_POSTGRES=1: then a missing PostgreSQL is a failure."""
    return os.environ.get(REQUIRE_VARIABLE, "") not in ("", "0")


def database_url(socket_dir: Path | str, database: str, user: str = SUPERUSER) -> str:
    """``postgresql://user@/database?host=socket_dir``: a Unix socket, no host, no port."""
    return f"postgresql://{quote(user)}@/{quote(database)}?host={quote(str(socket_dir))}"


@dataclass
class Cluster:
    """A running throwaway cluster: its directory, its socket directory, its admin URL."""

    directory: Path
    socket_dir: Path
    data_dir: Path
    _pg_ctl: list[str]
    _counter: Iterator[int] = field(default_factory=lambda: itertools.count(1))
    _admin: object = None
    _schemas: object = None
    _spare: list[str] = field(default_factory=list)
    _empty_shape: tuple | None = None
    _stopped: bool = False

    def url(self, database: str) -> str:
        return database_url(self.socket_dir, database)

    def admin(self):
        """An autocommit connection to the ``postgres`` database (to create and drop databases)."""
        import psycopg

        if self._admin is None or self._admin.closed:
            self._admin = psycopg.connect(self.url("postgres"), autocommit=True)
        return self._admin

    def create_database(self, name: str, template: str = TEMPLATE) -> str:
        """A new database ``name`` copied from ``template``; its URL."""
        from psycopg import sql

        admin = self.admin()
        # FILE_COPY (PostgreSQL 15+; the only way before) copies the template's files.
        strategy = " STRATEGY FILE_COPY" if admin.info.server_version >= 150000 else ""
        admin.execute(sql.SQL("CREATE DATABASE {} TEMPLATE {}" + strategy).format(
            sql.Identifier(name), sql.Identifier(template)))
        return self.url(name)

    def build_template(self, name: str, prepare: Callable[[str], None]) -> str:
        """A template ``name``: a fresh database that ``prepare(url)`` filled (and closed its
        connections to), then frozen as a template for :meth:`fresh_database`."""
        from psycopg import sql

        url = self.create_database(name)
        try:
            prepare(url)
            self.admin().execute(sql.SQL("ALTER DATABASE {} WITH IS_TEMPLATE true").format(
                sql.Identifier(name)))
        except BaseException:
            self.drop_database(name)
            raise
        return name

    def drop_database(self, name: str) -> None:
        """Drop ``name``, ending the connections a test left open to it."""
        from psycopg import sql

        self.admin().execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(
            sql.Identifier(name)))

    @contextmanager
    def fresh_schema(self, prefix: str = "s") -> Iterator[str]:
        """The URL of a new empty schema in the shared database ``schemas`` (its name first on
        the ``search_path`` of every connection made with the URL), dropped on exit with the
        connections a test left open to that database. Far cheaper than a database, but only
        for code that never names a schema nor a database-wide object."""
        import psycopg
        from psycopg import sql

        if self._schemas is None or self._schemas.closed:
            admin = self.admin()
            if admin.execute("SELECT 1 FROM pg_database WHERE datname = 'schemas'").fetchone() is None:
                admin.execute("CREATE DATABASE schemas TEMPLATE template0 ENCODING 'UTF8'")
            self._schemas = psycopg.connect(self.url("schemas"), autocommit=True)
        owner = self._schemas
        name = f"{prefix}_{next(self._counter)}"
        owner.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(name)))
        try:
            yield f"{self.url('schemas')}&options=-csearch_path%3D{name}"
        finally:
            owner.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                          "WHERE datname = 'schemas' AND pid <> pg_backend_pid()")
            owner.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(name)))

    @contextmanager
    def fresh_database(self, prefix: str = "t", template: str = TEMPLATE) -> Iterator[str]:
        """The URL of a database equal to ``template`` (empty by default), for the caller alone.

        An empty database a test used is emptied again on exit and kept for the next one
        (renamed) when it then matches the empty template object for object (``_SHAPE``);
        any other is dropped.
        """
        from psycopg import sql

        name = f"{prefix}_{next(self._counter)}"
        if template == TEMPLATE and self._spare:
            # Under a new name: no URL is ever handed out twice (a cache keyed by the store's
            # address, like a file path, must not see an earlier test's store).
            self.admin().execute(sql.SQL("ALTER DATABASE {} RENAME TO {}").format(
                sql.Identifier(self._spare.pop()), sql.Identifier(name)))
        else:
            self.create_database(name, template)
        try:
            yield self.url(name)
        finally:
            if template == TEMPLATE and self._emptied(name):
                self._spare.append(name)
            else:
                self.drop_database(name)

    def _emptied(self, name: str) -> bool:
        """End the connections to ``name``, drop every schema in it and make ``public`` again;
        True when it is then shaped like the empty template."""
        import psycopg
        from psycopg import sql

        try:
            self.admin().execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                                 "WHERE datname = %s AND pid <> pg_backend_pid()", [name])
            with psycopg.connect(self.url(name), autocommit=True) as conn:
                for (schema,) in conn.execute(_USER_SCHEMAS).fetchall():
                    conn.execute(sql.SQL("DROP SCHEMA {} CASCADE").format(sql.Identifier(schema)))
                conn.execute("CREATE SCHEMA public AUTHORIZATION pg_database_owner")
                conn.execute("GRANT USAGE ON SCHEMA public TO PUBLIC")
                conn.execute("COMMENT ON SCHEMA public IS 'standard public schema'")
                shape = conn.execute(_SHAPE).fetchone()
        except psycopg.Error:
            return False
        if self._empty_shape is None:
            with psycopg.connect(self.url(TEMPLATE), autocommit=True) as conn:
                self._empty_shape = conn.execute(_SHAPE).fetchone()
        return shape == self._empty_shape

    def stop(self) -> None:
        """Stop the server (immediately: nothing in it is kept) and delete its directory."""
        if self._stopped:
            return
        self._stopped = True
        for conn in (self._admin, self._schemas):
            if conn is not None:
                try:
                    conn.close()
                except Exception:  # the server may already be gone
                    pass
        subprocess.run([*self._pg_ctl, "stop", "-m", "immediate", "-w", "-D", str(self.data_dir)],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        shutil.rmtree(self.directory, ignore_errors=True)


def _as_cluster_user(command: list[str]) -> list[str]:
    if os.geteuid() == 0:
        return ["runuser", "-u", _OS_USER_AS_ROOT, "--", *command]
    return command


def _run(command: list[str], what: str, log: Path | None = None) -> None:
    done = subprocess.run(command, capture_output=True, text=True, check=False,
                          env={**os.environ, "LC_ALL": "C.UTF-8"}, timeout=120)
    if done.returncode != 0:
        detail = (done.stderr or done.stdout).strip()
        if log is not None and log.exists():
            detail += "\n" + log.read_text(errors="replace")[-2000:]
        raise PostgresUnavailable(f"{what} failed (exit {done.returncode}): {detail}")


def start_cluster() -> Cluster:
    """Create and start a throwaway cluster in a new temporary directory.

    Raises :class:`PostgresUnavailable` (with the reason) when it cannot; nothing is left
    behind then.
    """
    reason = missing_requirements()
    if reason is not None:
        raise PostgresUnavailable(reason)
    initdb = find_binary("initdb")
    pg_ctl = _as_cluster_user([find_binary("pg_ctl")])
    directory = Path(tempfile.mkdtemp(prefix="relevance-ledger-pg-"))
    data_dir, socket_dir, log = directory / "data", directory / "socket", directory / "server.log"
    cluster = Cluster(directory=directory, socket_dir=socket_dir, data_dir=data_dir,
                      _pg_ctl=pg_ctl)
    try:
        socket_dir.mkdir()
        if os.geteuid() == 0:
            shutil.chown(directory, user=_OS_USER_AS_ROOT)
            shutil.chown(socket_dir, user=_OS_USER_AS_ROOT)
        _run(_as_cluster_user([initdb, "-D", str(data_dir), "-A", "trust", "-U", SUPERUSER,
                               "--no-sync", "-E", "UTF8", "--locale=C.UTF-8"]), "initdb")
        options = (f"-k {socket_dir} -c listen_addresses='' -c fsync=off "
                   "-c synchronous_commit=off -c full_page_writes=off "
                   "-c max_connections=200 -c shared_buffers=32MB")
        _run([*pg_ctl, "start", "-w", "-t", "60", "-D", str(data_dir), "-l", str(log),
              "-o", options], "pg_ctl start", log)
        atexit.register(cluster.stop)
        admin = cluster.admin()
        admin.execute(f"CREATE DATABASE {TEMPLATE} TEMPLATE template0 ENCODING 'UTF8'")
        admin.execute(f"ALTER DATABASE {TEMPLATE} WITH IS_TEMPLATE true")
        return cluster
    except BaseException:
        cluster.stop()
        raise

