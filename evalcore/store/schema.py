"""The store's schema, its version and its forward migrations.

``PRAGMA user_version`` holds the schema version (on PostgreSQL the table
``schema_version``; the same migrations run there, translated by :mod:`evalcore.store.dialect`).
:data:`MIGRATIONS` ``[i]`` takes the store from version ``i`` to ``i + 1`` in its own immediate
transaction; a released migration is never edited, a change is a new entry. Times are
ISO-8601 UTC strings (``2026-06-30T00:00:00Z``); label events, completeness events and the
audit log are append-only (triggers refuse UPDATE and DELETE)."""

import sqlite3
from collections.abc import Callable
from functools import lru_cache

import sqlite_utils

from evalcore.store import dialect
from evalcore.store.transaction import write_transaction
from evalcore.store.trec_ids import backfill_trec_suspects
from evalcore.store.unit_codes import backfill_packed_rankings, backfill_unit_codes


def _split_statements(script: str) -> list[str]:
    """Split a migration script into statements (triggers keep their BEGIN ... END)."""
    statements: list[str] = []
    buffer: list[str] = []
    for line in script.splitlines():
        if line.strip().startswith("--"):
            continue
        buffer.append(line)
        joined = "\n".join(buffer).strip()
        if joined.endswith(";") and sqlite3.complete_statement(joined):
            statements.append(joined)
            buffer = []
    if "\n".join(buffer).strip():
        statements.append("\n".join(buffer).strip())
    return statements

_LABELS = "label_events is append-only: record a new event instead"
_FROZEN = "a frozen reference version is immutable: freeze a new one"
_PINNED = "a pinned protocol is immutable: pin a new one under another name"
_PINNED_DOCUMENTS = "a pinned document set is immutable: pin a new protocol"
_REPORT = "a generated report is immutable"
#: A delete refused unless the row's study is staged (the discard of a failed import).
_UNLESS_STAGED = (" WHEN NOT EXISTS (\n    SELECT 1 FROM studies s WHERE s.study_id = old.study_id"
                  " AND s.staged_by IS NOT NULL)")


def _refuse(name: str, event: str, table: str, message: str, when: str = "") -> str:
    """A trigger refusing ``event`` (UPDATE, DELETE, INSERT) on ``table`` with ``message``."""
    return (f"CREATE TRIGGER {name} BEFORE {event} ON {table}{when}\n"
            f"BEGIN SELECT RAISE(ABORT, '{message}'); END;\n")


def _unchangeable(prefix: str, table: str, message: str, delete_when: str = "") -> str:
    """Triggers ``{prefix}_u`` and ``{prefix}_d`` refusing every update and delete."""
    return (_refuse(f"{prefix}_u", "UPDATE", table, message)
            + _refuse(f"{prefix}_d", "DELETE", table, message, delete_when))


_V1 = """
CREATE TABLE organisations (
    org_id TEXT PRIMARY KEY,
    name TEXT NOT NULL
);

CREATE TABLE studies (
    study_id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    corpus_id TEXT NOT NULL,
    retrieval_unit TEXT NOT NULL DEFAULT 'document',
    relevance_threshold INTEGER NOT NULL DEFAULT 1 CHECK (relevance_threshold BETWEEN 1 AND 4),
    gain TEXT NOT NULL DEFAULT 'linear' CHECK (gain IN ('linear', 'exponential')),
    org_id TEXT REFERENCES organisations(org_id),
    created_at TEXT NOT NULL
);

-- The corpus: documents are shared by the studies that name its corpus_id.
CREATE TABLE documents (
    corpus_id TEXT NOT NULL,
    doc_id TEXT NOT NULL,
    title TEXT NOT NULL DEFAULT '',
    text TEXT NOT NULL DEFAULT '',
    owner_org TEXT,
    created_at TEXT NOT NULL,
    content_hash TEXT NOT NULL,  -- see evalcore.store.hashing.content_hash
    PRIMARY KEY (corpus_id, doc_id)
);

CREATE TABLE queries (
    study_id TEXT NOT NULL REFERENCES studies(study_id),
    query_id TEXT NOT NULL,
    text TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (study_id, query_id)
);

CREATE TABLE runs (
    run_id INTEGER PRIMARY KEY,
    study_id TEXT NOT NULL REFERENCES studies(study_id),
    name TEXT NOT NULL,
    source TEXT NOT NULL CHECK (source IN ('lexical', 'imported')),
    protocol_json TEXT NOT NULL DEFAULT '{}',
    corpus_fingerprint TEXT,
    k INTEGER NOT NULL DEFAULT 10 CHECK (k >= 1),
    scan_complete INTEGER NOT NULL DEFAULT 1,
    created_at TEXT NOT NULL,
    UNIQUE (study_id, name)
);

CREATE TABLE results (
    run_id INTEGER NOT NULL REFERENCES runs(run_id),
    query_id TEXT NOT NULL,
    rank INTEGER NOT NULL CHECK (rank >= 1),
    unit_id TEXT NOT NULL,
    score REAL,
    PRIMARY KEY (run_id, query_id, rank)
) WITHOUT ROWID;

-- Append-only. A relabel is a new event; an undo is a new event (kind 'undo'
-- with gain NULL); an adjudication is a new event of kind 'adjudicate'.
CREATE TABLE label_events (
    event_id INTEGER PRIMARY KEY,
    study_id TEXT NOT NULL REFERENCES studies(study_id),
    query_id TEXT NOT NULL,
    unit_id TEXT NOT NULL,
    kind TEXT NOT NULL DEFAULT 'label' CHECK (kind IN ('label', 'undo', 'adjudicate')),
    gain INTEGER CHECK (gain IS NULL OR gain BETWEEN 0 AND 4),
    annotator TEXT NOT NULL,
    created_at TEXT NOT NULL,
    note TEXT NOT NULL DEFAULT '',
    source TEXT NOT NULL DEFAULT 'app'
);
CREATE INDEX label_events_by_query ON label_events (study_id, query_id, unit_id, event_id);

-- Append-only: 'complete' or 'reopened', by whom, when, why.
CREATE TABLE completeness_events (
    event_id INTEGER PRIMARY KEY,
    study_id TEXT NOT NULL REFERENCES studies(study_id),
    query_id TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('complete', 'reopened')),
    actor TEXT NOT NULL,
    created_at TEXT NOT NULL,
    reason TEXT NOT NULL DEFAULT ''
);
CREATE INDEX completeness_by_query ON completeness_events (study_id, query_id, event_id);

-- A frozen snapshot of the resolved labels and completeness of a study.
CREATE TABLE reference_versions (
    study_id TEXT NOT NULL REFERENCES studies(study_id),
    name TEXT NOT NULL,
    created_at TEXT NOT NULL,
    created_by TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    PRIMARY KEY (study_id, name)
);
CREATE TABLE reference_labels (
    study_id TEXT NOT NULL,
    version TEXT NOT NULL,
    query_id TEXT NOT NULL,
    unit_id TEXT NOT NULL,
    gain INTEGER NOT NULL CHECK (gain BETWEEN 0 AND 4),
    PRIMARY KEY (study_id, version, query_id, unit_id),
    FOREIGN KEY (study_id, version) REFERENCES reference_versions(study_id, name)
) WITHOUT ROWID;
CREATE TABLE reference_completeness (
    study_id TEXT NOT NULL,
    version TEXT NOT NULL,
    query_id TEXT NOT NULL,
    population_complete INTEGER NOT NULL,
    PRIMARY KEY (study_id, version, query_id),
    FOREIGN KEY (study_id, version) REFERENCES reference_versions(study_id, name)
) WITHOUT ROWID;

CREATE TABLE reports (
    report_id INTEGER PRIMARY KEY,
    study_id TEXT NOT NULL REFERENCES studies(study_id),
    name TEXT NOT NULL,
    reference_version TEXT,
    created_at TEXT NOT NULL,
    created_by TEXT NOT NULL,
    evalcore_version TEXT NOT NULL,
    body_json TEXT NOT NULL,
    content_hash TEXT NOT NULL
);

CREATE TABLE audit_log (
    entry_id INTEGER PRIMARY KEY,
    created_at TEXT NOT NULL,
    actor TEXT NOT NULL,
    action TEXT NOT NULL,
    study_id TEXT,
    detail_json TEXT NOT NULL DEFAULT '{}'
);

-- Full-text index over the corpus (external content: the text lives in documents).
CREATE VIRTUAL TABLE documents_fts USING fts5(
    title, text, content='documents', content_rowid='rowid', tokenize='porter unicode61'
);
CREATE TRIGGER documents_fts_ai AFTER INSERT ON documents BEGIN
    INSERT INTO documents_fts (rowid, title, text) VALUES (new.rowid, new.title, new.text);
END;
CREATE TRIGGER documents_fts_ad AFTER DELETE ON documents BEGIN
    INSERT INTO documents_fts (documents_fts, rowid, title, text)
    VALUES ('delete', old.rowid, old.title, old.text);
END;
CREATE TRIGGER documents_fts_au AFTER UPDATE ON documents BEGIN
    INSERT INTO documents_fts (documents_fts, rowid, title, text)
    VALUES ('delete', old.rowid, old.title, old.text);
    INSERT INTO documents_fts (rowid, title, text) VALUES (new.rowid, new.title, new.text);
END;

-- Pinned lexical retrieval protocols (evalcore.retrieval): the protocol JSON,
-- the pinned document id set and its fingerprint.
CREATE TABLE protocols (
    study_id TEXT NOT NULL REFERENCES studies(study_id),
    name TEXT NOT NULL,
    protocol_json TEXT NOT NULL,
    corpus_fingerprint TEXT NOT NULL,
    pinned_at TEXT NOT NULL,
    pinned_by TEXT NOT NULL,
    PRIMARY KEY (study_id, name)
);
CREATE TABLE protocol_documents (
    study_id TEXT NOT NULL,
    protocol TEXT NOT NULL,
    doc_id TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    PRIMARY KEY (study_id, protocol, doc_id),
    FOREIGN KEY (study_id, protocol) REFERENCES protocols(study_id, name)
) WITHOUT ROWID;
-- Refused executions: why the workflow would not run (append-only).
CREATE TABLE retrieval_refusals (
    refusal_id INTEGER PRIMARY KEY,
    study_id TEXT NOT NULL,
    protocol TEXT NOT NULL,
    run_name TEXT NOT NULL,
    created_at TEXT NOT NULL,
    actor TEXT NOT NULL,
    message TEXT NOT NULL,
    detail_json TEXT NOT NULL DEFAULT '{}'
);
"""
_V1 += (_unchangeable("label_events_append_only", "label_events", _LABELS)
        + _unchangeable("completeness_append_only", "completeness_events",
                        "completeness_events is append-only")
        + _unchangeable("audit_append_only", "audit_log", "audit_log is append-only")
        + _refuse("reports_immutable_u", "UPDATE", "reports", _REPORT))

# v2: frozen reference versions are immutable (their rows are written once, at
# freeze time, and never updated or deleted); an index for per-annotator reads.
_V2 = (_unchangeable("reference_versions_immutable", "reference_versions", _FROZEN)
       + _unchangeable("reference_labels_immutable", "reference_labels", _FROZEN)
       + _unchangeable("reference_completeness_immutable", "reference_completeness", _FROZEN)
       + "CREATE INDEX label_events_by_annotator ON label_events "
         "(study_id, query_id, annotator, event_id);")

# v3: who owned each pinned document (revalidation names a document that moved to another
# organisation); a pinned protocol, its document set and the refusal log are immutable.
_V3 = ("ALTER TABLE protocol_documents ADD COLUMN owner_org TEXT;\n"
       + _unchangeable("protocols_immutable", "protocols", _PINNED)
       + _unchangeable("protocol_documents_immutable", "protocol_documents", _PINNED_DOCUMENTS)
       + _unchangeable("retrieval_refusals_append_only", "retrieval_refusals",
                       "retrieval_refusals is append-only"))

# v4: a generated report is immutable: no DELETE either (v1 already refuses UPDATE);
# report names are unique within a study (evalcore.store.reports).
_V4 = (_refuse("reports_immutable_d", "DELETE", "reports", _REPORT)
       + "CREATE UNIQUE INDEX reports_by_name ON reports (study_id, name);")

# v5: users, their organisations and per-study roles (evalcore.access; no member: local mode).
_V5 = """
CREATE TABLE users (
    user_id TEXT PRIMARY KEY,
    display_name TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL
);
CREATE TABLE user_organisations (
    user_id TEXT NOT NULL REFERENCES users(user_id),
    org_id TEXT NOT NULL REFERENCES organisations(org_id),
    granted_by TEXT NOT NULL,
    granted_at TEXT NOT NULL,
    PRIMARY KEY (user_id, org_id)
) WITHOUT ROWID;
CREATE TABLE study_members (
    study_id TEXT NOT NULL REFERENCES studies(study_id),
    user_id TEXT NOT NULL REFERENCES users(user_id),
    role TEXT NOT NULL CHECK (role IN ('annotator', 'reviewer', 'lead')),
    granted_by TEXT NOT NULL,
    granted_at TEXT NOT NULL,
    PRIMARY KEY (study_id, user_id)
) WITHOUT ROWID;
CREATE INDEX study_members_by_user ON study_members (user_id, study_id);
"""

# v6: a frozen reference version is sealed when its freeze commits; no label or
# completeness row can be added to a sealed version afterwards (v2 already refuses
# UPDATE and DELETE). Versions frozen before v6 are sealed by this migration.
_V6 = """
CREATE TABLE reference_seals (
    study_id TEXT NOT NULL,
    name TEXT NOT NULL,
    sealed_at TEXT NOT NULL,
    PRIMARY KEY (study_id, name),
    FOREIGN KEY (study_id, name) REFERENCES reference_versions(study_id, name)
) WITHOUT ROWID;
INSERT INTO reference_seals (study_id, name, sealed_at)
SELECT study_id, name, created_at FROM reference_versions;
""" + _unchangeable("reference_seals_immutable", "reference_seals", _FROZEN) + "".join(
    _refuse(f"{table}_sealed", "INSERT", table, _FROZEN, "\nWHEN EXISTS (SELECT 1 FROM "
            "reference_seals WHERE study_id = new.study_id AND name = new.version)")
    for table in ("reference_labels", "reference_completeness"))

# v7: each run's ranking per query, packed (JSON arrays, best first; scores null where
# absent): a derived copy of `results` written with it, read instead of a row per result.
_V7 = """
CREATE TABLE run_rankings (
    run_id INTEGER NOT NULL REFERENCES runs(run_id),
    query_id TEXT NOT NULL,
    unit_ids TEXT NOT NULL,
    scores TEXT NOT NULL,
    PRIMARY KEY (run_id, query_id)
) WITHOUT ROWID;
"""

# v8: annotation drafts (evalcore.store.drafts; not evidence: replaced and deleted).
_V8 = """
CREATE TABLE annotation_drafts (
    study_id TEXT NOT NULL REFERENCES studies(study_id),
    query_id TEXT NOT NULL,
    unit_id TEXT NOT NULL,
    annotator TEXT NOT NULL,
    note TEXT NOT NULL DEFAULT '',
    skipped INTEGER NOT NULL DEFAULT 0 CHECK (skipped IN (0, 1)),
    updated_at TEXT NOT NULL,
    PRIMARY KEY (study_id, annotator, query_id, unit_id)
) WITHOUT ROWID;
"""

# v9: ownership (docs/access-model.md): each corpus names its owner organisation (NULL: a
# local corpus), first taken from its first study with one, else its first owned document;
# an organisation remembers its creator; audit rows record the channel and OS user; a run
# being imported is staged (``staged_by`` = "host:pid", evalcore.store.staging).
_V9 = """
CREATE TABLE corpora (
    corpus_id TEXT PRIMARY KEY,
    owner_org TEXT,
    created_by TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL
);
INSERT INTO corpora (corpus_id, owner_org, created_by, created_at)
SELECT c.corpus_id,
    COALESCE(
        (SELECT s.org_id FROM studies s WHERE s.corpus_id = c.corpus_id AND s.org_id IS NOT NULL
         ORDER BY s.created_at, s.rowid LIMIT 1),
        (SELECT d.owner_org FROM documents d WHERE d.corpus_id = c.corpus_id
         AND d.owner_org IS NOT NULL ORDER BY d.rowid LIMIT 1)),
    'migration', strftime('%Y-%m-%dT%H:%M:%SZ', 'now')
FROM (SELECT corpus_id FROM studies UNION SELECT corpus_id FROM documents) c;
INSERT OR IGNORE INTO organisations (org_id, name)
SELECT owner_org, owner_org FROM corpora WHERE owner_org IS NOT NULL;
ALTER TABLE organisations ADD COLUMN created_by TEXT;
ALTER TABLE audit_log ADD COLUMN channel TEXT NOT NULL DEFAULT 'api';
ALTER TABLE audit_log ADD COLUMN os_user TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN staged_by TEXT;
"""

# v10: each query's information need (evalcore.store.information_needs), empty when unknown.
_V10 = """
ALTER TABLE queries ADD COLUMN description TEXT NOT NULL DEFAULT '';
ALTER TABLE queries ADD COLUMN narrative TEXT NOT NULL DEFAULT '';
"""

# v11: the measures a study reports (evalcore.store.study_measures; empty: the default set).
_V11 = """
ALTER TABLE studies ADD COLUMN measures TEXT NOT NULL DEFAULT '';
"""

# v12: staged document imports (evalcore.store.document_imports) and staged studies, whose
# append-only history may be deleted only while staged (evalcore.store.staged_studies).
_V12 = """
ALTER TABLE studies ADD COLUMN staged_by TEXT;
CREATE TABLE pending_imports (
    import_id TEXT PRIMARY KEY,
    corpus_id TEXT NOT NULL,
    staged_by TEXT NOT NULL,
    started_at TEXT NOT NULL
);
ALTER TABLE documents ADD COLUMN import_id TEXT;
CREATE INDEX documents_import ON documents (import_id) WHERE import_id IS NOT NULL;
"""
#: (trigger, table, message) of each delete refusal that lets a staged study's discard through.
_STAGED_DELETES = [
    ("label_events_append_only_d", "label_events", _LABELS),
    ("completeness_append_only_d", "completeness_events", "completeness_events is append-only"),
    ("audit_append_only_d", "audit_log", "audit_log is append-only"),
    ("reference_versions_immutable_d", "reference_versions", _FROZEN),
    ("reference_labels_immutable_d", "reference_labels", _FROZEN),
    ("reference_completeness_immutable_d", "reference_completeness", _FROZEN),
    ("reference_seals_immutable_d", "reference_seals", _FROZEN),
    ("protocols_immutable_d", "protocols", _PINNED),
    ("protocol_documents_immutable_d", "protocol_documents", _PINNED_DOCUMENTS),
    ("retrieval_refusals_append_only_d", "retrieval_refusals", "retrieval_refusals is append-only"),
    ("reports_immutable_d", "reports", _REPORT),
]
_V12 += "".join(f"DROP TRIGGER {name};\n" + _refuse(name, "DELETE", table, message, _UNLESS_STAGED)
                for name, table, message in _STAGED_DELETES)

# v13: corpus generations (evalcore.store.corpus_generations), moved by triggers; a covering
# index serves the full revalidation without reading texts.

def _generation_triggers(table: str, *, deleted_when: str = "", written_when: str = "") -> str:
    """Triggers moving the generation of the corpus of each ``table`` row written (both
    corpora when an update moves a row from one to another); ``deleted_when`` and
    ``written_when`` (SQL over ``old`` / ``new``) narrow them to the writes that may change
    what a reader sees (v14)."""
    bump = ("INSERT INTO corpus_generations (corpus_id, generation) {rows}\n"
            "    ON CONFLICT (corpus_id) DO UPDATE SET generation = generation + 1;")
    new, old = bump.format(rows="VALUES (new.corpus_id, 1)"), bump.format(
        rows="VALUES (old.corpus_id, 1)")
    moved = bump.format(rows="SELECT old.corpus_id, 1 WHERE old.corpus_id IS NOT new.corpus_id")
    written = f" WHEN {written_when}" if written_when else ""
    deleted = f" WHEN {deleted_when}" if deleted_when else ""
    return (f"CREATE TRIGGER {table}_generation_ai AFTER INSERT ON {table}{written} BEGIN\n"
            f"    {new}\nEND;\n"
            f"CREATE TRIGGER {table}_generation_au AFTER UPDATE ON {table}{written} BEGIN\n"
            f"    {new}\n    {moved}\nEND;\n"
            f"CREATE TRIGGER {table}_generation_ad AFTER DELETE ON {table}{deleted} BEGIN\n"
            f"    {old}\nEND;\n")


_V13 = (
    """
CREATE TABLE corpus_generations (
    corpus_id TEXT PRIMARY KEY,
    generation INTEGER NOT NULL CHECK (generation >= 0)
);
ALTER TABLE protocols ADD COLUMN corpus_generation INTEGER;
"""
    + _generation_triggers("documents")
    + _generation_triggers("pending_imports")
    + """
CREATE INDEX documents_pin_columns
    ON documents (corpus_id, doc_id, content_hash, owner_org, created_at, import_id);
CREATE TRIGGER corpus_generations_forward BEFORE UPDATE ON corpus_generations
WHEN new.generation <= old.generation OR new.corpus_id IS NOT old.corpus_id
BEGIN SELECT RAISE(ABORT, 'a corpus generation only moves forward'); END;
CREATE TRIGGER corpus_generations_kept BEFORE DELETE ON corpus_generations
BEGIN SELECT RAISE(ABORT, 'a corpus generation is never deleted'); END;
"""
)

# v14: a document replaced by a staged import has two rows until the import is settled
# (evalcore.store.document_imports): the key becomes (corpus_id, doc_id, superseded_by). v13's
# staged replacements are finished if their import had published, else dropped. The table is
# rebuilt with its rowids (SQLite cannot change a primary key), so documents_fts stays.
_REPLACED = "import_id LIKE '%:replacements'"
_REPLACING = "substr(h.import_id, 1, length(h.import_id) - 13)"
_V14 = (
    f"""
UPDATE documents SET title = h.title, text = h.text, created_at = h.created_at,
    content_hash = h.content_hash, import_id = NULL
FROM documents h
WHERE h.{_REPLACED} AND {_REPLACING} NOT IN (SELECT import_id FROM pending_imports)
    AND h.corpus_id = documents.corpus_id || char(0) || {_REPLACING}
    AND h.doc_id = documents.doc_id;
DELETE FROM documents WHERE {_REPLACED};
DELETE FROM pending_imports WHERE {_REPLACED};
CREATE TABLE documents_v14 (
    corpus_id TEXT NOT NULL,
    doc_id TEXT NOT NULL,
    title TEXT NOT NULL DEFAULT '',
    text TEXT NOT NULL DEFAULT '',
    owner_org TEXT,
    created_at TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    import_id TEXT,
    superseded_by TEXT NOT NULL DEFAULT ''
);
INSERT INTO documents_v14 (rowid, corpus_id, doc_id, title, text, owner_org, created_at,
    content_hash, import_id)
SELECT rowid, corpus_id, doc_id, title, text, owner_org, created_at, content_hash, import_id
FROM documents;
DROP TABLE documents;
ALTER TABLE documents_v14 RENAME TO documents;
CREATE UNIQUE INDEX documents_key ON documents (corpus_id, doc_id, superseded_by);
CREATE INDEX documents_import ON documents (import_id) WHERE import_id IS NOT NULL;
CREATE INDEX documents_superseded ON documents (superseded_by) WHERE superseded_by <> '';
CREATE INDEX documents_pin_columns ON documents
    (corpus_id, doc_id, content_hash, owner_org, created_at, import_id, superseded_by);
DROP TRIGGER pending_imports_generation_ai;
DROP TRIGGER pending_imports_generation_au;
DROP TRIGGER pending_imports_generation_ad;
"""
    # v1's FTS triggers again (they went with the old table), the update one narrowed
    + "\n".join(statement for statement in _split_statements(_V1)
                if statement.startswith("CREATE TRIGGER documents_fts_")).replace(
        "AFTER UPDATE ON documents", "AFTER UPDATE OF title, text ON documents") + "\n"
    + _generation_triggers(
        "documents", deleted_when="old.superseded_by = '' OR old.superseded_by IN "
        "(SELECT import_id FROM pending_imports)")
    + _generation_triggers("pending_imports", written_when="new.import_id NOT LIKE "
                           "'%:replacements'", deleted_when="old.import_id NOT LIKE "
                           "'%:replacements'")
)

# v15: the unit dictionary (evalcore.store.unit_codes); a trigger sets each label event's
# code after its insert (the one update the append-only rule lets through).
_V15 = """
CREATE TABLE study_units (
    study_id TEXT NOT NULL REFERENCES studies(study_id),
    unit_code INTEGER NOT NULL CHECK (unit_code >= 0),
    unit_id TEXT NOT NULL,
    PRIMARY KEY (study_id, unit_code)
) WITHOUT ROWID;
CREATE UNIQUE INDEX study_units_by_id ON study_units (study_id, unit_id);
CREATE TRIGGER study_units_append_only_u BEFORE UPDATE ON study_units
BEGIN SELECT RAISE(ABORT, 'a unit code is never changed'); END;
CREATE TRIGGER study_units_append_only_d BEFORE DELETE ON study_units WHEN NOT EXISTS (
    SELECT 1 FROM studies s WHERE s.study_id = old.study_id AND s.staged_by IS NOT NULL)
BEGIN SELECT RAISE(ABORT, 'a unit code is never deleted'); END;
ALTER TABLE run_rankings ADD COLUMN unit_codes BLOB;
ALTER TABLE label_events ADD COLUMN unit_code INTEGER;
DROP TRIGGER label_events_append_only_u;
CREATE TRIGGER label_events_append_only_u BEFORE UPDATE ON label_events WHEN NOT (
    old.unit_code IS NULL AND new.unit_code IS NOT NULL AND new.event_id = old.event_id
    AND new.study_id IS old.study_id AND new.query_id IS old.query_id
    AND new.unit_id IS old.unit_id AND new.kind IS old.kind AND new.gain IS old.gain
    AND new.annotator IS old.annotator AND new.created_at IS old.created_at
    AND new.note IS old.note AND new.source IS old.source)
BEGIN SELECT RAISE(ABORT, 'label_events is append-only: record a new event instead'); END;
CREATE TRIGGER label_events_unit_code AFTER INSERT ON label_events WHEN new.unit_code IS NULL
BEGIN
    INSERT INTO study_units (study_id, unit_code, unit_id)
    SELECT new.study_id, (SELECT coalesce(max(unit_code) + 1, 0) FROM study_units
                          WHERE study_id = new.study_id), new.unit_id
    WHERE NOT EXISTS (SELECT 1 FROM study_units
                      WHERE study_id = new.study_id AND unit_id = new.unit_id);
    UPDATE label_events SET unit_code = (SELECT unit_code FROM study_units
        WHERE study_id = new.study_id AND unit_id = new.unit_id)
    WHERE event_id = new.event_id;
END;
"""

# v16: the TREC id suspects of runs and label events (evalcore.store.trec_ids).
#: The code points Python's ``\s`` matches (``trec_ids.TREC_SPACE``), written out: a
#: migration never changes (the tests check them against ``TREC_SPACE``).
_TREC_SPACE_CODES = (9, 10, 11, 12, 13, 28, 29, 30, 31, 32, 133, 160, 5760, 8192, 8193, 8194,
                     8195, 8196, 8197, 8198, 8199, 8200, 8201, 8202, 8232, 8233, 8239, 8287,
                     12288)
#: A GLOB pattern matching a text holding any of them.
_TREC_SPACE_GLOB = f"'*[' || char({', '.join(map(str, _TREC_SPACE_CODES))}) || ']*'"


def _trec_suspect_sql(query_id: str, unit_id: str) -> str:
    """SQL: whether the ids ``query_id`` and ``unit_id`` (column expressions) hold one a TREC
    file cannot hold (``trec_ids.ids_suspect`` of one row). Ids of printable ASCII only skip
    the costlier whitespace pattern."""
    space = f"({query_id} GLOB {_TREC_SPACE_GLOB} OR {unit_id} GLOB {_TREC_SPACE_GLOB})"
    return (f"({query_id} = '' OR {unit_id} = '' OR substr({query_id}, 1, 1) = '#' "
            f"OR (({query_id} || {unit_id}) GLOB '*[^!-~]*' AND {space}))")


_V16 = f"""
ALTER TABLE runs ADD COLUMN trec_suspect INTEGER NOT NULL DEFAULT 0 CHECK (trec_suspect IN (0, 1));
CREATE TABLE label_id_suspects (
    study_id TEXT PRIMARY KEY REFERENCES studies(study_id)
) WITHOUT ROWID;
INSERT INTO label_id_suspects (study_id)
SELECT DISTINCT study_id FROM label_events WHERE {_trec_suspect_sql("query_id", "unit_id")};
CREATE TRIGGER label_events_trec_suspect AFTER INSERT ON label_events
WHEN {_trec_suspect_sql("new.query_id", "new.unit_id")}
BEGIN
    INSERT INTO label_id_suspects (study_id) SELECT new.study_id
    WHERE NOT EXISTS (SELECT 1 FROM label_id_suspects WHERE study_id = new.study_id);
END;
"""

# v17: organisation roles (evalcore.access.organisations): owner > admin > member. Each
# organisation's owner is its creator when a member, else its first member (by grant time,
# then user id); organisations without a member stay unclaimed.
_V17 = """
ALTER TABLE user_organisations ADD COLUMN role TEXT NOT NULL DEFAULT 'member'
    CHECK (role IN ('member', 'admin', 'owner'));
UPDATE user_organisations SET role = 'owner'
WHERE user_id = (SELECT o.created_by FROM organisations o WHERE o.org_id = user_organisations.org_id);
UPDATE user_organisations SET role = 'owner'
WHERE NOT EXISTS (SELECT 1 FROM user_organisations x WHERE x.org_id = user_organisations.org_id
                  AND x.role = 'owner')
AND user_id = (SELECT y.user_id FROM user_organisations y WHERE y.org_id = user_organisations.org_id
               ORDER BY y.granted_at, y.user_id LIMIT 1);
CREATE INDEX user_organisations_by_org ON user_organisations (org_id, role);
"""

# v18: removed queries (evalcore.store.removed_queries), a row while out.
_V18 = """
CREATE TABLE removed_queries (
    study_id TEXT NOT NULL REFERENCES studies(study_id),
    query_id TEXT NOT NULL,
    removed_at TEXT NOT NULL,
    removed_by TEXT NOT NULL,
    reason TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (study_id, query_id)
) WITHOUT ROWID;
"""

# v19: automatic judgments (evalcore.store.automatic_labels), apart from the label events.
_V19 = """
CREATE TABLE automatic_imports (
    import_id INTEGER PRIMARY KEY,
    study_id TEXT NOT NULL REFERENCES studies(study_id),
    source TEXT NOT NULL,
    file TEXT NOT NULL,
    format TEXT NOT NULL,
    imported_by TEXT NOT NULL,
    imported_at TEXT NOT NULL,
    n_labels INTEGER NOT NULL DEFAULT 0,
    staged_by TEXT
);
CREATE INDEX automatic_imports_by_study ON automatic_imports (study_id, source);
CREATE TABLE automatic_labels (
    import_id INTEGER NOT NULL REFERENCES automatic_imports(import_id),
    query_id TEXT NOT NULL,
    unit_id TEXT NOT NULL,
    gain INTEGER NOT NULL CHECK (gain BETWEEN 0 AND 4),
    PRIMARY KEY (import_id, query_id, unit_id)
) WITHOUT ROWID;
"""

# v20: named samples, their units in queue order and non-responses (evalcore.store.samples).
_V20 = """
CREATE TABLE samples (
    study_id TEXT NOT NULL REFERENCES studies(study_id),
    name TEXT NOT NULL,
    run_a TEXT NOT NULL,
    run_b TEXT NOT NULL,
    measures_json TEXT NOT NULL,
    seed INTEGER NOT NULL,
    size INTEGER NOT NULL CHECK (size >= 0),
    draws INTEGER NOT NULL CHECK (draws >= 0),
    design_json TEXT NOT NULL,
    created_at TEXT NOT NULL,
    created_by TEXT NOT NULL,
    grown_at TEXT,
    PRIMARY KEY (study_id, name)
) WITHOUT ROWID;
CREATE TABLE sample_units (
    study_id TEXT NOT NULL,
    name TEXT NOT NULL,
    position INTEGER NOT NULL CHECK (position >= 1),
    query_id TEXT NOT NULL,
    unit_id TEXT NOT NULL,
    stratum INTEGER NOT NULL,
    draw INTEGER NOT NULL CHECK (draw >= 1),
    PRIMARY KEY (study_id, name, position),
    FOREIGN KEY (study_id, name) REFERENCES samples(study_id, name)
) WITHOUT ROWID;
CREATE UNIQUE INDEX sample_units_by_unit ON sample_units (study_id, name, query_id, unit_id);
CREATE TRIGGER sample_units_append_only_u BEFORE UPDATE ON sample_units
BEGIN SELECT RAISE(ABORT, 'a sampled unit is never changed'); END;
CREATE TRIGGER sample_units_append_only_d BEFORE DELETE ON sample_units WHEN NOT EXISTS (
    SELECT 1 FROM studies s WHERE s.study_id = old.study_id AND s.staged_by IS NOT NULL)
BEGIN SELECT RAISE(ABORT, 'a sampled unit is never deleted'); END;
CREATE TABLE sample_nonresponses (
    response_id INTEGER PRIMARY KEY,
    study_id TEXT NOT NULL,
    name TEXT NOT NULL,
    query_id TEXT NOT NULL,
    unit_id TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('skip', 'cant_judge')),
    annotator TEXT NOT NULL,
    created_at TEXT NOT NULL,
    FOREIGN KEY (study_id, name) REFERENCES samples(study_id, name)
);
CREATE INDEX sample_nonresponses_by_sample ON sample_nonresponses (study_id, name);
CREATE TRIGGER sample_nonresponses_append_only_u BEFORE UPDATE ON sample_nonresponses
BEGIN SELECT RAISE(ABORT, 'sample_nonresponses is append-only'); END;
CREATE TRIGGER sample_nonresponses_append_only_d BEFORE DELETE ON sample_nonresponses
WHEN NOT EXISTS (
    SELECT 1 FROM studies s WHERE s.study_id = old.study_id AND s.staged_by IS NOT NULL)
BEGIN SELECT RAISE(ABORT, 'sample_nonresponses is append-only'); END;
"""

# v21: the runs stored before v7 get their packed rankings (a backfill, :data:`BACKFILLS`).
_V21 = ""

# The store identity (last migration): a random id per store (evalcore.store.store_identity,
# the key of caches of data derived from it); documents_fts goes (lexical rankings come from
# evalcore.retrieval).
_STORE_IDENTITY_NO_FTS = """
CREATE TABLE store_identity (
    store_id TEXT PRIMARY KEY NOT NULL
);
INSERT INTO store_identity (store_id) VALUES (lower(hex(randomblob(16))));
CREATE TRIGGER store_identity_kept_u BEFORE UPDATE ON store_identity
BEGIN SELECT RAISE(ABORT, 'a store identity never changes'); END;
DROP TRIGGER documents_fts_ai;
DROP TRIGGER documents_fts_ad;
DROP TRIGGER documents_fts_au;
DROP TABLE documents_fts;
"""

#: MIGRATIONS[i] takes the schema from version i to version i + 1.
MIGRATIONS: list[str] = [
    _V1, _V2, _V3, _V4, _V5, _V6, _V7, _V8, _V9, _V10, _V11, _V12, _V13, _V14, _V15, _V16,
    _V17, _V18, _V19, _V20, _V21, _STORE_IDENTITY_NO_FTS,
]
SCHEMA_VERSION = len(MIGRATIONS)
dialect.register_indexes(MIGRATIONS)  # what INDEXED BY names, on PostgreSQL


#: Version reached -> what runs after its SQL, in the same transaction (data that SQL
#: alone cannot write).
BACKFILLS: dict[int, Callable[[sqlite_utils.Database], None]] = {
    15: backfill_unit_codes, 16: backfill_trec_suspects, 21: backfill_packed_rankings}


class SchemaTooNewError(RuntimeError):
    """The store was written by a newer evalcore than this one."""


#: The store's schema version (0 before the first migration).
schema_version = dialect.stored_schema_version


def migrate(db: sqlite_utils.Database) -> int:
    """Bring the store up to :data:`SCHEMA_VERSION`; return the version reached."""
    current = schema_version(db)
    if current > SCHEMA_VERSION:
        raise SchemaTooNewError(
            f"this store has schema version {current}, but this evalcore knows only up to "
            f"{SCHEMA_VERSION}; upgrade relevance-ledger to open it"
        )
    while current < SCHEMA_VERSION:
        with write_transaction(db):
            # Re-read inside the lock: another process may have migrated meanwhile.
            current = schema_version(db)
            if current >= SCHEMA_VERSION:
                break
            dialect.run_schema_statements(db, _split_statements(MIGRATIONS[current]))
            if current + 1 in BACKFILLS:
                BACKFILLS[current + 1](db)
            dialect.set_schema_version(db, current + 1)
        current = schema_version(db)
    return current


@lru_cache(maxsize=1)
def current_triggers() -> frozenset[str]:
    """The names of the triggers a store at :data:`SCHEMA_VERSION` has (what the migrations
    leave), read from a new store in memory: what ``evalcore verify`` expects to find."""
    db = sqlite_utils.Database(sqlite3.connect(":memory:", isolation_level=None))
    try:
        migrate(db)
        return frozenset(dialect.active_triggers(db))
    finally:
        db.conn.close()
