"""Where SQLite and PostgreSQL differ: the one place that knows both dialects.

The store writes its queries in SQLite's dialect; on PostgreSQL each passes through
:func:`to_postgres` (sqlglot, cached in memory and between processes:
:mod:`evalcore.store.translation_cache`), and what sqlglot leaves is rewritten on its syntax
tree (:func:`_rewrite`): ``INSERT OR IGNORE``, ``json_each``, ``GLOB``, ``char``, ``TOTAL``,
``INDEXED BY`` (a ``group_concat`` over such a scan ordered by the index), attached scratch
databases, unnamed subqueries, integers as truth values and truth values as integers,
SQLite's bare columns, and JSON read from text.

Schema statements (:func:`schema_to_postgres`) also map the types: ``INTEGER`` is ``BIGINT``,
an ``INTEGER PRIMARY KEY`` an identity column, every ``TEXT`` column ``COLLATE "C"`` (bytewise
as SQLite's BINARY, whatever the server's locale), a table with a rowid and no integer key
gets an identity column ``rowid`` (documents and studies are read in rowid order), and a
trigger becomes a PL/pgSQL function raising its message as an integrity error. The FTS5
index of the early migrations is never created on PostgreSQL. The errors callers treat
alike on both engines are here too (:func:`database_errors`, :func:`is_busy`, ...)."""

import hashlib
import re
import sqlite3
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Any

from evalcore.store.translation_cache import TranslationCache

#: PostgreSQL functions standing in for SQLite built-ins sqlglot leaves as they are.
PG_HELPERS = r"""
CREATE OR REPLACE FUNCTION sqlite_glob(pattern text, subject text) RETURNS boolean
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    rx text := '';
    i int := 1;
    c text;
    in_class boolean := false;
BEGIN
    IF pattern IS NULL OR subject IS NULL THEN RETURN NULL; END IF;
    WHILE i <= length(pattern) LOOP
        c := substr(pattern, i, 1);
        IF in_class THEN
            IF c = ']' THEN in_class := false; rx := rx || ']';
            ELSIF c = '\' THEN rx := rx || '\\';
            ELSE rx := rx || c; END IF;
        ELSIF c = '*' THEN rx := rx || '.*';
        ELSIF c = '?' THEN rx := rx || '.';
        ELSIF c = '[' THEN
            in_class := true; rx := rx || '[';
            IF substr(pattern, i + 1, 1) = '^' THEN rx := rx || '^'; i := i + 1; END IF;
            IF substr(pattern, i + 1, 1) = ']' THEN rx := rx || '\]'; i := i + 1; END IF;
        ELSE rx := rx || regexp_replace(c, '([.^$+(){}|\\\[\]*?])', '\\\1', 'g');
        END IF;
        i := i + 1;
    END LOOP;
    RETURN subject ~ ('^' || rx || '$');
END $$;
CREATE OR REPLACE FUNCTION randomblob(n int) RETURNS bytea LANGUAGE sql VOLATILE AS $$
    SELECT substring(decode(string_agg(replace(gen_random_uuid()::text, '-', ''), ''), 'hex')
                     FROM 1 FOR greatest(n, 1))
    FROM generate_series(1, (greatest(n, 1) + 15) / 16)
$$;
CREATE OR REPLACE FUNCTION hex(b bytea) RETURNS text LANGUAGE sql IMMUTABLE AS $$
    SELECT upper(encode(b, 'hex'))
$$;
CREATE OR REPLACE FUNCTION sqlite_char(VARIADIC codes int[]) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT coalesce(string_agg(chr(c), '' ORDER BY n), '')
    FROM unnest(codes) WITH ORDINALITY AS u(c, n) WHERE c > 0
$$;
"""

#: Moves each identity counter past the largest key stored (a migration that rebuilds a
#: table copies its rows with their keys, as SQLite keeps rowids).
RESYNC_IDENTITIES = """
DO $$ DECLARE r record; BEGIN
FOR r IN SELECT table_name, column_name FROM information_schema.columns
         WHERE table_schema = current_schema() AND is_identity = 'YES' LOOP
    EXECUTE format('SELECT setval(pg_get_serial_sequence(%L, %L), '
                   'coalesce((SELECT max(%I) FROM %I), 0) + 1, false)',
                   r.table_name, r.column_name, r.column_name, r.table_name);
END LOOP; END $$
"""


#: The translations kept between processes (:func:`_translated`).
_KEPT = TranslationCache(lambda: translation_namespace())

#: PostgreSQL's own schemas (not attached SQLite databases).
_PG_SCHEMAS = frozenset({"information_schema", "pg_catalog", "pg_temp", "public"})
_NUMBERED = re.compile(r"\?(\d+)")


def numbered_to_named(sql: str, parameters: object) -> tuple[str, object]:
    """SQLite's numbered placeholders (``?1``, reused in one statement) as named ones with
    their values (sqlglot and psycopg know only ``?`` and ``:name``)."""
    if "?" not in sql or not _NUMBERED.search(sql) or not isinstance(parameters, (list, tuple)):
        return sql, parameters
    return (_NUMBERED.sub(r":p\1", sql),
            {f"p{number}": value for number, value in enumerate(parameters, start=1)})


#: ``IN (?, ?, ...)``: a list of bare placeholders, whose length varies with the call.
_PLACEHOLDER_LIST = re.compile(r"\bIN\s*\(\s*\?(?:\s*,\s*\?)+\s*\)", re.IGNORECASE)
_LIST_MARK = re.compile(r"%\(in_list_(\d+)\)s")


def in_chunks(ids: Iterable[str], size: int = 500) -> Iterator[tuple[str, list[str]]]:
    """The distinct ``ids`` in lists of at most ``size``, each with the ``?, ?, ...`` of its
    ``IN (...)``: a read of many ids stays under the engines' parameter limits."""
    wanted = list(dict.fromkeys(ids))
    for start in range(0, len(wanted), size):
        chunk = wanted[start : start + size]
        yield ", ".join("?" * len(chunk)), chunk


def to_postgres(sql: str) -> str:
    """The PostgreSQL text of one statement the store writes in SQLite's dialect. Each ``IN (?,
    ?, ...)`` list is translated as one marker and expanded back: a chunked lookup whose list
    length changes every call is parsed once."""
    lengths = [m.group(0).count("?") for m in _PLACEHOLDER_LIST.finditer(sql)]
    if not lengths:
        return _translated(sql)
    k = iter(range(len(lengths)))
    shape = _translated(_PLACEHOLDER_LIST.sub(lambda m: f"IN (:in_list_{next(k)})", sql))
    return _LIST_MARK.sub(lambda m: ", ".join(["%s"] * lengths[int(m.group(1))]), shape)


@lru_cache(maxsize=8192)
def _translated(sql: str) -> str:
    """:func:`to_postgres` of one SQL text: kept in memory, and between processes in the
    cache folder (:mod:`evalcore.store.translation_cache`), else made by sqlglot."""
    kept = _KEPT.get(sql)
    if kept is not None:
        return kept
    translated = _sqlglot_translation(sql)
    _KEPT.put(sql, translated)
    return translated


def _sqlglot_translation(sql: str) -> str:
    """One SQL text parsed by sqlglot, rewritten (:func:`_rewrite`) and written in
    PostgreSQL's dialect."""
    import sqlglot

    statements = [s for s in sqlglot.parse(sql, read="sqlite") if s is not None]
    return ";\n".join(_rewrite(tree).sql(dialect="postgres") for tree in statements)


def translation_namespace() -> str:
    """The hash of everything a translation depends on besides its SQL text: this module's
    source, sqlglot's version and where it is installed (read without importing it), the
    Python version and the indexes ``INDEXED BY`` may name (:func:`register_indexes`)."""
    import importlib.util

    spec = importlib.util.find_spec("sqlglot")
    folders = list(spec.submodule_search_locations or []) if spec is not None else []
    try:
        version = (Path(folders[0]) / "_version.py").read_bytes() if folders else b""
    except OSError:
        version = b""
    if not version:
        import sqlglot

        version = sqlglot.__version__.encode("utf-8")
    digest = hashlib.sha256(Path(__file__).read_bytes())
    for part in (version, repr(folders).encode("utf-8"), sys.version.encode("utf-8"),
                 repr(sorted(_INDEX_COLUMNS.items())).encode("utf-8")):
        digest.update(b"\0" + part)
    return digest.hexdigest()


def _rewrite(tree: "sqlglot.exp.Expression") -> "sqlglot.exp.Expression":  # noqa: F821
    """The constructs sqlglot leaves in SQLite's dialect, rewritten on the syntax tree."""
    from sqlglot import exp

    for node in list(tree.find_all(exp.Insert)):
        if str(node.args.get("alternative") or "").upper() == "IGNORE":
            node.set("alternative", None)
            node.set("conflict", exp.OnConflict(action=exp.var("DO NOTHING")))
        elif node.args.get("alternative"):
            raise ValueError(f"INSERT OR {node.args['alternative']} has no PostgreSQL "
                             "translation: write INSERT ... ON CONFLICT (...) DO UPDATE")
    for node in list(tree.find_all(exp.OnConflict)):
        keys = node.args.get("conflict_keys") or []
        node.set("conflict_keys", [k.this if isinstance(k, exp.Ordered) else k for k in keys])
        insert = node.parent
        target = insert.this.this if isinstance(insert.this, exp.Schema) else insert.this
        for assignment in node.args.get("expressions") or []:
            # PostgreSQL: an unqualified column on the right of SET is ambiguous.
            for column in assignment.expression.find_all(exp.Column):
                if not column.table:
                    column.set("table", exp.to_identifier(target.alias_or_name))
    hints: list[tuple[exp.Table, str]] = []
    for node in list(tree.find_all(exp.Table)):
        if node.args.get("indexed") is not None:
            hints.append((node, node.args["indexed"].name))
            node.set("indexed", None)
        schema = node.args.get("db")
        if schema is not None and schema.name.lower() == "main":
            node.set("db", None)
        elif schema is not None and schema.name.lower() == "temp":
            node.set("db", exp.to_identifier("pg_temp"))
        elif schema is not None and schema.name.lower() not in _PG_SCHEMAS:
            # an attached scratch database: the session's temp tables, each under its own
            # name (a temp table named like a store table would hide it)
            node.set("this", exp.to_identifier(f"{schema.name}__{node.name}"))
            node.set("db", exp.to_identifier("pg_temp"))
        if isinstance(node.this, exp.Anonymous) and node.this.name.lower() == "json_each":
            (argument,) = node.this.expressions
            node.set("this", exp.Anonymous(this="jsonb_array_elements_text",
                                           expressions=[_cast(argument, "JSONB")]))
    for number, node in enumerate(tree.find_all(exp.Subquery)):
        # PostgreSQL (before 16) wants a name for a subquery in FROM; SQLite does not
        if isinstance(node.parent, (exp.From, exp.Join)) and not node.alias:
            node.set("alias", exp.TableAlias(this=exp.to_identifier(f"subquery_{number}")))
    for node in list(tree.find_all(exp.Connector, exp.Not, exp.Where, exp.Join)):
        _integer_truth(node)
    _truth_values(tree)
    for node in list(tree.find_all(exp.Glob)):
        node.replace(exp.Anonymous(this="sqlite_glob",
                                   expressions=[node.expression, node.this]))
    for select in list(tree.find_all(exp.Select)):
        _bare_columns(select)
    for node in list(tree.find_all(exp.JSONExtract, exp.JSONExtractScalar)):
        # SQLite reads JSON from text columns; PostgreSQL's JSON functions take json
        if not isinstance(node.this, exp.Cast):
            node.this.replace(_cast(node.this.copy(), "JSON"))
    for node in list(tree.find_all(exp.GroupConcat)):  # STRING_AGG takes text only
        target = node.this.expressions[0] if isinstance(node.this, exp.Distinct) else node.this
        target.replace(_cast(target.copy(), "TEXT"))
    for node in list(tree.find_all(exp.JSONArrayAgg)):  # SQLite: '[]' over no rows
        empty = exp.Literal.string("[]")
        node.replace(exp.Coalesce(this=_cast(node.copy(), "TEXT"), expressions=[empty]))
    for node in list(tree.find_all(exp.Anonymous)):  # SQLite's TOTAL: a float, 0.0 over none
        if node.name.lower() == "total" and len(node.expressions) == 1:
            total = exp.Sum(this=_cast(node.expressions[0].copy(), "DOUBLE"))
            node.replace(exp.Coalesce(this=total, expressions=[exp.Literal.number("0.0")]))
    for node in list(tree.find_all(exp.Chr)):
        node.replace(_char(list(node.expressions)))
    _indexed_order(tree, hints)
    return tree


def _cast(expression: "sqlglot.exp.Expression", to: str) -> "sqlglot.exp.Cast":  # noqa: F821
    """``CAST(expression AS to)``."""
    from sqlglot import exp

    return exp.Cast(this=expression, to=exp.DataType.build(to))


def _char(codes: list["sqlglot.exp.Expression"]) -> "sqlglot.exp.Expression":  # noqa: F821
    """SQLite's ``char(c, ...)``: ``chr(c) || ...`` when every code is a positive integer
    literal (a separator: a constant the server folds once, where a call of the
    ``sqlite_char`` function would run per row and keep the query off parallel workers),
    else ``sqlite_char(...)``."""
    from sqlglot import exp

    if codes and all(isinstance(c, exp.Literal) and c.is_int and int(c.name) > 0
                     for c in codes):
        parts = [exp.Anonymous(this="chr", expressions=[c.copy()]) for c in codes]
        joined: exp.Expression = parts[0]
        for part in parts[1:]:
            joined = exp.DPipe(this=joined, expression=part)
        return joined
    return exp.Anonymous(this="sqlite_char", expressions=codes)


def _indexed_order(tree: "sqlglot.exp.Expression",  # noqa: F821
                   hints: list[tuple["sqlglot.exp.Table", str]]) -> None:  # noqa: F821
    """SQLite scans a table read ``INDEXED BY`` an index in the index's order, and
    ``group_concat`` concatenates in scan order (the store relies on it: a query's labels in
    unit id order). On PostgreSQL, a query with a ``STRING_AGG`` reads such a table from a
    derived table of the same name sorted by the index's columns: an aggregate takes its rows in
    its input's order, and a sorted subquery is not merged away (an ``ORDER BY`` in each
    ``STRING_AGG`` would sort every group once per aggregate)."""
    from sqlglot import exp

    for table, index in hints:
        select = table.find_ancestor(exp.Select)
        if select is None or not any(node.find_ancestor(exp.Select) is select
                                     for node in select.find_all(exp.GroupConcat)):
            continue
        if index.lower() not in _INDEX_COLUMNS:
            raise ValueError(f"INDEXED BY {index}: no migration of the store creates that index")
        name = table.alias_or_name
        inner = exp.select("*").from_(exp.Table(this=table.this.copy())).order_by(
            *[exp.Ordered(this=exp.column(c), nulls_first=False)
              for c in _INDEX_COLUMNS[index.lower()]])
        table.replace(exp.Subquery(this=inner,
                                   alias=exp.TableAlias(this=exp.to_identifier(name))))


_CREATE_INDEX = re.compile(r"CREATE\s+(?:UNIQUE\s+)?INDEX\s+(?:IF\s+NOT\s+EXISTS\s+)?(\w+)\s+"
                           r"ON\s+\w+\s*\(([^)]*)\)", re.IGNORECASE)


#: Index name (lower case) -> its columns in order: the store's indexes as its migrations
#: last define them (:func:`register_indexes`, which :mod:`evalcore.store.schema` calls).
_INDEX_COLUMNS: dict[str, tuple[str, ...]] = {}


def register_indexes(statements: Iterable[str]) -> None:
    """Learn the columns of every index the schema ``statements`` create (a later
    definition of a name replaces an earlier one)."""
    before = dict(_INDEX_COLUMNS)
    for statement in statements:
        for name, listed in _CREATE_INDEX.findall(statement):
            _INDEX_COLUMNS[name.lower()] = tuple(part.split()[0] for part in listed.split(","))
    if _INDEX_COLUMNS != before:  # a translation may depend on them: forget the old ones
        _translated.cache_clear()
        _KEPT.reset()


def _integer_truth(node: "sqlglot.exp.Expression") -> None:  # noqa: F821
    """SQLite takes an integer as a truth value (``WHERE ... AND 1``, what a filter with
    nothing to filter writes, or ``AND ?`` bound to a bool); PostgreSQL wants a boolean:
    ``1`` / ``0`` there become ``TRUE`` / ``FALSE``, a parameter ``CAST(? AS BIGINT) <> 0``."""
    from sqlglot import exp

    for key in ("on",) if isinstance(node, exp.Join) else ("this", "expression"):
        operand = node.args.get(key)
        if isinstance(operand, exp.Paren):
            operand = operand.this
        literal = isinstance(operand, exp.Literal) and not operand.is_string
        if literal and operand.this in ("0", "1"):
            operand.replace(exp.true() if operand.this == "1" else exp.false())
        elif isinstance(operand, exp.Placeholder):  # a parameter bound to 0 / 1 (a bool)
            zero = exp.Literal.number(0)
            nonzero = exp.NEQ(this=_cast(operand.copy(), "BIGINT"), expression=zero)
            operand.replace(exp.Paren(this=nonzero))


def _wants_truth(node: "sqlglot.exp.Expression") -> bool:  # noqa: F821
    """Does PostgreSQL take ``node`` (a truth value) as it is where it stands: a condition
    (``WHERE``, ``HAVING``, ``ON``, ``WHEN``, an operand of ``AND`` / ``OR`` / ``NOT``, a
    ``CHECK``) or an assignment ``SET a = ...``? Anywhere else it is used as a value."""
    from sqlglot import exp

    while isinstance(node.parent, exp.Paren):
        node = node.parent
    parent, key = node.parent, node.arg_key
    if parent is None:
        return True
    conditions = "Where Having Qualify Connector Not Xor CheckColumnConstraint Check"
    if isinstance(parent, tuple(getattr(exp, name) for name in conditions.split())):
        return True
    if isinstance(parent, exp.Join):
        return key == "on"
    if isinstance(parent, exp.If) and key == "this":
        case = parent.parent
        return not (isinstance(case, exp.Case) and case.args.get("this") is not None)
    if isinstance(parent, (exp.Update, exp.OnConflict)) and key == "expressions":
        return True  # the assignment itself; its right side is looked at on its own
    return False


def _truth_values(tree: "sqlglot.exp.Expression") -> None:  # noqa: F821
    """SQLite's comparisons are integers (``MAX(kind = 'undo')``, ``SUM(a = b)``, ``CASE WHEN
    c THEN a = b ELSE 0 END``, ``(a = b) + 1``, a comparison in a ``SELECT`` list);
    PostgreSQL's are booleans, which aggregates, arithmetic and ``CASE`` mixed with integers
    refuse. A truth value standing where a value is wanted becomes ``CAST(... AS INT)``:
    0 / 1 (NULL stays NULL), as on SQLite. Conditions keep their booleans."""
    from sqlglot import exp

    # sqlglot's expressions valued as truth
    truth = ("EQ NEQ NullSafeEQ NullSafeNEQ GT GTE LT LTE Is Like ILike Glob In Between Exists "
             "RegexpLike And Or Xor Not Boolean")
    for node in list(tree.find_all(*(getattr(exp, name) for name in truth.split()))):
        if _wants_truth(node):
            continue
        target = node
        while isinstance(target.parent, exp.Paren):  # CAST(...) brackets it already
            target = target.parent
        target.replace(_cast(node.copy(), "INT"))


def _bare_columns(select: "sqlglot.exp.Select") -> None:  # noqa: F821
    """SQLite's bare-column rule: in ``SELECT g, x, max(k) ... GROUP BY g`` the bare ``x``
    comes from the row holding the ``max(k)`` (``min``: the least). PostgreSQL refuses a bare
    column: it becomes ``(array_agg(x ORDER BY k DESC NULLS LAST))[1]``, the same value."""
    import sqlglot
    from sqlglot import exp

    group = select.args.get("group")
    if group is None:
        return
    projected = [p.unalias() for p in select.expressions]
    extremes = [p for p in projected if isinstance(p, (exp.Max, exp.Min)) and not p.expressions]
    if len(extremes) != 1:
        return
    extreme = extremes[0]
    grouped = {g.sql() for g in group.expressions}
    direction = "DESC" if isinstance(extreme, exp.Max) else "ASC"
    for projection in select.expressions:
        column = projection.unalias()
        if not isinstance(column, exp.Column) or {column.sql(), column.name} & grouped:
            continue
        picked = sqlglot.parse_one(
            f"(ARRAY_AGG(bare_x ORDER BY bare_k {direction} NULLS LAST))[1]", read="postgres")
        placeholders = {c.name: c for c in picked.find_all(exp.Column)}
        placeholders["bare_x"].replace(column.copy())
        placeholders["bare_k"].replace(extreme.this.copy())
        column.replace(picked if projection is not column else exp.alias_(picked, column.name))


# -- schema ---------------------------------------------------------------------------

_TRIGGER = re.compile(
    r"CREATE\s+TRIGGER\s+(?P<name>\w+)\s+(?P<when>BEFORE|AFTER)\s+(?P<event>INSERT|UPDATE|DELETE)"
    r"(?:\s+OF\s+(?P<columns>[\w\s,]+?))?\s+ON\s+(?P<table>\w+)"
    r"(?:\s+WHEN\s+(?P<condition>.*?))?\s+BEGIN\s+(?P<body>.*)\s*END\s*;?\s*$",
    re.IGNORECASE | re.DOTALL)
_DROP_TRIGGER = re.compile(r"DROP\s+TRIGGER\s+(?:IF\s+EXISTS\s+)?(\w+)\s*;?\s*$", re.IGNORECASE)
_RAISE = re.compile(r"SELECT\s+RAISE\s*\(\s*ABORT\s*,\s*'((?:[^']|'')*)'\s*\)", re.IGNORECASE)
_CREATE_TABLE = re.compile(r"CREATE\s+(?:TEMP\w*\s+)?TABLE", re.IGNORECASE)


def schema_to_postgres(statement: str) -> list[str]:
    """The PostgreSQL statements doing what one schema statement of a migration does on
    SQLite (none for the FTS5 index, which PostgreSQL does not have)."""
    if "documents_fts" in statement:
        return []
    if (match := _TRIGGER.match(statement.strip())) is not None:
        return _trigger(match)
    if (match := _DROP_TRIGGER.match(statement.strip())) is not None:
        # SQLite names no table; PostgreSQL needs it, so it is looked up
        name = match.group(1)
        return ["DO $$ DECLARE t regclass; BEGIN "
                f"SELECT tgrelid::regclass INTO t FROM pg_trigger WHERE tgname = '{name}'; "
                f"IF t IS NOT NULL THEN EXECUTE format('DROP TRIGGER {name} ON %s', t); END IF; "
                f"DROP FUNCTION IF EXISTS {name}_fn(); END $$"]
    if _CREATE_TABLE.match(statement.strip()) or re.match(
            r"ALTER\s+TABLE\s+\w+\s+ADD", statement.strip(), re.IGNORECASE):
        return [_table(statement)]
    return [to_postgres(statement)]


def _table(statement: str) -> str:
    """A ``CREATE TABLE`` or ``ALTER TABLE ... ADD COLUMN`` with PostgreSQL's types (see the
    module docstring)."""
    import sqlglot
    from sqlglot import exp

    without_rowid = bool(re.search(r"\)\s*WITHOUT\s+ROWID\s*;?\s*$", statement, re.IGNORECASE))
    statement = re.sub(r"WITHOUT\s+ROWID", "", statement, flags=re.IGNORECASE)
    tree = sqlglot.parse_one(statement, read="sqlite")
    integer_key = False
    for column in tree.find_all(exp.ColumnDef):
        kind = column.args.get("kind")
        constraints = column.args.get("constraints") or []
        if kind is not None and kind.this in (exp.DataType.Type.INT, exp.DataType.Type.BIGINT):
            column.set("kind", exp.DataType.build("BIGINT"))
            if not any(isinstance(c.kind, exp.PrimaryKeyColumnConstraint) for c in constraints):
                continue
            integer_key = True
            added: exp.Expression = exp.GeneratedAsIdentityColumnConstraint(this=False)
        elif kind is not None and kind.this == exp.DataType.Type.TEXT:
            added = exp.CollateColumnConstraint(this=exp.to_identifier("C", quoted=True))
        else:
            continue
        column.set("constraints", [exp.ColumnConstraint(kind=added), *constraints])
    if isinstance(tree, exp.Create) and isinstance(tree.this, exp.Schema) and not (
            without_rowid or integer_key):
        kinds = (exp.GeneratedAsIdentityColumnConstraint(this=False), exp.UniqueColumnConstraint())
        tree.this.expressions.append(exp.ColumnDef(
            this=exp.to_identifier("rowid"), kind=exp.DataType.build("BIGINT"),
            constraints=[exp.ColumnConstraint(kind=kind) for kind in kinds]))
    return _rewrite(tree).sql(dialect="postgres")


def _trigger(match: re.Match[str]) -> list[str]:
    """A SQLite trigger as a PL/pgSQL function and a row trigger calling it."""
    name, table, event = match["name"], match["table"], match["event"].upper()
    body: list[str] = []
    # no ``;`` appears inside a string in the schema
    for statement in [s.strip() for s in match["body"].split(";") if s.strip()]:
        raised = _RAISE.fullmatch(statement.strip().rstrip(";").strip())
        if raised is not None:
            body.append(f"RAISE EXCEPTION '{raised.group(1)}' USING ERRCODE = '23000';")
        else:
            body.append(to_postgres(statement) + ";")
    steps = "\n    ".join(body)
    if match["condition"]:
        condition = to_postgres(f"SELECT 1 WHERE {match['condition']}")[len("SELECT 1 WHERE "):]
        steps = f"IF {condition} THEN\n    {steps}\n    END IF;"
    if match["when"].upper() == "AFTER":
        result = "NULL"
    else:
        result = "OLD" if event == "DELETE" else "NEW"
    of = f" OF {match['columns'].strip()}" if match["columns"] else ""
    return [
        f"CREATE OR REPLACE FUNCTION {name}_fn() RETURNS trigger LANGUAGE plpgsql AS $$\n"
        f"BEGIN\n    {steps}\n    RETURN {result};\nEND $$",
        f"CREATE TRIGGER {name} {match['when'].upper()} {event}{of} ON {table} "
        f"FOR EACH ROW EXECUTE FUNCTION {name}_fn()",
    ]


def attach_scratch(conn: object, schema: str, path: str) -> None:
    """Attach a scratch database (thrown away whatever happens: no journal, no fsync) as
    ``schema``. On PostgreSQL its tables are the session's temp tables (nothing to attach)."""
    if is_postgres(conn):
        return
    conn.execute(f"ATTACH DATABASE ? AS {schema}", [path])  # type: ignore[attr-defined]
    conn.execute(f"PRAGMA {schema}.journal_mode = OFF")  # type: ignore[attr-defined]
    conn.execute(f"PRAGMA {schema}.synchronous = OFF")  # type: ignore[attr-defined]


def detach_scratch(conn: object, schema: str, tables: Iterable[str]) -> None:
    """Detach what :func:`attach_scratch` attached (on PostgreSQL, drop its ``tables``)."""
    if is_postgres(conn):
        for table in tables:
            conn.execute(f"DROP TABLE IF EXISTS {schema}.{table}")  # type: ignore[attr-defined]
        return
    conn.execute(f"DETACH DATABASE {schema}")  # type: ignore[attr-defined]


def store_tables(db: object, column: str | None = None) -> list[str]:
    """The store's own tables (not the engine's, not the FTS index's), by name; with
    ``column``, those having it."""
    return [name for (name,) in _catalog(db, "tables", [column, column])]


def row_key(db: object, table: str) -> str:
    """``rowid`` where :func:`copy_columns` holds it, else the table's primary key columns (an
    integer key, which a SQLite rowid aliases, or the key of a table without a rowid)."""
    if "rowid" in copy_columns(db, table):
        return "rowid"
    return ", ".join(name for (name,) in _catalog(db, "primary_key", [table]))


def main_file(db: object) -> str:
    """The file of a SQLite store's main database; "" for one in memory or on PostgreSQL
    (the caches keyed by the store file then keep to the connection)."""
    if is_postgres(db):
        return ""
    files = {name: file for _, name, file in _raw(db).execute("PRAGMA database_list")}
    return files.get("main") or ""


def server_place(db: object) -> str:
    """Where a PostgreSQL store is kept: server, database and schema, with the database's and
    the schema's object ids (a database made again under the same name, or copied from a
    template, is another place), no password; "" on SQLite (see :func:`main_file`)."""
    if not is_postgres(db):
        return ""
    raw = _raw(db)
    info = raw.info
    schema, database_oid, schema_oid = raw.execute(
        "SELECT current_schema(), d.oid, n.oid FROM pg_database d, pg_namespace n "
        "WHERE d.datname = current_database() AND n.nspname = current_schema()").fetchone()
    return (f"postgresql://{info.host}:{info.port}/{info.dbname}/{schema}"
            f":{database_oid}.{schema_oid}")


# -- copying a whole store (evalcore.store.store_copy) --------------------------------------

#: Questions to the engine's catalogue: name -> (SQLite's SQL, PostgreSQL's SQL), both run on
#: the engine's own connection (:func:`_catalog`).
_CATALOG = {
    "tables": (
        """SELECT m.name FROM sqlite_master m WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%'
        AND m.name NOT LIKE 'documents_fts%' AND (? IS NULL OR EXISTS (
        SELECT 1 FROM pragma_table_info(m.name) c WHERE c.name = ?)) ORDER BY m.name""",
        """SELECT t.table_name FROM information_schema.tables t
        WHERE t.table_schema = current_schema() AND t.table_type = 'BASE TABLE'
        AND t.table_name <> 'schema_version' AND (CAST(%s AS TEXT) IS NULL OR EXISTS (
        SELECT 1 FROM information_schema.columns c WHERE c.table_schema = t.table_schema
        AND c.table_name = t.table_name AND c.column_name = %s)) ORDER BY 1""",
    ),
    "primary_key": (
        "SELECT name FROM pragma_table_info(?) WHERE pk > 0 ORDER BY pk",
        """SELECT a.attname FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid
        AND a.attnum = ANY(i.indkey) WHERE i.indrelid = CAST(%s AS regclass)
        AND i.indisprimary ORDER BY array_position(i.indkey, a.attnum)""",
    ),
    # the foreign keys among the store's tables: (table, the table it references)
    "references": (
        """SELECT m.name, f."table" FROM sqlite_master m, pragma_foreign_key_list(m.name) f
        WHERE m.type = 'table'""",
        """SELECT s.relname, d.relname FROM pg_constraint c
        JOIN pg_class s ON s.oid = c.conrelid JOIN pg_class d ON d.oid = c.confrelid
        JOIN pg_namespace n ON n.oid = s.relnamespace
        WHERE c.contype = 'f' AND n.nspname = current_schema()""",
    ),
    "has_table": (
        "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?)",
        "SELECT to_regclass(%s) IS NOT NULL",
    ),
}


def _catalog(db: object, question: str, params: list | tuple = ()) -> Any:
    """The cursor of one of the :data:`_CATALOG` questions, asked of ``db``'s engine."""
    sqlite, postgres = _CATALOG[question]
    return _raw(db).execute(postgres if is_postgres(db) else sqlite, params)


def _raw(db: object) -> Any:
    """The engine's own connection: psycopg's on PostgreSQL, sqlite3's on SQLite."""
    conn = getattr(db, "conn", db)
    return conn.raw if is_postgres(conn) else conn  # type: ignore[attr-defined]


def tables_in_dependency_order(db: object) -> list[str]:
    """The store's tables (:func:`store_tables`: not the engine's, not PostgreSQL's
    ``schema_version``), each after every table its foreign keys reference, ties by name:
    the order in which a copy inserts them."""
    names = set(store_tables(db))
    needs: dict[str, set[str]] = {name: set() for name in names}
    for table, referenced in _catalog(db, "references"):
        if table in needs and referenced in names and referenced != table:
            needs[table].add(referenced)
    ordered: list[str] = []
    while needs:
        ready = sorted(name for name, before in needs.items() if not before)
        if not ready:
            raise ValueError("the store's foreign keys form a cycle among "
                             f"{', '.join(sorted(needs))}: no insertion order satisfies them")
        for name in ready:
            ordered.append(name)
            del needs[name]
        for before in needs.values():
            before.difference_update(ready)
    return ordered


def copy_columns(db: object, table: str) -> list[str]:
    """The columns holding a row of ``table`` as stored: its declared columns and, for a table
    whose rowid is not its integer key, ``rowid`` (SQLite's hidden one; PostgreSQL's
    identity column of that name), so a copy keeps the row's identity."""
    raw = _raw(db)
    if is_postgres(db):
        return [name for (name,) in raw.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_schema = "
            "current_schema() AND table_name = %s ORDER BY ordinal_position", [table])]
    info = raw.execute("SELECT name, upper(type), pk FROM pragma_table_info(?) "
                       "ORDER BY cid", [table]).fetchall()
    (create,) = raw.execute("SELECT sql FROM sqlite_master WHERE name = ?",
                            [table]).fetchone()
    keys = [kind for _, kind, pk in info if pk]
    without_rowid = bool(re.search(r"\)\s*WITHOUT\s+ROWID\s*;?\s*$", create, re.IGNORECASE))
    integer_key = keys == ["INTEGER"]
    return [name for name, _, _ in info] + ([] if without_rowid or integer_key else ["rowid"])


#: About how many bytes of values one batch of :func:`read_rows` holds (wide rows, such as
#: packed rankings, come in smaller batches).
BATCH_BYTES = 4 << 20


def read_rows(db: object, table: str, columns: list[str], batch: int) -> Iterator[list[tuple]]:
    """The rows of ``table`` (``columns``) in row key order, streamed in lists of at most
    ``batch`` rows and about :data:`BATCH_BYTES` (on PostgreSQL a server-side cursor, which
    needs an open transaction: :func:`transaction.read_snapshot`)."""
    sql = (f"SELECT {', '.join(_quoted(c) for c in columns)} FROM {_quoted(table)} "
           f"ORDER BY {row_key(db, table)}")
    raw = _raw(db)
    if is_postgres(db):
        cursor = raw.cursor(name=f"copy_{table}")
    else:
        cursor = raw.cursor()
    size = min(batch, 64)  # the first rows tell how wide they are
    try:
        cursor.execute(sql)
        while rows := cursor.fetchmany(size):
            yield rows
            sample = rows[:64]
            width = sum(len(v) for row in sample for v in row
                        if isinstance(v, (str, bytes))) / len(sample) + 8 * len(columns)
            size = max(1, min(batch, int(BATCH_BYTES / width)))
    finally:
        cursor.close()


def write_rows(db: object, table: str, columns: list[str],
               batches: Iterable[Iterable[tuple]]) -> None:
    """Insert the rows of ``batches`` into ``table`` as given (keys and rowids included), inside
    the caller's transaction: one ``COPY`` on PostgreSQL (one round trip), batched inserts on
    SQLite."""
    names = ", ".join(_quoted(c) for c in columns)
    raw = _raw(db)
    if is_postgres(db):
        with raw.cursor() as cursor, cursor.copy(
                f"COPY {_quoted(table)} ({names}) FROM STDIN") as copy:
            for rows in batches:
                for row in rows:
                    copy.write_row(row)
        return
    sql = f"INSERT INTO {_quoted(table)} ({names}) VALUES ({', '.join('?' * len(columns))})"
    for rows in batches:
        raw.executemany(sql, rows)


def has_rows(db: object, table: str) -> bool:
    """Does ``table`` hold any row?"""
    return _raw(db).execute(
        f"SELECT EXISTS (SELECT 1 FROM {_quoted(table)})").fetchone()[0] in (1, True)


def count_rows(db: object, table: str) -> int:
    return int(_raw(db).execute(f"SELECT count(*) FROM {_quoted(table)}").fetchone()[0])


_INSERT_TRIGGER = re.compile(r"^\s*CREATE\s+TRIGGER\s+\w+\s+(BEFORE|AFTER|INSTEAD\s+OF)\s+INSERT\b",
                             re.IGNORECASE)


def _triggers(db: object) -> list[tuple[str, str, bool, bool]]:
    """(table, trigger, enabled, fires on insert) of the store's own triggers, by table and
    name. A SQLite trigger exists or does not (always enabled); on PostgreSQL ``ALTER TABLE
    ... DISABLE`` may leave one off."""
    if is_postgres(db):
        sql = ("SELECT c.relname, t.tgname, t.tgenabled <> 'D', (t.tgtype & 4) <> 0 "
               "FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n "
               "ON n.oid = c.relnamespace WHERE NOT t.tgisinternal AND n.nspname = current_schema()")
        return sorted(_raw(db).execute(sql).fetchall())
    sql = "SELECT tbl_name, name, sql FROM sqlite_master WHERE type = 'trigger'"
    return sorted((table, name, True, bool(_INSERT_TRIGGER.match(create)))
                  for table, name, create in _raw(db).execute(sql))


def insert_triggers(db: object) -> list[tuple[str, str]]:
    """(table, trigger) of every trigger that fires on an insert, by table and name (the
    derived rows they write -- unit codes, corpus generations, suspects -- and the seals
    they check are in a copied store already)."""
    return [(table, name) for table, name, _, on_insert in _triggers(db) if on_insert]


def disabled_triggers(db: object) -> list[str]:
    """The triggers of the store that are switched off (always none on SQLite)."""
    return sorted(name for _, name, enabled, _ in _triggers(db) if not enabled)


@contextmanager
def insert_triggers_suspended(db: object) -> Iterator[list[tuple[str, str]]]:
    """Inside the caller's write transaction: the :func:`insert_triggers` are off until the block
    ends without an error (disabled on PostgreSQL, dropped and created again on SQLite); a
    failed block's rollback restores them. The append-only triggers are never touched."""
    triggers = insert_triggers(db)
    raw = _raw(db)
    if is_postgres(db):
        for table, name in triggers:
            raw.execute(f"ALTER TABLE {_quoted(table)} DISABLE TRIGGER {_quoted(name)}")
        yield triggers
        for table, name in triggers:
            raw.execute(f"ALTER TABLE {_quoted(table)} ENABLE TRIGGER {_quoted(name)}")
        return
    created = [raw.execute("SELECT sql FROM sqlite_master WHERE type = 'trigger' "
                           "AND name = ?", [name]).fetchone()[0] for _, name in triggers]
    for _, name in triggers:
        raw.execute(f"DROP TRIGGER {_quoted(name)}")
    yield triggers
    for sql in created:
        raw.execute(sql)


# -- checking a store (evalcore.store.backup.verify_store) ---------------------------------

_PG_INTEGRITY = """
SELECT 'index ' || c.relname || ' is not valid (rebuild it: REINDEX INDEX ' || c.relname || ')'
FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = current_schema() AND NOT (i.indisvalid AND i.indisready)
UNION ALL
SELECT 'constraint ' || c.conname || ' of ' || r.relname || ' is not validated'
FROM pg_constraint c JOIN pg_class r ON r.oid = c.conrelid
JOIN pg_namespace n ON n.oid = r.relnamespace
WHERE n.nspname = current_schema() AND NOT c.convalidated
UNION ALL
SELECT 'the foreign key trigger ' || t.tgname || ' of ' || r.relname || ' is disabled'
FROM pg_trigger t JOIN pg_class r ON r.oid = t.tgrelid
JOIN pg_namespace n ON n.oid = r.relnamespace
WHERE n.nspname = current_schema() AND t.tgisinternal AND t.tgenabled = 'D'
ORDER BY 1
"""
#: Each foreign key of the store's tables on PostgreSQL: child, its columns, parent, its columns.
_PG_FOREIGN_KEYS = """
SELECT s.relname, array_agg(sa.attname ORDER BY k.n), d.relname, array_agg(da.attname ORDER BY k.n)
FROM pg_constraint c
JOIN pg_class s ON s.oid = c.conrelid JOIN pg_class d ON d.oid = c.confrelid
JOIN pg_namespace ns ON ns.oid = s.relnamespace
CROSS JOIN LATERAL unnest(c.conkey, c.confkey) WITH ORDINALITY AS k(child, parent, n)
JOIN pg_attribute sa ON sa.attrelid = c.conrelid AND sa.attnum = k.child
JOIN pg_attribute da ON da.attrelid = c.confrelid AND da.attnum = k.parent
WHERE c.contype = 'f' AND ns.nspname = current_schema()
GROUP BY c.oid, s.relname, d.relname ORDER BY 1, 3
"""


def integrity_check(db: object) -> list[str]:
    """``["ok"]``, or what the engine finds wrong: SQLite's ``PRAGMA integrity_check``; on
    PostgreSQL (which checks its own pages) an invalid index, a constraint not validated or a
    disabled foreign key trigger."""
    raw = _raw(db)
    if is_postgres(db):
        found = [text for (text,) in raw.execute(_PG_INTEGRITY)]
        return found or ["ok"]
    return [r[0] for r in raw.execute("PRAGMA integrity_check")]


def foreign_key_violations(db: object) -> int:
    """How many rows reference a row that does not exist (SQLite's ``PRAGMA
    foreign_key_check``; on PostgreSQL each foreign key checked by an anti-join)."""
    raw = _raw(db)
    if not is_postgres(db):
        return len(raw.execute("PRAGMA foreign_key_check").fetchall())
    total = 0
    for child, columns, parent, keys in raw.execute(_PG_FOREIGN_KEYS).fetchall():
        present = " AND ".join(f"c.{_quoted(col)} IS NOT NULL" for col in columns)
        joined = " AND ".join(f"p.{_quoted(k)} = c.{_quoted(col)}" for col, k in zip(columns, keys, strict=True))
        total += int(raw.execute(
            f"SELECT count(*) FROM {_quoted(child)} c WHERE {present} AND NOT EXISTS "
            f"(SELECT 1 FROM {_quoted(parent)} p WHERE {joined})").fetchone()[0])
    return total


def active_triggers(db: object) -> list[str]:
    """The names of the store's own triggers that fire (on PostgreSQL: not disabled), sorted."""
    return sorted(name for _, name, enabled, _ in _triggers(db) if enabled)


def reset_identities(db: object) -> None:
    """After rows were copied in with their keys: on PostgreSQL each identity counter moved
    past the largest key (the next insert does not collide); SQLite's rowids need nothing."""
    if is_postgres(db):
        _raw(db).execute(RESYNC_IDENTITIES)


def has_table(db: object, table: str) -> bool:
    """Does the store hold ``table``? Asked of the catalogue rather than tried: on
    PostgreSQL a failed statement aborts the open transaction."""
    return _catalog(db, "has_table", [table]).fetchone()[0] in (1, True)


def stored_schema_version(db: object) -> int:
    """The store's schema version: ``PRAGMA user_version`` on SQLite, the one row of
    ``schema_version`` on PostgreSQL (0 before the first migration)."""
    raw = _raw(db)
    if not is_postgres(db):
        return int(raw.execute("PRAGMA user_version").fetchone()[0])
    if has_table(db, "schema_version"):
        row = raw.execute("SELECT version FROM schema_version").fetchone()
        return int(row[0]) if row else 0
    return 0


def set_schema_version(db: object, version: int) -> None:
    """Record ``version`` as the store's schema version (inside the migration's transaction)."""
    raw = _raw(db)
    if not is_postgres(db):
        raw.execute(f"PRAGMA user_version = {int(version)}")
        return
    raw.execute("CREATE TABLE IF NOT EXISTS schema_version (version BIGINT NOT NULL)")
    raw.execute("DELETE FROM schema_version")
    raw.execute("INSERT INTO schema_version (version) VALUES (%s)", [version])


def run_schema_statements(db: object, statements: Iterable[str]) -> None:
    """One migration's statements; on PostgreSQL each translated (:func:`schema_to_postgres`),
    with the helper functions created first and the identity counters moved past rows
    copied with their keys."""
    raw = _raw(db)
    if not is_postgres(db):
        for statement in statements:
            raw.execute(statement)
        return
    raw.execute(PG_HELPERS)
    for statement in statements:
        for translated in schema_to_postgres(statement):
            raw.execute(translated)
    raw.execute(RESYNC_IDENTITIES)
    db.conn.forget_schema()


def _quoted(identifier: str) -> str:
    """An identifier in double quotes (both engines), refusing one that needs escaping (the
    store's names never do)."""
    if not re.fullmatch(r"\w+", identifier):
        raise ValueError(f"unexpected identifier {identifier!r} in the store's catalog")
    return f'"{identifier}"'


def is_postgres(db_or_conn: object) -> bool:
    """Is ``db_or_conn`` (a store or its ``.conn``) on PostgreSQL?"""
    conn = getattr(db_or_conn, "conn", db_or_conn)
    return getattr(conn, "dialect", None) == "postgresql"


# -- errors ----------------------------------------------------------------------------


def _errors(name: str) -> tuple[type[BaseException], ...]:
    """sqlite3's error class ``name`` and, when psycopg is loaded, psycopg's. A psycopg error
    can only come from a PostgreSQL connection, which loaded it; a process that never opens
    one never pays for importing it."""
    psycopg = sys.modules.get("psycopg")
    psycopg_name = "Error" if name == "OperationalError" else name
    return (getattr(sqlite3, name),) + (() if psycopg is None else (getattr(psycopg, psycopg_name),))


def database_errors() -> tuple[type[BaseException], ...]:
    """Any error from the store's database, on either engine."""
    return _errors("Error")


def integrity_errors() -> tuple[type[BaseException], ...]:
    """A constraint (unique, foreign key, check, an append-only trigger) refused a write."""
    return _errors("IntegrityError")


def operational_errors() -> tuple[type[BaseException], ...]:
    """The errors a busy store raises (see :func:`is_busy`): on PostgreSQL any psycopg error."""
    return _errors("OperationalError")


#: PostgreSQL SQLSTATEs meaning "another writer held it too long": lock_not_available,
#: serialization_failure, deadlock_detected, query_canceled (the lock or statement timeout).
_PG_BUSY_STATES = frozenset({"55P03", "40001", "40P01", "57014"})


def is_busy(error: BaseException) -> bool:
    """Is ``error`` "the store is busy" (another writer held the write lock too long)? On
    SQLite "database is locked / busy"; on PostgreSQL a lock or statement timeout, a
    serialization failure or a deadlock."""
    if isinstance(error, sqlite3.OperationalError):
        return "locked" in str(error) or "busy" in str(error)
    return getattr(error, "sqlstate", None) in _PG_BUSY_STATES
