"""A whole study out and back in: ``evalcore export study`` / ``import study`` (issue 12, item 9).

The round trip: a team study with everything a study holds (undo events, a
conflict, an adjudication, a reopened query, a frozen reference, a pinned
protocol, a stored report, three members, audit rows) is exported, imported
into an empty store and exported again: every member file is byte-identical
except ``manifest.json`` (export time) and ``audit.jsonl`` (which gains the
import's own row, after the original rows, unchanged). Evaluations, reference
hashes and ``evalcore verify`` agree. Then hostile archives, each refused with
exit 2 naming the member, and nothing written.
"""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner
from lexical_builders import protocol

from evalcore.cli import main
from evalcore.estimation.stored import draw_stored_sample, show_sample
from evalcore.report.from_store import report_from_store
from evalcore.report.stored import save_report
from evalcore.retrieval.pin import pin_protocol
from evalcore.store.automatic_labels import (
    automatic_labels,
    automatic_sources,
    write_automatic_import,
)
from evalcore.store.backup import verify_store
from evalcore.store.completeness import mark_complete, reopen
from evalcore.store.connection import open_store
from evalcore.store.corpus import DocumentIn, add_documents
from evalcore.store.labels import adjudicate, record_label, undo_last_label
from evalcore.store.members import add_member
from evalcore.store.references import freeze_reference, verify_reference
from evalcore.store.runs import add_run
from evalcore.store.samples import record_nonresponse
from evalcore.store.studies import QueryIn, StudyIn
from evalcore.store.study_handle import open_study
from evalcore.store.study_measures import set_study_measures, study_measures
from evalcore.store.study_setup import add_queries, create_study

LEAD = "lena@acme.org"
ANN = "ann@acme.org"
REV = "rex@acme.org"
STUDY = "s1"
#: Members that must differ between the first and the second export, and why.
DIFFER = {"manifest.json": "export time", "audit.jsonl": "the import's own audit row"}


def _build(path: Path) -> None:
    db = open_store(path)
    create_study(db, StudyIn(study_id=STUDY, corpus_id="c", org_id="acme", relevance_threshold=2,
                             gain="exponential"))
    add_documents(db, "c", [DocumentIn(doc_id=f"d{i}", title=f"solar {i}", text=f"panel {i} ü",
                                       owner_org="acme", created_at=datetime(2025, 1, 1, tzinfo=UTC))
                            for i in range(1, 6)])
    add_queries(db, STUDY, [QueryIn(query_id="q1", text="solar panel"),
                            QueryIn(query_id="q2", text="wind")])
    add_member(db, study_id=STUDY, user=LEAD, role="lead", actor=LEAD)
    add_member(db, study_id=STUDY, user=ANN, role="annotator", actor=LEAD)
    add_member(db, study_id=STUDY, user=REV, role="reviewer", actor=LEAD)
    record_label(db, study_id=STUDY, query_id="q1", unit_id="d1", gain=3, annotator=ANN,
                 note="clear =HYPERLINK")
    record_label(db, study_id=STUDY, query_id="q1", unit_id="d2", gain=1, annotator=ANN)
    undo_last_label(db, study_id=STUDY, query_id="q1", annotator=ANN)
    record_label(db, study_id=STUDY, query_id="q1", unit_id="d2", gain=2, annotator=ANN)
    record_label(db, study_id=STUDY, query_id="q1", unit_id="d2", gain=0, annotator=REV)
    record_label(db, study_id=STUDY, query_id="q1", unit_id="d3", gain=1, annotator=ANN)
    record_label(db, study_id=STUDY, query_id="q1", unit_id="d3", gain=4, annotator=REV)
    adjudicate(db, study_id=STUDY, query_id="q1", unit_id="d3", gain=2, reviewer=REV)
    mark_complete(db, study_id=STUDY, query_id="q1", actor=ANN)
    mark_complete(db, study_id=STUDY, query_id="q2", actor=ANN)
    reopen(db, study_id=STUDY, query_id="q2", actor=REV, reason="new doc")
    add_run(db, study_id=STUDY, name="r1", source="imported", k=3, actor=LEAD,
            results=[("q1", 1, "d1", 3.25), ("q1", 2, "d2", 0.1), ("q1", 3, "d5", None),
                     ("q2", 1, "d4", 1.0)])
    pin_protocol(db, study_id=STUDY, name="p1",
                 protocol=protocol(corpus_id="c", organisations=["acme"]), actor=LEAD)
    freeze_reference(db, study_id=STUDY, name="v1", actor=LEAD)
    set_study_measures(db, study_id=STUDY, measures=["nDCG@5", "P(rel=2)@3", "RBP(p=0.8)@3"],
                       actor=LEAD)
    save_report(db, report_from_store(open_study(db, STUDY, LEAD), runs=["r1"], created_by=LEAD, name="rep1", reference="v1"))
    add_run(db, study_id=STUDY, name="r2", source="imported", k=3, actor=LEAD,
            results=[("q1", 1, "d5", 2.0), ("q2", 1, "d5", 2.0), ("q2", 2, "d4", 1.0)])
    view = draw_stored_sample(db, study_id=STUDY, name="smp", candidate="r2", baseline="r1",
                              measures=["P@3"], size=3, seed=5, actor=LEAD)
    first = view.units()[0]
    record_nonresponse(db, study_id=STUDY, name="smp", query_id=first.query_id,
                       unit_id=first.unit_id, kind="skip", annotator=ANN)
    write_automatic_import(db, study_id=STUDY, source="llm", file="llm-1.jsonl", format="jsonl",
                           labels=[("q1", "d4", 2), ("q1", "d5", 1), ("q2", "d5", 0)], actor=LEAD)
    write_automatic_import(db, study_id=STUDY, source="bm", file="bm.csv", format="csv",
                           labels=[("q2", "d4", 3)], actor=LEAD)
    write_automatic_import(db, study_id=STUDY, source="llm", file="llm-2.jsonl", format="jsonl",
                           labels=[("q1", "d5", 3)], actor=LEAD)  # replaces the first's d5
    db.conn.close()


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("archive") / "source.sqlite"
    _build(path)
    return path


def _cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, [str(a) for a in args])
    return result.exit_code, result.output + (result.stderr if result.stderr_bytes else "")


def _members(archive: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(archive) as z:
        return {n: z.read(n) for n in z.namelist()}


def _rezip(archive: Path, out: Path, change: dict[str, bytes | None], *,
           fix_manifest: bool = False) -> Path:
    """A copy of ``archive`` with members replaced (None: removed), manifest re-signed or not."""
    members = _members(archive)
    for name, data in change.items():
        if data is None:
            members.pop(name, None)
        else:
            members[name] = data
    if fix_manifest:
        manifest = json.loads(members["manifest.json"])
        for name, data in change.items():
            if data is not None and name in manifest["members"]:
                manifest["members"][name] = {"rows": data.count(b"\n"), "bytes": len(data),
                                             "sha256": hashlib.sha256(data).hexdigest()}
        members["manifest.json"] = json.dumps(manifest).encode()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in members.items():
            z.writestr(name, data)
    return out


def _counts(path: Path) -> dict[str, int]:
    """Rows per table, but for the write counter ``corpus_generations`` (its row appears when
    documents are written, even if a failed import then removes them)."""
    return {t: n for t, n in verify_store(path).tables.items() if t != "corpus_generations"}


@pytest.fixture(scope="module")
def exported(source: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("out") / "s1.zip"
    code, text = _cli("export", "study", "--db", source, "--study", STUDY, "--out", out,
                      "--actor", LEAD)
    assert code == 0, text
    return out


def test_the_round_trip_is_exact(source: Path, exported: Path, tmp_path: Path, new_store_target) -> None:
    target = new_store_target("target.sqlite")
    open_store(target).conn.close()
    code, text = _cli("import", "study", "--db", target, "--in", exported, "--actor", LEAD)
    assert code == 0, text
    again = tmp_path / "again.zip"
    code, text = _cli("export", "study", "--db", target, "--study", STUDY, "--out", again,
                      "--actor", LEAD)
    assert code == 0, text
    first, second = _members(exported), _members(again)
    assert set(first) == set(second)
    differing = {n for n in first if first[n] != second[n]}
    assert differing == set(DIFFER), differing
    # the audit log is history: the original rows unchanged, the import appended after them
    old, new = first["audit.jsonl"].splitlines(), second["audit.jsonl"].splitlines()
    assert new[:len(old)] == old and len(new) == len(old) + 1
    assert json.loads(new[-1])["action"] == "study.import"
    manifest = json.loads(second["manifest.json"])
    assert manifest["format_version"] == 3 and manifest["study_id"] == STUDY
    assert manifest["members"]["sample_units.jsonl"]["rows"] > 0
    assert manifest["members"]["sample_nonresponses.jsonl"]["rows"] == 1
    assert manifest["withheld"] == []  # the lead reads every document the study uses
    assert verify_store(target).ok, verify_store(target).problems
    db = open_store(target)
    assert verify_reference(open_study(db, STUDY, LEAD), "v1")
    assert [m.canonical for m in study_measures(open_study(db, STUDY, LEAD))] == [
        "nDCG@5",
        "P(rel=2)@3",
        "RBP(p=0.8)@3",
    ]
    for table in ("label_events", "completeness_events", "audit_log"):  # still append-only
        with pytest.raises(Exception, match="append-only"):
            db.execute(f"DELETE FROM {table}")
    db.conn.close()
    for store in (source, target):  # the same evidence gives the same numbers
        code, text = _cli("evaluate", "--db", store, "--study", STUDY, "--run", "r1",
                          "--actor", LEAD)
        assert code == 0, text
        if store == source:
            expected = text
    assert text == expected
    code, text = _cli("reference", "verify", "--db", target, "--study", STUDY, "--name", "v1",
                      "--actor", LEAD)
    assert code == 0 and "intact" in text


def test_import_under_another_id_and_the_importer_becomes_lead(exported: Path,
                                                                tmp_path: Path, new_store_target) -> None:
    target = new_store_target("t.sqlite")
    open_store(target).conn.close()
    code, text = _cli("import", "study", "--db", target, "--in", exported, "--as", "copy",
                      "--actor", ANN)
    assert code == 0, text
    db = open_store(target)
    roles = dict(db.execute("SELECT user_id, role FROM study_members WHERE study_id = 'copy'"))
    assert roles == {LEAD: "lead", ANN: "lead", REV: "reviewer"}
    kinds = [r[0] for r in db.execute(
        "SELECT kind FROM label_events WHERE study_id = 'copy' ORDER BY event_id")]
    assert kinds == ["label", "label", "undo", "label", "label", "label", "label", "adjudicate"]
    db.conn.close()
    code, text = _cli("evaluate", "--db", target, "--study", "copy", "--run", "r1",
                      "--actor", ANN)
    assert code == 0, text


def test_export_needs_the_lead_role(source: Path, tmp_path: Path) -> None:
    out = tmp_path / "x.zip"
    for who in (ANN, REV, "mallory@evil.example"):
        code, text = _cli("export", "study", "--db", source, "--study", STUDY, "--out", out,
                          "--actor", who)
        assert code != 0 and "Traceback" not in text and not out.exists(), (who, text)
        assert "d1" not in text and "q1" not in text


def test_an_existing_output_file_is_never_overwritten(source: Path, tmp_path: Path) -> None:
    out = tmp_path / "x.zip"
    out.write_text("keep me")
    code, text = _cli("export", "study", "--db", source, "--study", STUDY, "--out", out,
                      "--actor", LEAD)
    assert code == 2 and "already exists" in text and out.read_text() == "keep me"


def _refused(target: Path, archive: Path, *words: str, as_id: str | None = None) -> str:
    before = _counts(target)
    args = ["import", "study", "--db", target, "--in", archive, "--actor", LEAD]
    code, text = _cli(*args, *(["--as", as_id] if as_id else []))
    assert code == 2, text
    assert "Traceback" not in text
    for word in words:
        assert word in text, (word, text)
    assert _counts(target) == before, "a refused import wrote something"
    return text


@pytest.fixture
def empty(tmp_path: Path, new_store_target) -> Path:
    target = new_store_target("empty.sqlite")
    open_store(target).conn.close()
    return target


def test_attack_wrong_format_version(exported: Path, empty: Path, tmp_path: Path) -> None:
    manifest = json.loads(_members(exported)["manifest.json"])
    manifest["format_version"] = 99
    bad = _rezip(exported, tmp_path / "v99.zip", {"manifest.json": json.dumps(manifest).encode()})
    _refused(empty, bad, "format version 99", "version 1, 2")


def test_attack_tampered_member(exported: Path, empty: Path, tmp_path: Path) -> None:
    data = _members(exported)["label_events.jsonl"].replace(b'"gain":0', b'"gain":4', 1)
    bad = _rezip(exported, tmp_path / "t.zip", {"label_events.jsonl": data})
    _refused(empty, bad, "label_events.jsonl", "sha256", "altered")


def test_attack_tampered_document_with_a_re_signed_manifest(exported: Path, empty: Path,
                                                             tmp_path: Path) -> None:
    data = _members(exported)["documents.jsonl"].replace(b"panel 1", b"PANEL 1", 1)
    bad = _rezip(exported, tmp_path / "t.zip", {"documents.jsonl": data}, fix_manifest=True)
    _refused(empty, bad, "documents.jsonl", "d1", "content_hash")


def test_attack_tampered_reference_with_a_re_signed_manifest(exported: Path, empty: Path,
                                                              tmp_path: Path) -> None:
    data = _members(exported)["reference_labels.jsonl"].replace(b'"gain":3', b'"gain":4', 1)
    bad = _rezip(exported, tmp_path / "t.zip", {"reference_labels.jsonl": data},
                 fix_manifest=True)
    _refused(empty, bad, "references.jsonl", "v1", "content hash")


def test_attack_missing_and_unexpected_members(exported: Path, empty: Path,
                                               tmp_path: Path) -> None:
    _refused(empty, _rezip(exported, tmp_path / "m.zip", {"reports.jsonl": None}),
             "reports.jsonl", "not in the zip")
    _refused(empty, _rezip(exported, tmp_path / "m2.zip", {"manifest.json": None}),
             "manifest.json", "not a study archive")
    _refused(empty, _rezip(exported, tmp_path / "x.zip", {"extra.jsonl": b"{}\n"}),
             "extra.jsonl", "unexpected")
    _refused(empty, _rezip(exported, tmp_path / "p.zip", {"../evil.jsonl": b"{}\n"}),
             "unsafe path")


def test_attack_malformed_rows_are_named_by_line(exported: Path, empty: Path,
                                                 tmp_path: Path) -> None:
    events = _members(exported)["label_events.jsonl"]
    n = events.count(b"\n")
    data = events + (
        b'{"query_id":"q1","unit_id":"d1","kind":"label","gain":9,"annotator":"x",'
        b'"created_at":"t","note":"","source":"app"}\nnot json\n')
    bad = _rezip(exported, tmp_path / "t.zip", {"label_events.jsonl": data}, fix_manifest=True)
    _refused(empty, bad, f"label_events.jsonl:{n + 1}: gain", "at most 4",
             f"label_events.jsonl:{n + 2}: not a JSON line", "2 input error(s)")


def test_attack_zip_bomb_and_not_a_zip(empty: Path, tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.zip"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        with z.open("results.jsonl", "w", force_zip64=True) as out:
            for _ in range(64):
                out.write(b" " * (1024 * 1024))
    _refused(empty, bomb, "zip bomb")
    junk = tmp_path / "junk.zip"
    junk.write_bytes(b"PK\x03\x04 nope" * 20)
    _refused(empty, junk, "not a zip")


@pytest.mark.sqlite_only
def test_attack_duplicate_study_id(source: Path, exported: Path, tmp_path: Path) -> None:
    target = tmp_path / "copy.sqlite"
    target.write_bytes(source.read_bytes())
    _refused(target, exported, "already exists", "--as")


@pytest.mark.sqlite_only
def test_import_into_a_team_organisation_needs_its_membership(exported: Path, source: Path,
                                                              tmp_path: Path) -> None:
    """Corpus ownership holds: a stranger cannot import a study into acme's corpus."""
    target = tmp_path / "copy.sqlite"
    target.write_bytes(source.read_bytes())
    before = _counts(target)
    code, text = _cli("import", "study", "--db", target, "--in", exported, "--as", "mine",
                      "--actor", "mallory@evil.example")
    assert code != 0 and "refused" in text and "Traceback" not in text, text
    assert _counts(target) == before


@pytest.mark.parametrize("step", ["append_history", "_restore_members"])
def test_a_failure_after_the_chunks_leaves_nothing(exported: Path, empty: Path, step: str,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Before step 3, and inside its last transaction (history chunks already committed)."""
    import evalcore.store.study_archive as archive_module

    def explode(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(archive_module._Import, step, explode)
    before = _counts(empty)
    code, text = _cli("import", "study", "--db", empty, "--in", exported, "--actor", LEAD)
    assert code == 1 and "space" in text, text
    assert _counts(empty) == before


def test_an_archive_is_deterministic(source: Path, exported: Path, tmp_path: Path) -> None:
    again = tmp_path / "again.zip"
    code, _ = _cli("export", "study", "--db", source, "--study", STUDY, "--out", again,
                   "--actor", LEAD)
    assert code == 0
    first, second = _members(exported), _members(again)
    assert {n for n in first if first[n] != second[n]} == {"manifest.json"}
    assert io.BytesIO(first["study.jsonl"]).read().count(b"\n") == 1


@pytest.mark.sqlite_only
@pytest.mark.parametrize("corpus_owner", ["acme", "evil"])
def test_attack_an_archive_claiming_a_team_organisations_documents(
        exported: Path, source: Path, tmp_path: Path, corpus_owner: str) -> None:
    """Mallory re-labels the archive as her organisation's study over a new corpus, keeping
    documents owned by acme (or the corpus owned by acme): acme's rules still hold."""
    settings = json.loads(_members(exported)["study.jsonl"])
    settings.update(org_id="evil", org_name="evil", corpus_id="c2", corpus_owner=corpus_owner)
    line = (json.dumps(settings, separators=(",", ":")) + "\n").encode()
    bad = _rezip(exported, tmp_path / "evil.zip", {"study.jsonl": line}, fix_manifest=True)
    target = tmp_path / "victim.sqlite"
    target.write_bytes(source.read_bytes())
    before = _counts(target)
    code, text = _cli("import", "study", "--db", target, "--in", bad, "--as", "mine",
                      "--actor", "mallory@evil.example")
    assert code == 1 and "refused" in text and "acme" in text and "Traceback" not in text, text
    assert _counts(target) == before


def _study_ids(path: Path) -> list[str]:
    from evalcore.store.studies import study_ids

    reader = open_store(path)
    try:
        return study_ids(reader)
    finally:
        reader.conn.close()


def test_a_staged_study_is_invisible_until_its_last_commit(exported: Path, empty: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    import evalcore.store.study_archive as archive_module
    from evalcore.store.studies import StudyNotFoundError, get_study

    seen: list[tuple] = []
    original = archive_module._Import._restore_members

    def watched(job, *args):  # inside the final transaction: the chunks are committed
        reader = open_store(empty)
        events = reader.execute("SELECT count(*) FROM label_events WHERE study_id = ?",
                                [STUDY]).fetchone()[0]
        with pytest.raises(StudyNotFoundError):
            get_study(reader, STUDY)
        seen.append((reader.execute("SELECT count(*) FROM studies").fetchone()[0] == 1,
                     events > 0, _study_ids(empty)))
        reader.conn.close()
        return original(job, *args)

    monkeypatch.setattr(archive_module._Import, "_restore_members", watched)
    code, text = _cli("import", "study", "--db", empty, "--in", exported, "--actor", LEAD)
    assert code == 0, text
    assert seen == [(True, True, [])]  # written, yet no reader finds the study
    assert _study_ids(empty) == [STUDY]


def test_a_killed_study_import_stays_invisible_and_the_next_open_removes_it(
        exported: Path, empty: Path) -> None:
    import os
    import subprocess
    import sys

    before = _counts(empty)
    script = (
        "import os, sys\n"
        "import evalcore.store.study_archive as a\n"
        "a._Import._restore_members = lambda *args: os._exit(9)\n"
        "from evalcore.cli import main\n"
        f"main(['import', 'study', '--db', {str(empty)!r}, '--in', {str(exported)!r}, "
        f"'--actor', {LEAD!r}])\n")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    done = subprocess.run([sys.executable, "-c", script], env=env, timeout=300)
    assert done.returncode == 9
    raw = open_store(empty, migrate=False)
    assert raw.execute("SELECT count(*) FROM label_events").fetchone()[0] > 0  # left behind
    assert raw.execute("SELECT staged_by FROM studies").fetchone()[0]
    raw.conn.close()
    assert raw_rows(empty, "organisations") > 0  # the import had created its organisation
    assert _study_ids(empty) == []  # opening discards it
    # ... and the organisation, user, membership and corpus rows it had created too
    # (written down in the staged study: evalcore.store.staged_studies.record_created)
    assert _counts(empty) == before


def raw_rows(path: Path, table: str) -> int:
    raw = open_store(path, migrate=False)
    try:
        return raw.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
    finally:
        raw.conn.close()


@pytest.mark.sqlite_only
def test_a_published_studys_history_still_cannot_be_deleted(exported: Path, empty: Path) -> None:
    import sqlite3

    code, text = _cli("import", "study", "--db", empty, "--in", exported, "--actor", LEAD)
    assert code == 0, text
    db = open_store(empty)
    for table in ("label_events", "completeness_events", "audit_log", "reference_labels"):
        with pytest.raises(sqlite3.IntegrityError):
            db.execute(f"DELETE FROM {table} WHERE study_id = ?", [STUDY])


def test_a_sample_comes_back_whole_and_an_older_archive_has_none(exported: Path, empty: Path,
                                                                 tmp_path: Path, new_store_target) -> None:
    code, text = _cli("import", "study", "--db", empty, "--in", exported, "--actor", LEAD)
    assert code == 0, text
    db = open_store(empty)
    view = show_sample(open_study(db, STUDY, LEAD), "smp")
    assert view.design.run_a == "r2" and view.sample.seed == 5 and view.sample.n_units > 0
    db.conn.close()
    members = _members(exported)
    manifest = json.loads(members["manifest.json"])
    manifest["format_version"] = 2
    gone = ("samples.jsonl", "sample_units.jsonl", "sample_nonresponses.jsonl",
            "automatic_imports.jsonl", "automatic_labels.jsonl")
    for name in gone:
        del manifest["members"][name]
    old = _rezip(exported, tmp_path / "v2.zip", {
        "manifest.json": json.dumps(manifest).encode(), **dict.fromkeys(gone)})
    target = new_store_target("target.sqlite")
    open_store(target).conn.close()
    code, text = _cli("import", "study", "--db", target, "--in", old, "--actor", LEAD)
    assert code == 0, text
    assert "samples" in _counts(target) and _counts(target)["samples"] == 0
    assert _counts(target)["automatic_imports"] == 0
    units = json.loads(members["manifest.json"])["members"]["sample_units.jsonl"]["rows"]
    orphan = _rezip(exported, tmp_path / "orphan.zip", {
        "samples.jsonl": b""}, fix_manifest=True)
    fresh = new_store_target("o.sqlite")
    open_store(fresh).conn.close()
    code, text = _cli("import", "study", "--db", fresh, "--in", orphan, "--actor", LEAD)
    assert units and code == 2 and "which samples.jsonl lacks" in text


def test_automatic_judgments_come_back_apart_from_the_evidence(source: Path, exported: Path,
                                                               empty: Path) -> None:
    manifest = json.loads(_members(exported)["manifest.json"])
    assert manifest["members"]["automatic_imports.jsonl"]["rows"] == 3
    assert manifest["members"]["automatic_labels.jsonl"]["rows"] == 5
    code, text = _cli("import", "study", "--db", empty, "--in", exported, "--actor", LEAD)
    assert code == 0, text
    before, after = open_store(source), open_store(empty)
    try:
        old, new = open_study(before, STUDY, LEAD), open_study(after, STUDY, LEAD)
        assert automatic_labels(new) == automatic_labels(old)
        assert automatic_labels(new)["llm"][("q1", "d5")] == 3  # the later import still wins
        assert automatic_sources(new) == automatic_sources(old)
        imports = "SELECT source, file, format, imported_by, imported_at, n_labels, staged_by " \
                  "FROM automatic_imports WHERE study_id = ? ORDER BY import_id"
        assert (after.execute(imports, [STUDY]).fetchall()
                == before.execute(imports, [STUDY]).fetchall())
    finally:
        before.conn.close()
        after.conn.close()


def test_an_automatic_label_of_a_missing_import_is_refused(exported: Path, tmp_path: Path, new_store_target) -> None:
    members = _members(exported)
    first = members["automatic_imports.jsonl"].splitlines(keepends=True)[0]
    orphan = _rezip(exported, tmp_path / "orphan.zip", {
        "automatic_imports.jsonl": first}, fix_manifest=True)
    target = new_store_target("o.sqlite")
    open_store(target).conn.close()
    before = _counts(target)
    code, text = _cli("import", "study", "--db", target, "--in", orphan, "--actor", LEAD)
    assert code == 2, text
    assert "automatic_labels.jsonl" in text and "automatic label of import 2" in text
    assert "which automatic_imports.jsonl lacks" in text and "Traceback" not in text
    assert _counts(target) == before


def test_a_failed_import_removes_its_automatic_judgments(exported: Path, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch, new_store_target) -> None:
    from evalcore.store import study_archive

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("disk gone")

    target = new_store_target("f.sqlite")
    open_store(target).conn.close()
    before = _counts(target)
    monkeypatch.setattr(study_archive, "removals_in_audit", broken)
    code, text = _cli("import", "study", "--db", target, "--in", exported, "--actor", LEAD)
    assert code != 0
    assert _counts(target) == before and raw_rows(target, "automatic_labels") == 0
