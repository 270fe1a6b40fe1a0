"""``evalcore protocol pin`` and ``evalcore retrieve``: outputs and exit statuses."""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from lexical_builders import docs, lexical_store

from evalcore.cli import main
from evalcore.store.connection import open_store
from evalcore.store.corpus import add_documents
from evalcore.store.refusals import list_refusals
from evalcore.store.runs import list_runs
from evalcore.store.study_handle import open_study

PROTOCOL = {"method": "lexical", "top_k": 5, "cutoff": "2026-06-30T00:00:00Z",
            "organisations": ["acme"]}


@pytest.fixture
def setup(tmp_path, store_target):
    lexical_store(store_target)
    path = tmp_path / "protocol.json"
    path.write_text(json.dumps(PROTOCOL, indent=2))
    return store_target, path


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def test_pin_then_retrieve_by_name(setup):
    db_path, protocol_path = setup
    pin = invoke("protocol", "pin", "--db", db_path, "--study", "s", "--protocol", protocol_path,
                 "--name", "p1", "--actor", "ann")
    assert pin.exit_code == 0, pin.output
    assert "corpus_fingerprint: sha256:" in pin.output
    assert "documents: 4" in pin.output and "acme: 4" in pin.output
    result = invoke("retrieve", "--db", db_path, "--study", "s", "--protocol", "p1",
                    "--name", "r1")
    assert result.exit_code == 0, result.output
    assert "queries: 4 of 4" in result.output and "scan_complete: true" in result.output
    db = open_store(db_path)
    assert [r.name for r in list_runs(open_study(db, "s", None))] == ["r1"]
    shown = invoke("protocol", "show", "--db", db_path, "--study", "s", "--name", "p1")
    assert json.loads(shown.output)["document_count"] == 4
    listed = invoke("protocol", "list", "--db", db_path, "--study", "s")
    assert listed.output.startswith("p1\t4\tsha256:")


def test_retrieve_with_a_protocol_file_pins_then_runs(setup):
    db_path, protocol_path = setup
    result = invoke("retrieve", "--db", db_path, "--study", "s", "--protocol", protocol_path,
                    "--name", "r1")
    assert result.exit_code == 0, result.output
    assert "as protocol 'r1'" in result.output
    db = open_store(db_path)
    assert list_runs(open_study(db, "s", None))[0].protocol["pinned_protocol"] == "r1"


def test_refusal_exits_1_with_the_changed_documents(setup):
    db_path, protocol_path = setup
    invoke("protocol", "pin", "--db", db_path, "--study", "s", "--protocol", protocol_path,
           "--name", "p1")
    add_documents(open_store(db_path), "c", docs(a1=("Solar panels", "rewritten", "acme")))
    result = CliRunner().invoke(main, ["retrieve", "--db", str(db_path), "--study", "s",
                                       "--protocol", "p1", "--name", "r1"])
    assert result.exit_code == 1
    assert "content changed: 1: a1" in result.output
    db = open_store(db_path)
    assert list_runs(open_study(db, "s", None)) == [] and len(list_refusals(open_study(db, "s", None))) == 1


@pytest.mark.parametrize(
    "args, message",
    [
        (["--study", "nope", "--protocol", "p1", "--name", "r"], "no study 'nope'"),
        (["--study", "s", "--protocol", "missing", "--name", "r"], "no protocol 'missing'"),
        (["--study", "s", "--protocol", "missing.json", "--name", "r"], "cannot read"),
    ],
)
def test_bad_input_exits_2(setup, args, message):
    db_path, _ = setup
    result = CliRunner().invoke(main, ["retrieve", "--db", str(db_path), *args])
    assert result.exit_code == 2
    assert message in result.output


def test_invalid_protocol_file_exits_2_listing_every_error(setup, tmp_path, missing_store_target):
    db_path, _ = setup
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({**PROTOCOL, "method": "dense", "top_k": 0}, indent=2))
    result = CliRunner().invoke(main, ["protocol", "pin", "--db", str(db_path), "--study", "s",
                                       "--protocol", str(bad), "--name", "p"])
    assert result.exit_code == 2
    assert "2 problems" in result.output
    assert f"{bad}:2: method:" in result.output and f"{bad}:3: top_k:" in result.output
    missing_db = CliRunner().invoke(main, ["protocol", "pin", "--db", str(missing_store_target),
                                           "--study", "s", "--protocol", str(bad.with_name(
                                               "protocol.json")), "--name", "p"])
    # SQLite: no file; PostgreSQL: the server says the database does not exist
    assert missing_db.exit_code == 2 and "Traceback" not in missing_db.output
    assert "no evidence store" in missing_db.output or "does not exist" in missing_db.output
    if isinstance(missing_store_target, Path):  # no file was created
        assert not missing_store_target.exists()


def test_pin_name_only_with_a_file(setup):
    db_path, _ = setup
    result = CliRunner().invoke(main, ["retrieve", "--db", str(db_path), "--study", "s",
                                       "--protocol", "p1", "--name", "r", "--pin-name", "x"])
    assert result.exit_code == 2 and "--pin-name" in result.output


def test_a_taken_run_name_with_a_protocol_file_leaves_no_new_pin(setup):
    db_path, protocol_path = setup
    first = invoke("retrieve", "--db", db_path, "--study", "s", "--protocol", protocol_path,
                   "--name", "r1")
    assert first.exit_code == 0
    again = CliRunner().invoke(main, ["retrieve", "--db", str(db_path), "--study", "s",
                                      "--protocol", str(protocol_path), "--name", "r1",
                                      "--pin-name", "p2"])
    assert again.exit_code == 2 and "already exists" in again.output
    listed = invoke("protocol", "list", "--db", db_path, "--study", "s")
    assert [line.split("\t")[0] for line in listed.output.splitlines()] == ["r1"]


def test_pin_warns_about_an_organisation_without_documents(setup, tmp_path):
    db_path, _ = setup
    path = tmp_path / "typo.json"
    path.write_text(json.dumps({**PROTOCOL, "organisations": ["acme", "acmee"]}))
    result = invoke("protocol", "pin", "--db", db_path, "--study", "s", "--protocol", path,
                    "--name", "p")
    assert result.exit_code == 0
    assert "acmee: 0" in result.output and "owns no visible document" in result.output
