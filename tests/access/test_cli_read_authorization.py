"""Every CLI command, run by a non-member of a team study, shows none of its data (issue 12, item 2).

The store holds a team study full of distinctive ids (queries, documents, a run,
a reference version, a pinned protocol, a stored report) and a second team
study. Mallory, a member of neither, runs every command of ``evalcore`` against
the first study and against an unknown study id: nothing she is told may name
a query, document, run, reference, protocol, report, metric value, or any
study she may not see.
"""

from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from lexical_builders import protocol

from evalcore.cli import load_commands, main
from evalcore.report.from_store import report_from_store
from evalcore.report.stored import save_report
from evalcore.retrieval.pin import pin_protocol
from evalcore.store.completeness import mark_complete
from evalcore.store.connection import open_store
from evalcore.store.corpus import DocumentIn, add_documents
from evalcore.store.labels import record_label
from evalcore.store.members import add_member
from evalcore.store.references import freeze_reference
from evalcore.store.runs import add_run
from evalcore.store.studies import QueryIn, StudyIn
from evalcore.store.study_archive import export_study
from evalcore.store.study_handle import open_study
from evalcore.store.study_setup import add_queries, create_study

LEAD = "lena@acme.org"
MALLORY = "mallory@evil.example"
STUDY = "victim-study"
OTHER = "other-team-study"
SECRETS = ("QSECRET", "DSECRET", "RUNSECRET", "REFSECRET", "PROTSECRET", "REPORTSECRET",
           "SAMPLESECRET",
           "query-text-secret", "document-text-secret", OTHER, "0.5", "0.75")


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    from datetime import UTC, datetime

    path = tmp_path_factory.mktemp("sweep") / "team.sqlite"
    db = open_store(path)
    create_study(db, StudyIn(study_id=STUDY, corpus_id="c", org_id="acme"))
    add_documents(db, "c", [DocumentIn(doc_id=f"DSECRET{i}", title="solar", text=(
        "document-text-secret solar"), owner_org="acme",
        created_at=datetime(2025, 1, 1, tzinfo=UTC)) for i in range(1, 5)])
    add_queries(db, STUDY, [QueryIn(query_id="QSECRET1", text="query-text-secret solar")])
    record_label(db, study_id=STUDY, query_id="QSECRET1", unit_id="DSECRET1", gain=2,
                 annotator=LEAD)
    record_label(db, study_id=STUDY, query_id="QSECRET1", unit_id="DSECRET3", gain=1,
                 annotator=LEAD)
    mark_complete(db, study_id=STUDY, query_id="QSECRET1", actor=LEAD)
    add_run(db, study_id=STUDY, name="RUNSECRET", source="imported", k=4,
            results=[("QSECRET1", 1, "DSECRET1", 3.0), ("QSECRET1", 2, "DSECRET2", 2.0),
                     ("QSECRET1", 3, "DSECRET3", 1.0), ("QSECRET1", 4, "DSECRET4", 0.5)])
    pin_protocol(db, study_id=STUDY, name="PROTSECRET",
                 protocol=protocol(corpus_id="c", organisations=["acme"]), actor=LEAD)
    freeze_reference(db, study_id=STUDY, name="REFSECRET", actor=LEAD)
    save_report(db, report_from_store(open_study(db, STUDY, LEAD), runs=["RUNSECRET"], created_by=LEAD, name="REPORTSECRET"))
    add_member(db, study_id=STUDY, user=LEAD, role="lead", actor=LEAD)
    create_study(db, StudyIn(study_id=OTHER, corpus_id="c", org_id="acme"), actor=LEAD)
    add_member(db, study_id=OTHER, user=LEAD, role="lead", actor=LEAD)
    export_study(db, STUDY, path.parent / "archive.zip", actor=LEAD)
    db.conn.close()
    return path


def _files(tmp: Path) -> dict[str, Path]:
    files = {
        "qrels": ("QSECRET1 0 DSECRET2 1\n", "q.qrels"),
        "run": ("QSECRET1 Q0 DSECRET2 1 1.0 t\n", "r.run"),
        "csv": ("query_id,unit_id,gain\nQSECRET1,DSECRET2,1\n", "l.csv"),
        "jsonl": ('{"query_id": "QSECRET1", "unit_id": "DSECRET2", "gain": 1}\n', "l.jsonl"),
        "obs": ('{"query_id": "QSECRET1", "k": 1, "returned_ids": ["DSECRET2"], "labels": [], '
                '"population_complete": false}\n', "o.jsonl"),
        "protocol": (protocol(corpus_id="c", organisations=["acme"]).model_dump_json(), "p.json"),
        "docs": ('{"id": "DSECRET9", "text": "x"}\n', "d.jsonl"),
        "queries": ('{"id": "QSECRET9", "text": "x"}\n', "qs.jsonl"),
        "rank_eval": ('{"requests": [{"id": "QSECRET1", "ratings": '
                      '[{"_id": "DSECRET2", "rating": 1}]}]}', "ratings.json"),
    }
    out = {}
    for key, (text, name) in files.items():
        out[key] = tmp / name
        out[key].write_text(text)
    beir = tmp / "beir"
    (beir / "qrels").mkdir(parents=True, exist_ok=True)
    (beir / "corpus.jsonl").write_text('{"_id": "DSECRET1", "text": "x"}\n')
    (beir / "queries.jsonl").write_text('{"_id": "QSECRET1", "text": "x"}\n')
    (beir / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nQSECRET1\tDSECRET1\t1\n")
    out["beir"] = beir
    return out


def _commands(db: str, study: str, f: dict[str, Path], out: Path) -> dict[str, list[str]]:
    """command path -> the arguments mallory runs it with."""
    s = ["--db", db, "--study", study]
    a = ["--actor", MALLORY]
    return {
        "evaluate": ["evaluate", *s, "--run", "RUNSECRET", *a],
        "compare": ["compare", *s, "--runs", "RUNSECRET,RUNSECRET2", "-m", "P@1", *a],
        "study create": ["study", "create", "--db", db, "--study", "m", "--corpus", "c", *a],
        "study list": ["study", "list", "--db", db, *a],
        "study measures": ["study", "measures", *s, "--set", "P@1", *a],
        "queries list": ["queries", "list", *s, "--removed", *a],
        "queries remove": ["queries", "remove", *s, "--query", "QSECRET1", *a],
        "queries restore": ["queries", "restore", *s, "--query", "QSECRET1", *a],
        "sample draw": ["sample", "draw", *s, "--runs", "RUNSECRET,RUNSECRET2", "-m", "P@1",
                        "--size", "5", "--seed", "1", "--name", "SAMPLESECRET", *a],
        "sample grow": ["sample", "grow", *s, "--name", "SAMPLESECRET", "--size", "9", *a],
        "sample list": ["sample", "list", *s, *a],
        "sample show": ["sample", "show", *s, "--name", "SAMPLESECRET", *a],
        "compare --sample": ["compare", *s, "--runs", "RUNSECRET,RUNSECRET2", "-m", "P@1",
                             "--sample", "SAMPLESECRET", *a],
        "import qrels": ["import", "qrels", *s, str(f["qrels"]), *a],
        "import run": ["import", "run", *s, str(f["run"]), "--k", "1", *a],
        "import beir": ["import", "beir", *s, str(f["beir"]), *a],
        "import observations": ["import", "observations", *s, str(f["obs"]), *a],
        "import labels-csv": ["import", "labels-csv", *s, str(f["csv"]), *a],
        "import labels-jsonl": ["import", "labels-jsonl", *s, str(f["jsonl"]), *a],
        "import labels": ["import", "labels", *s, str(f["rank_eval"]), "--format", "rank-eval",
                          *a],
        "import documents": ["import", "documents", *s, str(f["docs"]), *a],
        "import queries": ["import", "queries", *s, str(f["queries"]), *a],
        "query need set": ["query", "need", "set", *s, "--query", "QSECRET1", "--description",
                           "d", *a],
        "query need show": ["query", "need", "show", *s, "--query", "QSECRET1", *a],
        "export qrels": ["export", "qrels", *s, *a],
        "export labels": ["export", "labels", *s, *a],
        "export run": ["export", "run", *s, "--run", "RUNSECRET", *a],
        "export study": ["export", "study", *s, "--out", str(out / "stolen.zip"), *a],
        # the lead's archive of the victim study, imported by mallory under the swept id
        "import study": ["import", "study", "--db", db, "--in",
                         str(Path(db).parent / "archive.zip"), "--as", study, *a],
        "complete": ["complete", *s, "QSECRET1", *a],
        "reference freeze": ["reference", "freeze", *s, "--name", "v9", *a],
        "reference list": ["reference", "list", *s, *a],
        "reference verify": ["reference", "verify", *s, "--name", "REFSECRET", *a],
        "protocol pin": ["protocol", "pin", *s, "--protocol", str(f["protocol"]), "--name", "p9",
                         *a],
        "protocol show": ["protocol", "show", *s, "--name", "PROTSECRET", *a],
        "protocol list": ["protocol", "list", *s, *a],
        "retrieve": ["retrieve", *s, "--protocol", "PROTSECRET", "--name", "x", *a],
        "document show": ["document", "show", *s, "DSECRET1", *a],
        "members add": ["members", "add", *s, "--user", MALLORY, "--role", "lead", *a],
        "members remove": ["members", "remove", *s, "--user", LEAD, *a],
        "members list": ["members", "list", *s, *a],
        "members add-org": ["members", "add-org", "--db", db, "--user", MALLORY, "--org", "acme",
                            *a],
        "members remove-org": ["members", "remove-org", "--db", db, "--user", LEAD, "--org",
                               "acme", *a],
        "members list-org": ["members", "list-org", "--db", db, "--org", "acme", *a],
        "members studies": ["members", "studies", "--db", db, *a],
        "report": ["report", *s, "--runs", "RUNSECRET", "--out", str(out / "r.html"),
                   "--by", MALLORY],
        "report --stored": ["report", *s, "--stored", "REPORTSECRET", "--out",
                            str(out / "s.html"), "--by", MALLORY],
        # refused before any call: the endpoint (a closed port) is never reached
        "judge": ["judge", *s, "--endpoint", "http://127.0.0.1:9/v1", "--model", "m", "--yes",
                  *a],
    }


#: Commands that name no study and print nothing of one (checked separately or not at all).
#: ``backup``, ``verify`` and ``migrate-store`` work on the whole store: whoever may open it
#: may copy it (file permissions or the database login are the boundary, README "Who is
#: trusted"); they print counts only.
NO_STUDY = {"init", "demo", "backup", "verify", "migrate-store"}


def _leaf_commands(group: click.Group, prefix: str = "") -> set[str]:
    load_commands()
    out: set[str] = set()
    for name, command in group.commands.items():
        path = f"{prefix}{name}"
        if isinstance(command, click.Group):
            out |= _leaf_commands(command, f"{path} ")
        else:
            out.add(path)
    return out


def test_the_sweep_covers_every_command(tmp_path: Path) -> None:
    swept = {name.split(" --")[0] for name in _commands("x", "y", _files(tmp_path), tmp_path)}
    assert _leaf_commands(main) - NO_STUDY - swept == set()


@pytest.mark.parametrize("study", [STUDY, "nope-study"])
def test_a_non_member_learns_nothing_from_any_command(store: Path, tmp_path: Path,
                                                      study: str) -> None:
    files = _files(tmp_path)
    runner = CliRunner()
    for name, args in _commands(str(store), study, files, tmp_path).items():
        result = runner.invoke(main, args)
        text = result.output + (result.stderr if result.stderr_bytes is not None else "")
        assert "Traceback" not in text, (name, text)
        assert result.exception is None or isinstance(result.exception, SystemExit), (
            name, repr(result.exception))
        if name not in ("study list", "members studies", "study create"):
            assert result.exit_code != 0, (name, text)
        for secret in SECRETS:
            assert secret not in text, (name, secret, text)
        if study != STUDY:
            assert STUDY not in text, (name, text)
    for report in [*tmp_path.glob("*.html"), *tmp_path.glob("*.zip")]:
        pytest.fail(f"a report or archive was written for a non-member: {report}")
    db = open_store(store)
    assert [r[0] for r in db.execute("SELECT study_id FROM studies ORDER BY 1")] == sorted(
        [STUDY, OTHER]), "an import by a non-member wrote a study"
    db.conn.close()


def test_a_member_sees_the_data_the_sweep_looks_for(store: Path, tmp_path: Path) -> None:
    """The control: the same commands show the lead the ids the sweep checks for."""
    runner = CliRunner()
    commands = _commands(str(store), STUDY, _files(tmp_path), tmp_path)
    for name, marker in (("evaluate", "QSECRET1"), ("reference list", "REFSECRET"),
                         ("protocol list", "PROTSECRET"), ("export run", "DSECRET1"),
                         ("study list", OTHER)):
        args = [LEAD if a == MALLORY else a for a in commands[name]]
        result = runner.invoke(main, args)
        assert result.exit_code == 0 and marker in result.output, (name, result.output)
