"""Every CLI command, given hostile arguments, answers with a message and exit 0, 1 or 2.

The commands are enumerated from the click group (so a new command is swept
too). Each case keeps a command's other arguments valid and replaces one
argument by a hostile value: huge integers, NaN and infinities, unknown ids,
missing files, directories given as files, /dev/full as output, NUL bytes,
10 kB strings, spreadsheet formulas. No case may raise (CliRunner would keep
the exception) or print a traceback.
"""

import json
from collections.abc import Iterator
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from lexical_builders import lexical_store, pinned

from evalcore.cli import load_commands, main
from evalcore.cli.store_location import StoreLocation
from evalcore.store.imports import import_qrels, import_run
from evalcore.store.references import freeze_reference

HUGE = str(2**63)
HUGE_INTS = [HUGE, str(-(2**63) - 1), "1" + "0" * 5000, "0", "-1", "nan", "1e3", "1_000"]
HOSTILE_FLOATS = ["inf", "-inf", "nan", "1e400", "1" + "0" * 5000, "-1", "0"]
HOSTILE_TEXT = ["", " ", "a b", "a\x00b", "x" * 10_000, "zz-unknown", "\u202eevil",
                "=HYPERLINK(\"http://evil\")", "'; DROP TABLE studies; --", "../../etc/passwd"]
HOSTILE_INPUT_FILES = ["{missing}", "{a_dir}", "/dev/null", "{garbage}", "{huge_int_jsonl}",
                       "{inf_jsonl}", "a\x00b", "x" * 10_000]
HOSTILE_OUTPUT_FILES = ["/dev/full", "{a_dir}", "{missing}/out.txt", "x" * 10_000, "a\x00b"]
HOSTILE_DIRS = ["{missing}", "{garbage}", "{a_dir}", "a\x00b"]
#: A store URL (every --db takes one) with no server behind it, or not a URL at all.
HOSTILE_STORE_URLS = ["postgresql://nobody@/nodb?host={missing}", "postgresql://%zz:x@[::1",
                      "postgres://"]

#: Valid values by option name (or by command + name), so that one argument is hostile at a time.
VALID = {
    "db_path": "{db}", "study_id": "s", "corpus_id": "c", "k": "10", "query_ids": "q1",
    "doc_id": "a1", "user": "u@acme.org", "org_id": "acme", "org": "acme",
    "out": "{out}", "output": "{out}", "folder": "{beir}",
}
VALID_BY_COMMAND = {
    ("import qrels", "path"): "{qrels}", ("import run", "path"): "{run}",
    ("import observations", "path"): "{observations}", ("import labels-csv", "path"): "{csv}",
    ("import labels-jsonl", "path"): "{labels_jsonl}",
    ("protocol pin", "protocol_path"): "{protocol}", ("protocol pin", "protocol"): "{protocol}",
    ("retrieve", "protocol"): "p1", ("protocol show", "name"): "p1",
    ("reference verify", "name"): "v1", ("export run", "run"): "r1",
    ("evaluate", "qrels"): "{qrels}", ("evaluate", "run"): "{run}",
    ("demo", "db_path"): "{fresh}",
}
#: Optional options that the valid invocation of a command needs.
NEEDED = {"evaluate": ["qrels", "run", "k"]}


def _commands() -> Iterator[tuple[str, click.Command]]:
    load_commands()

    def walk(cmd: click.Command, path: list[str]) -> Iterator[tuple[str, click.Command]]:
        if isinstance(cmd, click.Group):
            for name, sub in sorted(cmd.commands.items()):
                yield from walk(sub, [*path, name])
        else:
            yield " ".join(path), cmd

    yield from walk(main, [])


def _valid(command: str, param: click.Parameter) -> str:
    if (command, param.name) in VALID_BY_COMMAND:
        return VALID_BY_COMMAND[(command, param.name)]
    if param.name in VALID:
        return VALID[param.name]
    if isinstance(param.type, click.Choice):
        return str(param.type.choices[0])
    if isinstance(param.type, click.types.IntParamType):
        return "3"
    if isinstance(param.type, click.types.FloatParamType):
        return "1.5"
    return "x1"


def _hostile(param: click.Parameter) -> list[str]:
    kind = param.type
    if isinstance(kind, click.Choice):
        return ["bogus", ""]
    if isinstance(kind, click.types.IntParamType):
        return HUGE_INTS
    if isinstance(kind, click.types.FloatParamType):
        return HOSTILE_FLOATS
    if isinstance(kind, StoreLocation):
        return (HOSTILE_INPUT_FILES if kind.exists else HOSTILE_OUTPUT_FILES) + HOSTILE_STORE_URLS
    if isinstance(kind, click.Path):
        if kind.dir_okay and not kind.file_okay:
            return HOSTILE_DIRS
        return HOSTILE_INPUT_FILES if kind.exists else HOSTILE_OUTPUT_FILES
    if isinstance(kind, click.File):
        return HOSTILE_INPUT_FILES
    return HOSTILE_TEXT


def _args(command: str, cmd: click.Command, hostile: tuple[str, str] | None) -> list[str]:
    out = command.split()
    for param in cmd.params:
        if isinstance(param, click.Option) and (param.is_flag or param.is_bool_flag):
            continue
        needed = param.required or param.name in NEEDED.get(command, [])
        if hostile is not None and param.name == hostile[0]:
            value = hostile[1]
        elif needed:
            value = _valid(command, param)
        else:
            continue
        if isinstance(param, click.Option):
            out += [param.opts[0], value]
        else:
            out.append(value)
    return out


def _cases() -> list[tuple[str, list[str]]]:
    cases = []
    for command, cmd in _commands():
        cases.append((command, _args(command, cmd, None)))
        for param in cmd.params:
            if isinstance(param, click.Option) and (param.is_flag or param.is_bool_flag):
                continue
            for value in _hostile(param):
                cases.append((command, _args(command, cmd, (param.name, value))))
    return cases


CASES = _cases()


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("hostile")
    db = lexical_store(root)
    pinned(db)
    qrels = root / "qrels.txt"
    qrels.write_text("q1 0 a1 2\nq1 0 a2 0\nq2 0 a2 1\n")
    run = root / "run.txt"
    run.write_text("q1 Q0 a1 1 2.5 t\nq1 Q0 a3 2 1.5 t\nq2 Q0 a2 1 -1.5 t\n")
    import_qrels(db, qrels, study_id="s", complete=True)
    import_run(db, run, study_id="s", k=10, name="r1")
    freeze_reference(db, study_id="s", name="v1", actor="tester")
    db.conn.close()
    (root / "a_dir").mkdir()
    (root / "garbage").write_bytes(bytes(range(256)) * 40)
    (root / "huge.jsonl").write_text('{"query_id": "q1", "k": ' + "9" * 5000 + "}\n")
    (root / "inf.jsonl").write_text('{"query_id": "q1", "k": 1, "returned_ids": ["a1"], '
                                    '"scores": [1e999], "labels": []}\n')
    (root / "obs.jsonl").write_text(json.dumps({
        "query_id": "q1", "k": 2, "returned_ids": ["a1", "a3"],
        "labels": [{"id": "a1", "gain": 2}], "population_complete": True}) + "\n")
    (root / "labels.csv").write_text("query_id,unit_id,gain\nq1,a1,1\n")
    (root / "labels.jsonl").write_text('{"query_id": "q1", "unit_id": "a1", "gain": 1}\n')
    (root / "protocol.json").write_text(json.dumps(
        {"method": "lexical", "top_k": 5, "cutoff": "2026-06-30T00:00:00Z",
         "organisations": ["acme"]}))
    beir = root / "beir"
    beir.mkdir()
    (beir / "corpus.jsonl").write_text('{"_id": "a1", "title": "t", "text": "x"}\n')
    (beir / "queries.jsonl").write_text('{"_id": "q1", "text": "solar"}\n')
    (beir / "qrels").mkdir()
    (beir / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\ta1\t1\n")
    return {
        "db": str(root / "store.db"), "fresh": str(root / "fresh.db"), "out": str(root / "out.txt"),
        "missing": str(root / "missing"), "a_dir": str(root / "a_dir"),
        "garbage": str(root / "garbage"), "huge_int_jsonl": str(root / "huge.jsonl"),
        "inf_jsonl": str(root / "inf.jsonl"), "qrels": str(qrels), "run": str(run),
        "observations": str(root / "obs.jsonl"), "csv": str(root / "labels.csv"),
        "labels_jsonl": str(root / "labels.jsonl"), "protocol": str(root / "protocol.json"),
        "beir": str(beir),
    }


def test_the_sweep_covers_every_command() -> None:
    commands = {command for command, _ in CASES}
    assert {"import run", "protocol pin", "retrieve", "export labels", "evaluate",
            "report"} <= commands
    assert len(CASES) > 500


@pytest.mark.slow
def test_every_command_with_hostile_arguments_answers_without_a_traceback(
        files, tmp_path, monkeypatch) -> None:
    assert Path("/dev/full").is_char_device()
    # A hostile value is never taken for a store to create where the user stands (a text
    # value given to a --db as if it were a study id would leave a store file named after it).
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    failures = []
    for command, args in CASES:
        argv = [a.format(**files) if a.startswith("{") or "}/" in a or "={" in a else a
                for a in args]
        result = runner.invoke(main, argv)
        shown = (result.stdout or "") + (result.stderr or "")
        escaped = result.exception is not None and not isinstance(result.exception, SystemExit)
        if escaped or "Traceback" in shown or result.exit_code not in (0, 1, 2):
            failures.append(f"{command} {[a[:40] for a in argv]}: exit {result.exit_code}, "
                            f"{type(result.exception).__name__}: {str(result.exception)[:200]}")
    assert not failures, f"{len(failures)} of {len(CASES)} cases failed:\n" + "\n".join(failures)
    assert sorted(p.name for p in tmp_path.iterdir()) == [], "files left in the working directory"
    # /dev/full as an output is written in place, never replaced by a file (we may run as root).
    assert Path("/dev/full").is_char_device()
