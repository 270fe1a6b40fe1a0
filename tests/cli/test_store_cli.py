"""The store commands: init, study, import, export, complete, reference."""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from shared_data import TREC_EVAL_DATA
from store_fixtures import table_snapshot

import evalcore.cli.store_cmds  # noqa: F401  (registers the commands)
from evalcore.cli import main
from evalcore.store.connection import open_store

TREC = TREC_EVAL_DATA


def cli(*args: str):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture
def db(tmp_path, store_target) -> Path:
    path = store_target
    assert cli("init", "--db", path).exit_code == 0
    result = cli("study", "create", "--db", path, "--study", "s", "--corpus", "c")
    assert result.exit_code == 0, result.output
    return path


def test_init_and_study(db, tmp_path):
    again = cli("study", "create", "--db", db, "--study", "s", "--corpus", "c")
    assert again.exit_code == 2
    assert "study 's' already exists" in again.stderr
    listed = cli("study", "list", "--db", db)
    assert json.loads(listed.output)["study_id"] == "s"
    missing = cli("study", "list", "--db", tmp_path / "nope.db")
    assert missing.exit_code == 2 and "does not exist" in missing.stderr


def test_import_errors_exit_2_with_locations_and_nothing_written(db, tmp_path):
    bad = tmp_path / "bad.qrels"
    bad.write_text("q1 0 A 9\nq1 0 B\nq1 0 C 1\n")
    before = table_snapshot(open_store(db))
    result = cli("import", "qrels", "--db", db, "--study", "s", bad)
    assert result.exit_code == 2
    lines = result.stderr.splitlines()
    assert lines[0].startswith(f"{bad}:1: gain: gain 9 is outside 0..4")
    assert lines[1].startswith(f"{bad}:2: expected 4 fields")
    assert lines[-1] == "evalcore import qrels: 2 input error(s); nothing was written"
    assert result.stdout == ""
    assert table_snapshot(open_store(db)) == before


@pytest.mark.needs_shared
def test_unknown_study_names_known_ones(db):
    result = cli("import", "qrels", "--db", db, "--study", "zz", TREC / "qrels.test")
    assert result.exit_code == 2
    assert "no study 'zz' in this store (known studies: s)" in result.stderr


@pytest.mark.needs_shared
def test_import_export_freeze_cycle(db, tmp_path):
    ok = cli("import", "qrels", "--db", db, "--study", "s", TREC / "qrels.test", "--complete")
    assert ok.exit_code == 0, ok.stderr
    assert "label events: 3681" in ok.output
    ok = cli("import", "run", "--db", db, "--study", "s", TREC / "results.test", "--k", "10")
    assert ok.exit_code == 0 and "run: STANDARD" in ok.output
    frozen = cli("reference", "freeze", "--db", db, "--study", "s", "--name", "v1", "--actor", "me")
    assert frozen.exit_code == 0
    version = json.loads(frozen.output)
    assert (version["n_labels"], version["n_complete"], version["created_by"]) == (3681, 3, "me")
    assert cli("reference", "freeze", "--db", db, "--study", "s", "--name", "v1").exit_code == 2
    listed = cli("reference", "list", "--db", db, "--study", "s")
    assert [json.loads(x)["name"] for x in listed.output.splitlines()] == ["v1"]
    qrels = cli("export", "qrels", "--db", db, "--study", "s", "--reference", "v1")
    assert len(qrels.output.splitlines()) == 3681
    out = tmp_path / "run.txt"
    exported = cli("export", "run", "--db", db, "--study", "s", "--run", "STANDARD", "-o", out)
    assert exported.exit_code == 0 and out.exists()
    labels = cli("export", "labels", "--db", db, "--study", "s", "--format", "jsonl")
    assert len(labels.output.splitlines()) == 3681
    assert json.loads(labels.output.splitlines()[0])["annotator"] == "qrels:qrels.test"


def test_complete_command_and_labels_csv(db, tmp_path):
    csv_file = tmp_path / "l.csv"
    csv_file.write_text("query_id,unit_id,gain,annotator\nq1,A,1,ann\nq2,B,0,ann\n")
    assert cli("import", "labels-csv", "--db", db, "--study", "s", csv_file,
               "--keep-annotators").exit_code == 0
    result = cli("complete", "--db", db, "--study", "s", "q1", "q2", "--reason", "pooled")
    assert result.exit_code == 0
    assert result.output.startswith("2 query(ies) marked complete")


def test_complete_refuses_a_query_the_study_does_not_have(db, tmp_path):
    # A mistyped id used to be claimed complete and so became a new, empty query of the
    # study: every comparison's "all queries" then counted it (P@k = 0 for both runs).
    csv_file = tmp_path / "l.csv"
    csv_file.write_text("query_id,unit_id,gain,annotator\nq1,A,1,ann\n")
    assert cli("import", "labels-csv", "--db", db, "--study", "s", csv_file,
               "--keep-annotators").exit_code == 0
    before = table_snapshot(open_store(db))
    result = cli("complete", "--db", db, "--study", "s", "q1", "q1-typo")
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "no query 'q1-typo' in study 's'" in result.output
    assert "evalcore queries list --study s" in result.output
    assert table_snapshot(open_store(db)) == before  # nothing written, not even q1's claim
    listed = cli("queries", "list", "--db", db, "--study", "s").stdout.split()
    assert "q1" in listed and "q1-typo" not in listed


@pytest.mark.needs_shared
def test_bad_gain_map_is_a_usage_error(db):
    result = cli("import", "qrels", "--db", db, "--study", "s", TREC / "qrels.test",
                 "--gain-map", "x")
    assert result.exit_code == 2 and "--gain-map" in result.stderr


def _evaluate(*args):
    result = cli("evaluate", *args)
    assert result.exit_code == 0, result.stderr
    return result.stdout


@pytest.mark.needs_shared
@pytest.mark.parametrize("extra", [[], ["--relevance-threshold", "2", "--gain", "exponential"]])
def test_evaluate_from_store_prints_the_same_json_as_from_files(db, extra, tmp_path):
    qrels, run = TREC / "qrels.test", TREC / "results.test"
    cli("import", "qrels", "--db", db, "--study", "s", qrels, "--complete")
    cli("import", "run", "--db", db, "--study", "s", run, "--k", "10")
    from_files = _evaluate("--qrels", qrels, "--run", run, "--k", "10", "--complete", *extra)
    # --complete is an assumption made at evaluation time, so the file's protocol records it;
    # the store recorded completeness per query at import instead. Everything else is equal.
    assumed = ',"populations_declared_complete":true}'
    assert assumed in from_files
    from_files = from_files.replace(assumed, "}", 1)
    assert _evaluate("--db", db, "--study", "s", "--run", "STANDARD", *extra) == from_files
    cli("reference", "freeze", "--db", db, "--study", "s", "--name", "v1")
    # Later labels change the working reference, not v1.
    extra_labels = tmp_path / "more.csv"
    extra_labels.write_text("query_id,unit_id,gain\n301,FBIS3-10082,0\n")
    cli("import", "labels-csv", "--db", db, "--study", "s", extra_labels)
    frozen = _evaluate("--db", db, "--study", "s", "--run", "STANDARD", "--reference", "v1", *extra)
    assert frozen == from_files


@pytest.mark.needs_shared
def test_evaluate_uses_the_study_threshold_by_default(tmp_path, new_store_target):
    path = new_store_target("t.db")
    cli("init", "--db", path)
    cli("study", "create", "--db", path, "--study", "s", "--corpus", "c", "--threshold", "2")
    qrels, run = TREC / "qrels.test", TREC / "results.test"
    cli("import", "qrels", "--db", path, "--study", "s", qrels, "--complete")
    cli("import", "run", "--db", path, "--study", "s", run, "--k", "10")
    stored = json.loads(_evaluate("--db", path, "--study", "s", "--run", "STANDARD"))
    assert stored["protocol"]["relevance_threshold"] == 2


def test_evaluate_store_errors(db):
    result = cli("evaluate", "--db", db, "--study", "s", "--run", "nope")
    assert result.exit_code == 2
    assert result.stderr.startswith(f"{db}: --run: no run 'nope' in study 's'")
    result = cli("evaluate", "--db", db, "--study", "s", "--run", "x", "--k", "3")
    assert result.exit_code == 2 and "--db cannot be combined with --k" in result.stderr
    result = cli("evaluate", "--study", "s", "--run", "x")
    assert result.exit_code == 2 and "--study requires --db" in result.stderr


@pytest.mark.needs_shared
def test_reference_verify(db):
    cli("import", "qrels", "--db", db, "--study", "s", TREC / "qrels.test")
    cli("reference", "freeze", "--db", db, "--study", "s", "--name", "v1")
    ok = cli("reference", "verify", "--db", db, "--study", "s", "--name", "v1")
    assert ok.exit_code == 0 and "intact (sha256:" in ok.stdout
    raw = open_store(db)
    raw.execute("DROP TRIGGER reference_labels_sealed")  # tampering outside evalcore
    raw.execute("INSERT INTO reference_labels VALUES ('s', 'v1', 'zz', 'X', 1)")
    raw.conn.close()
    bad = cli("reference", "verify", "--db", db, "--study", "s", "--name", "v1")
    assert bad.exit_code == 1 and "do NOT match" in bad.stderr
    missing = cli("reference", "verify", "--db", db, "--study", "s", "--name", "v9")
    assert missing.exit_code == 2 and "frozen versions: v1" in missing.stderr


def test_every_store_option_of_every_command_takes_a_url() -> None:
    """One option type for every ``--db`` (and migrate-store's ``--from`` / ``--to``): each
    takes a postgresql:// URL wherever it takes a file."""
    import click

    from evalcore.cli import load_commands, main
    from evalcore.cli.store_location import StoreLocation

    load_commands()

    def commands(cmd: click.Command, path: str):
        if isinstance(cmd, click.Group):
            for name, sub in cmd.commands.items():
                yield from commands(sub, f"{path} {name}".strip())
        else:
            yield path, cmd

    options = [(name, param) for name, cmd in commands(main, "") for param in cmd.params
               if isinstance(param, click.Option) and {"--db", "--from", "--to"} & set(param.opts)]
    assert len(options) > 30
    url = "postgresql://ledger@/db?host=/tmp/x"
    assert [name for name, param in options if not isinstance(param.type, StoreLocation)] == []
    assert {param.type.convert(url, param, None) for _, param in options} == {url}
