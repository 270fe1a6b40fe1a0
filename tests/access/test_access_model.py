"""The access model of docs/access-model.md, tested by its attacks (issue 12, item 1).

Each ``test_attack_*`` is an attack that used to work; each asserts the attack
is refused and that the store is unchanged (or that nothing secret is shown).
"""

import json
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest
from access_fixtures import ANNOTATOR, LEAD, team_store
from store_fixtures import table_snapshot

from evalcore.access import PermissionDenied
from evalcore.retrieval.search import search_corpus
from evalcore.store.connection import open_store
from evalcore.store.corpora import corpus_owner
from evalcore.store.corpus import DocumentIn, add_documents, get_document
from evalcore.store.imports.beir import import_beir
from evalcore.store.members import add_member, add_to_organisation, create_team_study
from evalcore.store.schema import MIGRATIONS
from evalcore.store.scoping import displayable_text, readable_document
from evalcore.store.studies import StudyIn, create_organisation
from evalcore.store.study_handle import open_study
from evalcore.store.study_setup import create_study

MALLORY = "mallory@evil.example"
SECRET_U1 = "UNOWNED-SECRET-U1"
WHEN = datetime(2026, 1, 1, tzinfo=UTC)


def _with_unowned_u1(new_store_target: Path):
    db, _ = team_store(new_store_target("store.db"))
    add_documents(db, "c", [DocumentIn(doc_id="u1", title="u", text=SECRET_U1, owner_org=None,
                                       created_at=WHEN)], actor=LEAD)
    return db


def _beir(root: Path, text: str) -> Path:
    (root / "qrels").mkdir(parents=True)
    (root / "corpus.jsonl").write_text(json.dumps({"_id": "u1", "title": "u", "text": text}) + "\n")
    (root / "queries.jsonl").write_text('{"_id": "mq", "text": "m"}\n')
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nmq\tu1\t1\n")
    return root


def test_attack_stranger_creates_study_over_foreign_corpus_reads_nothing(tmp_path: Path, new_store_target) -> None:
    db = _with_unowned_u1(new_store_target)
    before = table_snapshot(db)
    for study in (StudyIn(study_id="m", corpus_id="c"),
                  StudyIn(study_id="m", corpus_id="c", org_id="evil"),
                  StudyIn(study_id="m", corpus_id="c", org_id="acme")):
        with pytest.raises(PermissionDenied, match="corpus 'c'|organisation 'acme'"):
            create_team_study(db, study, lead=MALLORY)
        with pytest.raises(PermissionDenied):
            create_study(db, study, actor=MALLORY)
    assert table_snapshot(db) == before
    assert not readable_document(db, MALLORY, "c", "u1").allowed
    assert search_corpus(db, "c", "UNOWNED", viewer=MALLORY) == []


def test_attack_local_mode_study_over_team_corpus_refused(tmp_path: Path, new_store_target) -> None:
    db = _with_unowned_u1(new_store_target)
    before = table_snapshot(db)
    # not even a member of the owner may open the corpus to a local-mode study
    with pytest.raises(PermissionDenied, match="local-mode study"):
        create_study(db, StudyIn(study_id="x", corpus_id="c"), actor=LEAD)
    with pytest.raises(PermissionDenied, match="nobody is named"):
        create_study(db, StudyIn(study_id="x", corpus_id="c", org_id="acme"))
    assert table_snapshot(db) == before
    create_study(db, StudyIn(study_id="x", corpus_id="c", org_id="acme"), actor=ANNOTATOR)


def test_attack_beir_import_into_own_study_cannot_overwrite_victim_documents(
    tmp_path: Path, store_target,
) -> None:
    # mallory's study m over c predates the victims' team mode (as in a pre-v8 store)
    db = open_store(store_target)
    create_study(db, StudyIn(study_id="s", corpus_id="c", org_id="acme"))
    add_documents(db, "c", [DocumentIn(doc_id="u1", text=SECRET_U1, owner_org=None,
                                       created_at=WHEN)])
    create_study(db, StudyIn(study_id="m", corpus_id="c", org_id="evil"), actor=MALLORY)
    add_member(db, study_id="s", user=LEAD, role="lead", actor=LEAD)
    add_member(db, study_id="m", user=MALLORY, role="lead", actor=MALLORY)
    before = table_snapshot(db)
    for owner in (None, "evil", "acme"):
        with pytest.raises(PermissionDenied, match="corpus 'c'"):
            import_beir(db, _beir(tmp_path / f"b-{owner}", "OVERWRITTEN"), study_id="m",
                        actor=MALLORY, owner_org=owner)
        with pytest.raises(PermissionDenied):
            add_documents(db, "c", [DocumentIn(doc_id="u1", text="OVERWRITTEN", created_at=WHEN)],
                          actor=MALLORY)
    assert table_snapshot(db) == before
    assert get_document(db, "c", "u1").text == SECRET_U1
    # the owner's member may write it
    import_beir(db, _beir(tmp_path / "lena", "updated by acme"), study_id="s", actor=LEAD)
    assert get_document(db, "c", "u1").text == "updated by acme"


def test_attack_self_join_existing_organisation_refused(tmp_path: Path, store_target) -> None:
    db, _ = team_store(store_target)
    before = table_snapshot(db)
    with pytest.raises(PermissionDenied, match="never by self-service"):
        add_to_organisation(db, user=MALLORY, org_id="acme", actor=MALLORY)
    with pytest.raises(PermissionDenied, match="granted by its admins"):
        add_to_organisation(db, user=MALLORY, org_id="acme", actor=ANNOTATOR)  # not an admin
    with pytest.raises(PermissionDenied):
        add_to_organisation(db, user=MALLORY, org_id="acme", actor="")
    # an organisation with no team-mode study, but created by someone, is theirs
    assert create_organisation(db, "initech", "Initech", actor="ivan@initech.example")
    with pytest.raises(PermissionDenied, match="never by self-service"):
        add_to_organisation(db, user=MALLORY, org_id="initech", actor=MALLORY)
    assert not create_organisation(db, "initech", actor=MALLORY)  # creating it again joins nothing
    assert table_snapshot(db) != before  # only initech and its creator were added
    assert db.execute("SELECT user_id FROM user_organisations WHERE org_id = 'initech'"
                      ).fetchall() == [("ivan@initech.example",)]
    assert add_to_organisation(db, user="ida@initech.example", org_id="initech",
                               actor="ivan@initech.example")


def test_attack_unowned_reader_in_local_mode_names_a_member(tmp_path: Path, new_store_target) -> None:
    """A local-mode caller names a member of the team: the app reads as nobody (no sign-in)."""
    db = _with_unowned_u1(new_store_target)
    create_study(db, StudyIn(study_id="old", corpus_id="c", org_id="acme"), actor=LEAD)  # local
    shown = displayable_text(open_study(db, "old", None), unit_id="a1")
    assert not shown.shown and shown.text == ""
    assert not displayable_text(open_study(db, "old", None), unit_id="u1").shown


def test_new_documents_belong_to_the_corpus_owner_unless_told(tmp_path: Path, store_target) -> None:
    db = open_store(store_target)
    create_study(db, StudyIn(study_id="s", corpus_id="c", org_id="acme"))
    assert corpus_owner(db, "c") == "acme"
    add_documents(db, "c", [DocumentIn(doc_id="d", created_at=WHEN),
                            DocumentIn(doc_id="u", owner_org=None, created_at=WHEN),
                            DocumentIn(doc_id="g", owner_org="globex", created_at=WHEN)])
    assert [get_document(db, "c", d).owner_org for d in "dug"] == ["acme", None, "globex"]
    import_beir(db, _beir(tmp_path / "b", "x"), study_id="s", allow_unknown_ids=True,
                owner_org="initech")
    assert get_document(db, "c", "u1").owner_org == "initech"


def test_a_corpus_without_owner_adopts_its_first_organisation(tmp_path: Path, store_target) -> None:
    db = open_store(store_target)
    add_documents(db, "k", [DocumentIn(doc_id="d", created_at=WHEN)])
    assert corpus_owner(db, "k") is None
    create_study(db, StudyIn(study_id="s", corpus_id="k", org_id="acme"))
    assert corpus_owner(db, "k") == "acme"


@pytest.mark.sqlite_only
def test_v7_store_migrates_corpus_owners(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    conn = sqlite3.connect(path)
    for version, script in enumerate(MIGRATIONS[:7]):
        from evalcore.store.schema import _split_statements

        for statement in _split_statements(script):
            conn.execute(statement)
        conn.execute(f"PRAGMA user_version = {version + 1}")
    now = "2026-01-01T00:00:00Z"
    conn.executemany("INSERT INTO studies (study_id, name, corpus_id, org_id, created_at) "
                     "VALUES (?, ?, ?, ?, ?)",
                     [("a", "a", "c1", None, now), ("b", "b", "c1", "acme", now),
                      ("z", "z", "c3", None, now)])
    conn.executemany("INSERT INTO documents (corpus_id, doc_id, owner_org, created_at, "
                     "content_hash) VALUES (?, ?, ?, ?, 'h')",
                     [("c2", "d1", None, now), ("c2", "d2", "globex", now)])
    conn.commit()
    conn.close()
    db = open_store(path)
    assert [corpus_owner(db, c) for c in ("c1", "c2", "c3")] == ["acme", "globex", None]
    assert db.execute("SELECT count(*) FROM corpora").fetchone()[0] == 3


# --- item 8: one person, one annotator ------------------------------------------------------


def test_annotator_names_are_normalised_at_every_entry_point(tmp_path: Path, store_target) -> None:
    from evalcore.store.imports.labels import import_labels
    from evalcore.store.labels import label_history, record_label, undo_last_label
    from evalcore.store.resolution import resolve_query

    db = open_store(store_target)
    create_study(db, StudyIn(study_id="s", corpus_id="c"))
    record_label(db, study_id="s", query_id="q", unit_id="d", gain=2, annotator="Ann@Acme.org")
    record_label(db, study_id="s", query_id="q", unit_id="d", gain=1, annotator=" ann@acme.org ")
    resolved = resolve_query(open_study(db, "s", None), "q")["d"]
    assert resolved.annotators == {"ann@acme.org": 1} and resolved.state == "labeled"
    assert {e.annotator for e in label_history(open_study(db, "s", None), "q")} == {"ann@acme.org"}
    assert undo_last_label(db, study_id="s", query_id="q", annotator="ANN@acme.ORG")
    assert resolve_query(open_study(db, "s", None), "q")["d"].gain == 2
    csv = tmp_path / "l.csv"
    csv.write_text("query_id,unit_id,gain,annotator\nq,e,3,Bob@Acme.org\n")
    import_labels(db, csv, study_id="s", allow_unknown_ids=True, keep_annotators=True)
    assert resolve_query(open_study(db, "s", None), "q")["e"].annotators == {"bob@acme.org": 3}


def test_completeness_cant_judge_and_drafts_know_one_person_by_one_name(tmp_path: Path, store_target) -> None:
    """Item 8 beyond labels: a completeness claim, a can't-judge mark and a draft given as
    ``Ann@Acme.org`` are ``ann@acme.org``'s, whichever spelling reads them back."""
    from evalcore.annotation.item_token import label_as_shown, show_item
    from evalcore.store.cant_judge import cant_judge_units, record_cant_judge
    from evalcore.store.completeness import completeness_history, mark_complete, reopen
    from evalcore.store.drafts import drafts, save_draft

    db = open_store(store_target)
    create_study(db, StudyIn(study_id="s", corpus_id="c"))
    mark_complete(db, study_id="s", query_id="q", actor="Ann@Acme.org")
    reopen(db, study_id="s", query_id="q", actor=" ANN@acme.org", reason="more to find")
    assert {e.actor for e in completeness_history(open_study(db, "s", None), "q")} == {"ann@acme.org"}
    record_cant_judge(db, study_id="s", query_id="q", unit_id="d", annotator="Ann@Acme.org")
    assert cant_judge_units(open_study(db, "s", None), "q", "ann@ACME.org") == ["d"]
    save_draft(db, study_id="s", query_id="q", unit_id="d", annotator="Ann@Acme.org",
               note="half a thought")
    assert list(drafts(open_study(db, "s", None), "q", "ann@acme.org")) == ["d"]
    token = show_item(open_study(db, "s", "ann@acme.org"), query_id="q", unit_id="d",
                      annotator="ANN@acme.org")
    label_as_shown(db, token, 1, on_screen=token)  # saving the label clears the draft
    assert drafts(open_study(db, "s", None), "q", "Ann@Acme.org") == {}


def test_names_stored_as_typed_before_normalisation_resolve_as_one(tmp_path: Path, store_target) -> None:
    from evalcore.store.labels import record_label
    from evalcore.store.resolution import resolve_query, resolve_study

    db = open_store(store_target)
    create_study(db, StudyIn(study_id="s", corpus_id="c"))
    db.execute("INSERT INTO label_events (study_id, query_id, unit_id, kind, gain, annotator, "
               "created_at) VALUES ('s', 'q', 'd', 'label', 3, 'Ann@Acme.org', 'x')")
    db.conn.commit()
    record_label(db, study_id="s", query_id="q", unit_id="d", gain=1, annotator="ann@acme.org")
    assert resolve_query(open_study(db, "s", None), "q")["d"].annotators == {"ann@acme.org": 1}
    assert resolve_study(open_study(db, "s", None))["q"]["d"].gain == 1  # one annotator: no conflict


# --- item 3: an honest trust model ----------------------------------------------------------


def test_attack_imported_label_file_fabricates_another_annotators_undo(tmp_path: Path, store_target) -> None:
    from evalcore.io.errors import InputErrors
    from evalcore.store.imports.labels import import_labels

    db, _ = team_store(store_target)
    log = tmp_path / "forged.jsonl"
    log.write_text(
        '{"query_id": "q1", "unit_id": "a1", "gain": 0, "annotator": "rita@acme.org"}\n'
        '{"query_id": "q1", "unit_id": "a1", "kind": "undo", "annotator": "ann@acme.org", '
        '"created_at": "2020-01-01T00:00:00Z", "source": "app"}\n')
    before = table_snapshot(db)
    with pytest.raises(InputErrors) as refused:
        import_labels(db, log, study_id="s", format="jsonl", actor=LEAD)
    text = str(refused.value)
    assert "forged.jsonl:2" in text and "undo events cannot be imported" in text
    assert "forged.jsonl:1" in text and "--keep-annotators" in text
    with pytest.raises(InputErrors, match="forged.jsonl:2"):
        import_labels(db, log, study_id="s", format="jsonl", actor=LEAD, keep_annotators=True)
    assert table_snapshot(db) == before


def test_kept_annotators_are_vouched_for_and_the_importer_is_recorded(tmp_path: Path, store_target) -> None:
    from evalcore.store.audit import audit_entries
    from evalcore.store.imports.labels import import_labels
    from evalcore.store.labels import label_history

    db, _ = team_store(store_target)
    csv = tmp_path / "l.csv"
    csv.write_text("query_id,unit_id,gain,annotator\nq1,a2,1,Rita@Acme.org\n")
    import_labels(db, csv, study_id="s", actor=LEAD, keep_annotators=True)
    assert label_history(open_study(db, "s", LEAD), "q1")[-1].annotator == "rita@acme.org"
    entry = audit_entries(open_study(db, "s", LEAD), limit=1)[0]
    assert entry.detail["imported_by"] == LEAD and entry.detail["kept_annotators"] is True
    assert entry.channel == "api" and entry.os_user == ""
    plain = tmp_path / "p.csv"
    plain.write_text("query_id,unit_id,gain\nq1,a3,1\n")
    import_labels(db, plain, study_id="s", actor=LEAD)
    last = label_history(open_study(db, "s", LEAD), "q1")[-1]
    assert (last.annotator, last.source) == ("csv:p.csv", "import")


def test_cli_audit_rows_record_the_channel_and_the_os_user(tmp_path: Path, store_target) -> None:
    import getpass

    from click.testing import CliRunner

    from evalcore.cli import main
    from evalcore.store.audit import audit_entries

    db, _ = team_store(store_target)
    db.conn.close()
    store = str(store_target)
    result = CliRunner().invoke(main, ["members", "add", "--db", store, "--study", "s", "--user",
                                       "new@acme.org", "--role", "annotator", "--actor", LEAD])
    assert result.exit_code == 0, result.output
    entry = audit_entries(open_study(open_store(store_target), "s", LEAD), limit=1)[0]
    assert (entry.actor, entry.channel, entry.os_user) == (LEAD, "cli", getpass.getuser())
