"""All SQL lives in ``evalcore/store/``.

Walks the syntax tree of every module of ``evalcore`` outside ``evalcore/store/``
and of ``app/``, and fails (naming file:line) on:

* a call of ``.execute``, ``.executemany``, ``.executescript`` or ``.query``;
* a sqlite-utils table call: ``db["table"].insert/upsert/update/delete/...`` (on a
  name that is a database handle: ``db``, ``store``, ``*_db``...) or
  ``.rows_where``, ``.insert_all``, ``.upsert_all``, ``.delete_where``,
  ``.create_table``, ``.enable_fts``, ``.create_view``, ``.pks_and_rows_where``;
* a string literal (an f-string's text parts included) that is shaped like SQL:
  ``SELECT ... FROM``, ``INSERT INTO``, ``UPDATE t SET``, ``DELETE FROM``,
  ``CREATE [TEMP|UNIQUE|VIRTUAL] TABLE/INDEX/VIEW/TRIGGER``, ``DROP TABLE/...``,
  ``ALTER TABLE``, ``REPLACE INTO``, ``WITH name AS (``, ``PRAGMA name``,
  ``BEGIN [IMMEDIATE]``, ``COMMIT``, ``ROLLBACK``.

Pages and workflows call store functions instead.
"""

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

SQL_CALLS = {"execute", "executemany", "executescript", "query"}
TABLE_METHODS = {
    "rows_where", "insert_all", "upsert_all", "delete_where", "create_table", "enable_fts",
    "create_view", "pks_and_rows_where",
}
#: Methods of a sqlite-utils table reached as ``db["name"]``.
SUBSCRIPT_TABLE_METHODS = {"insert", "upsert", "update", "delete", "get", "rows", "lookup"}

_SQL_SHAPES = [
    r"SELECT\s+(?:DISTINCT\s+)?\S[\s\S]*?\bFROM\s+[\w.\"\[(]",
    r"INSERT\s+(?:OR\s+\w+\s+)?INTO\s+[\w.\"]",
    r"REPLACE\s+INTO\s+[\w.\"]",
    r"UPDATE\s+(?:OR\s+\w+\s+)?[\w.\"]+\s+SET\s",
    r"DELETE\s+FROM\s+[\w.\"]",
    r"CREATE\s+(?:(?:TEMP|TEMPORARY|UNIQUE|VIRTUAL)\s+)*(?:TABLE|INDEX|VIEW|TRIGGER)\b",
    r"DROP\s+(?:TABLE|INDEX|VIEW|TRIGGER)\b",
    r"ALTER\s+TABLE\s+[\w.\"]",
    r"WITH\s+(?:RECURSIVE\s+)?\w+(?:\s*\([^)]*\))?\s+AS\s*\(",
    r"PRAGMA\s+[\w.]+\s*(?:=|\(|;|$)",
    r"(?:BEGIN(?:\s+(?:IMMEDIATE|EXCLUSIVE|DEFERRED))?(?:\s+TRANSACTION)?|COMMIT|ROLLBACK)\s*;?\s*$",
]
_SQL = re.compile(r"^\s*(?:" + "|".join(_SQL_SHAPES) + ")", re.IGNORECASE)
#: The keyword that opens a statement; SQL writes it all upper or all lower case.
_FIRST_WORD = re.compile(r"^\s*([A-Za-z]+)")
#: Lower-case SQL still carries some SQL punctuation or a second keyword in capitals' place.
_LOWER_SQL_MARK = re.compile(r"[?*=;]|:\w|\(|\bwhere\b|\bvalues\b|\bjoin\b|\bset\b")


def is_sql(text: str) -> bool:
    """Is ``text`` shaped like an SQL statement (not an English sentence)?"""
    if not _SQL.match(text):
        return False
    first = _FIRST_WORD.match(text)
    assert first is not None
    word = first.group(1)
    if word.isupper():
        return True
    if word.islower():
        return bool(_LOWER_SQL_MARK.search(text))
    return False  # "Select a run from the list", "Update the settings"


def _text_of(node: ast.AST) -> str | None:
    """The literal text of a string constant or an f-string (formatted parts as ``x``)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(
            v.value if isinstance(v, ast.Constant) and isinstance(v.value, str) else "x"
            for v in node.values
        )
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _text_of(node.left), _text_of(node.right)
        if left is not None and right is not None:
            return left + right
    return None


def _is_database(node: ast.AST) -> bool:
    """Is ``node`` a database handle (``db``, ``store``, ``self.db``, ``x.database``)?"""
    name = node.id if isinstance(node, ast.Name) else getattr(node, "attr", "")
    return name in {"db", "store", "database", "conn"} or name.endswith("_db")


def sql_findings(source: str, filename: str) -> list[str]:
    """``file:line: what`` for every SQL use in ``source``."""
    tree = ast.parse(source, filename)
    found: list[tuple[int, str]] = []
    inside_fstring: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            inside_fstring.update(id(v) for v in node.values)
        if isinstance(node, ast.BinOp):
            inside_fstring.update({id(node.left), id(node.right)})
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            name = node.func.attr
            receiver = node.func.value
            if name in SQL_CALLS:
                found.append((line, f"{filename}:{line}: call of .{name}()"))
            elif name in TABLE_METHODS:
                found.append((line, f"{filename}:{line}: sqlite-utils table call .{name}()"))
            elif (
                name in SUBSCRIPT_TABLE_METHODS
                and isinstance(receiver, ast.Subscript)
                and _is_database(receiver.value)
            ):
                found.append((line, f"{filename}:{line}: sqlite-utils table call [...].{name}()"))
        if id(node) in inside_fstring:
            continue
        text = _text_of(node)
        if text is not None and is_sql(text):
            found.append((line, f"{filename}:{line}: SQL string {text.strip()[:60]!r}"))
    return [f for _, f in sorted(found, key=lambda item: item[0])]


def _modules() -> list[Path]:
    store = ROOT / "evalcore" / "store"
    paths = [p for p in (ROOT / "evalcore").rglob("*.py") if store not in p.parents]
    paths += list((ROOT / "app").rglob("*.py"))
    return sorted(paths)


def test_no_sql_outside_the_store() -> None:
    modules = _modules()
    assert len(modules) > 50, "the walk found too few modules: is the layout where it expects?"
    findings = [
        f
        for path in modules
        for f in sql_findings(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))
    ]
    assert not findings, "SQL outside evalcore/store/ (move it into a store function):\n" + "\n".join(
        findings
    )


@pytest.mark.parametrize(
    "text",
    [
        "SELECT 1 FROM studies WHERE study_id = ?",
        "SELECT d.doc_id, d.content_hash FROM documents d WHERE x",
        "  select count(*) from runs",
        "INSERT OR IGNORE INTO organisations (org_id, name) VALUES (?, ?)",
        "insert into t values (?)",
        "UPDATE runs SET name = ?",
        "DELETE FROM study_members WHERE study_id = ?",
        "CREATE TEMP TABLE x (rowid INTEGER PRIMARY KEY)",
        "CREATE VIRTUAL TABLE temp.f USING fts5(title)",
        "CREATE UNIQUE INDEX i ON t (a)",
        "DROP TABLE IF EXISTS temp.x",
        "WITH recent AS (SELECT 1) SELECT * FROM recent",
        "PRAGMA user_version",
        "PRAGMA busy_timeout = 10",
        "BEGIN IMMEDIATE",
        "BEGIN",
        "COMMIT",
        "ALTER TABLE runs ADD COLUMN k INTEGER",
    ],
)
def test_sql_shapes_are_found(text: str) -> None:
    assert is_sql(text)


@pytest.mark.parametrize(
    "text",
    [
        "Select a run",
        "Select a run from the list",
        "select a run from the list",
        "Update the settings",
        "Delete from the list the ones you no longer need",
        "Create a table of results",
        "Drop the index card",
        "With care",
        "Begin labeling",
        "Commit to a reference version",
        "SELECTED RUNS",
        "Insert into the form",
        "pragma",
        "",
    ],
)
def test_english_is_not_sql(text: str) -> None:
    assert not is_sql(text)


def test_findings_name_file_and_line() -> None:
    source = (
        "def f(db, t):\n"
        "    db.execute('SELECT 1 FROM t')\n"
        "    x = f'SELECT {t} FROM runs'\n"
        "    db['runs'].insert({'a': 1})\n"
        "    ids = []\n"
        "    ids.insert(0, 'kept')\n"
        "    spec = {'encoding': {}}\n"
        "    spec['encoding'].update(x=1)\n"
        "    self.db['audit'].upsert({'a': 1})\n"
        "    return 'Select a run from the list'\n"
    )
    assert sql_findings(source, "m.py") == [
        "m.py:2: call of .execute()",
        "m.py:2: SQL string 'SELECT 1 FROM t'",
        "m.py:3: SQL string 'SELECT x FROM runs'",
        "m.py:4: sqlite-utils table call [...].insert()",
        "m.py:9: sqlite-utils table call [...].upsert()",
    ]
