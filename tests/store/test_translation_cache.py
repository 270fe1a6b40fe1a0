"""The PostgreSQL translations kept between processes (evalcore.store.translation_cache):
a fresh process with a warm cache parses nothing with sqlglot, and a damaged, foreign or
unwritable cache only costs translating again."""

import json
import os
import sqlite3
import stat
import subprocess
import sys
import threading
from pathlib import Path

import evalcore
from evalcore.store import dialect
from evalcore.store.translation_cache import FILE_NAME, TranslationCache, checksum

#: A fixed set of the store's kinds of statement (each rewritten in its own way).
STATEMENTS = [
    "SELECT a FROM t WHERE x = ? AND 1",
    "INSERT OR IGNORE INTO t (a) VALUES (?)",
    "SELECT q, gain, max(event_id) FROM e GROUP BY q",
    "SELECT group_concat(x) FROM t WHERE a IN (?, ?, ?)",
    "SELECT value FROM json_each(?) WHERE value GLOB 'a*'",
]

_CHILD = """
import json, sys
import evalcore.store.schema  # registers the store's indexes, as every store process does
from evalcore.store import dialect
made = []
translate = dialect._sqlglot_translation
dialect._sqlglot_translation = lambda sql: made.append(sql) or translate(sql)
out = [dialect.to_postgres(s) for s in json.loads(sys.argv[1])]
print(json.dumps({"made": len(made), "out": out, "sqlglot": "sqlglot" in sys.modules}))
"""


def _fresh_process(cache: Path, statements: list[str] = STATEMENTS) -> dict:
    """Translate ``statements`` in a new Python process whose cache folder is ``cache``."""
    root = str(Path(evalcore.__file__).resolve().parent.parent)
    env = dict(os.environ, RELEVANCE_LEDGER_CACHE_DIR=str(cache),
               PYTHONPATH=os.pathsep.join([root, os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, "-c", _CHILD, json.dumps(statements)], env=env,
                          capture_output=True, text=True, timeout=120, check=True)
    return json.loads(done.stdout)


def _expected() -> list[str]:
    return [dialect._sqlglot_translation(s) if "IN (?" not in s else dialect.to_postgres(s)
            for s in STATEMENTS]


def test_a_fresh_process_with_a_warm_cache_parses_nothing(tmp_path: Path) -> None:
    cold = _fresh_process(tmp_path / "cache")
    assert cold["made"] == len(STATEMENTS) and cold["sqlglot"]
    warm = _fresh_process(tmp_path / "cache")
    assert warm == {"made": 0, "out": cold["out"], "sqlglot": False}
    assert warm["out"] == _expected()
    assert stat.S_IMODE((tmp_path / "cache").stat().st_mode) == 0o700
    assert stat.S_IMODE((tmp_path / "cache" / FILE_NAME).stat().st_mode) == 0o600


def test_a_file_that_is_not_a_database_is_ignored_and_rewritten(tmp_path: Path) -> None:
    folder = tmp_path / "cache"
    folder.mkdir()
    (folder / FILE_NAME).write_bytes(b"not a database " * 500)
    first = _fresh_process(folder)
    assert first["made"] == len(STATEMENTS) and first["out"] == _expected()
    assert _fresh_process(folder)["made"] == 0  # rewritten whole


def test_an_entry_that_does_not_match_its_checksum_is_never_used(tmp_path: Path) -> None:
    folder = tmp_path / "cache"
    _fresh_process(folder)
    with sqlite3.connect(folder / FILE_NAME) as conn:
        changed = conn.execute("UPDATE translations SET translated = 'DROP TABLE labels' "
                               "WHERE sql = ?", (STATEMENTS[0],)).rowcount
    conn.close()
    assert changed == 1
    again = _fresh_process(folder)
    assert again["made"] == 1 and again["out"] == _expected()


def test_an_unwritable_cache_folder_only_means_translating(tmp_path: Path) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("the cache folder's place is taken by a file")
    for _ in range(2):
        result = _fresh_process(blocked / "cache")
        assert result["made"] == len(STATEMENTS) and result["out"] == _expected()


def test_another_namespace_does_not_reuse_entries_and_replaces_them(tmp_path: Path) -> None:
    path = tmp_path / FILE_NAME
    old = TranslationCache(lambda: "dialect-1 sqlglot-30.31", lambda: path)
    old.put("SELECT 1", "SELECT 1 /* old */")
    assert TranslationCache(lambda: "dialect-1 sqlglot-30.31", lambda: path).get(
        "SELECT 1") == "SELECT 1 /* old */"
    new = TranslationCache(lambda: "dialect-1 sqlglot-30.32", lambda: path)
    assert new.get("SELECT 1") is None
    with sqlite3.connect(path) as conn:  # the old namespace's entries are dropped
        assert conn.execute("SELECT count(*) FROM translations").fetchone() == (0,)
    conn.close()


def test_the_namespace_changes_with_sqlglot_and_the_registered_indexes(
        tmp_path: Path, monkeypatch) -> None:
    before = dialect.translation_namespace()
    assert dialect.translation_namespace() == before
    fake = tmp_path / "sqlglot"
    fake.mkdir()
    (fake / "__init__.py").write_text("")
    (fake / "_version.py").write_text("__version__ = version = '99.0.0'\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "sqlglot", raising=False)  # found anew, not imported
    assert dialect.translation_namespace() != before
    monkeypatch.undo()
    assert dialect.translation_namespace() == before
    columns = dict(dialect._INDEX_COLUMNS)
    try:
        dialect.register_indexes(["CREATE INDEX idx_translation_cache_test ON t (a, b)"])
        assert dialect.translation_namespace() != before
    finally:
        dialect._INDEX_COLUMNS.clear()
        dialect._INDEX_COLUMNS.update(columns)
        dialect._KEPT.reset()
        dialect._translated.cache_clear()


def test_writers_sharing_the_file_lose_no_entry(tmp_path: Path) -> None:
    path = tmp_path / FILE_NAME
    caches = [TranslationCache(lambda: "ns", lambda: path) for _ in range(4)]

    def write(number: int) -> None:
        for k in range(25):
            caches[number].put(f"SELECT {number}, {k}", f"SELECT {number}, {k} -- pg")

    threads = [threading.Thread(target=write, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    with sqlite3.connect(path) as conn:
        rows = conn.execute("SELECT namespace, sql, translated, checksum FROM translations"
                            ).fetchall()
    conn.close()
    assert len(rows) == 100
    assert all(digest == checksum(ns, sql, out) for ns, sql, out, digest in rows)
