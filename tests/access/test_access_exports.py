"""No derived value of a document the exporter may not read leaves the store (issue 28,
item 2).

lena (acme and globex) pins ``p2`` over both organisations' documents, runs it, and a
later change of globex's b1 makes her next execution a recorded refusal. leo, a lead of
the same study in acme only, exports the study and the run: the archive and the run file
hold no content hash, score or count of globex's documents b1, b2 — nothing that would
confirm a guess of their text offline — while lena's own export holds everything.
"""

import json
import zipfile
from pathlib import Path

import pytest
from access_fixtures import LEAD, OUTSIDER, team_store
from click.testing import CliRunner
from lexical_builders import DOCS, protocol

from evalcore.access import PermissionDenied
from evalcore.cli import main
from evalcore.retrieval.errors import RetrievalRefused
from evalcore.retrieval.pin import pin_protocol
from evalcore.retrieval.workflow import execute_protocol
from evalcore.store.connection import open_store
from evalcore.store.corpus import DocumentIn, add_documents
from evalcore.store.hashing import content_hash
from evalcore.store.members import add_member, add_to_organisation
from evalcore.store.studies import create_organisation
from evalcore.store.study_archive import export_study, import_study, read_archive

LEO = "leo@acme.org"
GLOBEX = ("b1", "b2")
CHANGED_B1 = "solar panels subsidies for households, revised"


@pytest.fixture
def store(tmp_path: Path, store_target) -> Path:
    db, _ = team_store(store_target)
    add_to_organisation(db, user=LEAD, org_id="globex", actor=OUTSIDER)
    add_member(db, study_id="s", user=LEO, role="lead", actor=LEAD)
    pin_protocol(db, study_id="s", name="p2", protocol=protocol(organisations=["acme", "globex"]),
                 actor=LEAD)
    execute_protocol(db, study_id="s", protocol_name="p2", run_name="both", actor=LEAD)
    add_documents(db, "c", [DocumentIn(doc_id="b1", title=DOCS["b1"][0], text=CHANGED_B1,
                                       owner_org="globex", created_at="2026-01-01T00:00:00Z")],
                  actor=OUTSIDER)
    with pytest.raises(RetrievalRefused):
        execute_protocol(db, study_id="s", protocol_name="p2", run_name="again", actor=LEAD)
    db.conn.close()
    return store_target


def _members(path: Path) -> dict[str, str]:
    with zipfile.ZipFile(path) as z:
        return {n: z.read(n).decode("utf-8") for n in z.namelist()}


def _rows(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines()]


def _globex_hashes() -> set[str]:
    title, text, _ = DOCS["b1"]
    return {content_hash(title, text), content_hash(title, CHANGED_B1),
            content_hash(*DOCS["b2"][:2])}


def _export(store: Path, who: str, out: Path) -> dict[str, str]:
    result = CliRunner().invoke(main, ["export", "study", "--db", str(store), "--study", "s",
                                       "--out", str(out), "--actor", who])
    assert result.exit_code == 0, result.output
    return _members(out)


def test_attack_an_export_carries_no_hash_score_or_count_of_unreadable_documents(
        store: Path, tmp_path: Path) -> None:
    archive = _export(store, LEO, tmp_path / "leo.zip")
    everything = "".join(archive.values())
    for digest in _globex_hashes():  # nothing confirms a guessed text offline
        assert digest not in everything
    assert {r["doc_id"] for r in _rows(archive["protocol_documents.jsonl"])} == {
        "a1", "a2", "a3", "a4"}
    assert not {r["doc_id"] for r in _rows(archive["documents.jsonl"])} & set(GLOBEX)
    results = [r for r in _rows(archive["results.jsonl"]) if r["run"] == "both"]
    assert {r["unit_id"] for r in results} & set(GLOBEX)  # the study names them ...
    assert all(r["score"] is None for r in results if r["unit_id"] in GLOBEX)  # ... unscored
    assert all(r["score"] is not None for r in results if r["unit_id"] not in GLOBEX)
    pin = next(r for r in _rows(archive["audit.jsonl"]) if r["action"] == "lexical.pin"
               and json.loads(r["detail_json"])["protocol"] == "p2")
    assert json.loads(pin["detail_json"])["documents_by_organisation"] == {"acme": 4}
    assert json.loads(pin["detail_json"])["withheld_organisations"] == ["globex"]
    run = next(r for r in _rows(archive["runs.jsonl"]) if r["name"] == "both")
    assert "pinned_document_count" not in json.loads(run["protocol_json"])
    refusal = _rows(archive["retrieval_refusals.jsonl"])[0]
    assert "b1" not in refusal["message"] + refusal["detail_json"]
    assert '"globex": 2' not in everything and '"globex":2' not in everything
    manifest = json.loads(archive["manifest.json"])
    assert manifest["withheld"] == ["audit.jsonl", "documents.jsonl",
                                    "protocol_documents.jsonl", "results.jsonl",
                                    "retrieval_refusals.jsonl", "runs.jsonl"]


def test_the_cli_says_what_was_withheld(store: Path, tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["export", "study", "--db", str(store), "--study", "s",
                                       "--out", str(tmp_path / "x.zip"), "--actor", LEO])
    assert result.exit_code == 0
    assert "left out of audit.jsonl, documents.jsonl, protocol_documents.jsonl" in result.output


def test_whoever_reads_everything_exports_everything(store: Path, tmp_path: Path) -> None:
    archive = _export(store, LEAD, tmp_path / "lena.zip")
    assert json.loads(archive["manifest.json"])["withheld"] == []
    assert {r["doc_id"] for r in _rows(archive["protocol_documents.jsonl"])} >= set(GLOBEX)
    assert all(r["score"] is not None for r in _rows(archive["results.jsonl"])
               if r["run"] == "both")
    assert content_hash(*DOCS["b2"][:2]) in archive["protocol_documents.jsonl"]


def test_a_redacted_archive_imports_and_its_pin_refuses_to_run(store: Path,
                                                               tmp_path: Path, new_store_target) -> None:
    export_study(open_store(store), "s", tmp_path / "leo.zip", actor=LEO)
    target = open_store(new_store_target("target.db"))
    archive = read_archive(tmp_path / "leo.zip", tmp_path / "unpacked")
    summary = import_study(target, archive, actor=LEO, study_id="copy")
    assert "protocol_documents.jsonl" in summary.withheld
    with pytest.raises(PermissionDenied, match="may not run pinned protocol 'p2'"):
        execute_protocol(target, study_id="copy", protocol_name="p2", run_name="x", actor=LEO)
    create_organisation(target, "globex", actor=LEO)  # here leo may read globex's documents
    with pytest.raises(RetrievalRefused, match="no longer matches pinned protocol 'p2'"):
        execute_protocol(target, study_id="copy", protocol_name="p2", run_name="x", actor=LEO)


def test_a_run_file_carries_no_score_of_an_unreadable_document(store: Path,
                                                              tmp_path: Path) -> None:
    def export(who: str, *extra: str):
        out = tmp_path / f"{who}{len(extra)}.txt"
        result = CliRunner().invoke(main, ["export", "run", "--db", str(store), "--study", "s",
                                           "--run", "both", "-o", str(out), "--actor", who,
                                           *extra])
        return result, out

    theirs, full = export(LEAD)
    assert theirs.exit_code == 0
    scores = {line.split()[2]: line.split()[4] for line in full.read_text().splitlines()}
    result, out = export(LEO)
    assert result.exit_code == 0 and "scores are withheld" in result.output
    lines = out.read_text().splitlines()
    written = {line.split()[2]: line.split()[4] for line in lines}
    for doc in set(GLOBEX) & set(scores):  # not the BM25 score, nor any stored score
        assert written[doc] != scores[doc]
    assert set(written.values()) <= {f"{float(n)!r}" for n in range(1, 11)}  # rank-derived
    refused, never = export(LEO, "--scores", "original")
    assert refused.exit_code == 2 and "withheld from you" in refused.output
    assert not never.exists()
