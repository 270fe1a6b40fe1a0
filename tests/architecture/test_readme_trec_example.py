"""The README's worked example runs: a small TREC collection from files to a report.

The six commands are read from the README's bash block (so the README cannot
drift from what works) and run through the CLI in a temporary folder holding
a small TREC collection: a folder of <DOC> files (one gzipped, plus a README),
classic unclosed-tag topics, qrels and a run.
"""

import gzip
import json
import re
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from evalcore.cli import main
from evalcore.store.connection import open_store
from evalcore.store.information_needs import information_need
from evalcore.store.reports import list_reports, load_report_body
from evalcore.store.study_handle import open_study

README = Path(__file__).resolve().parents[2] / "README.md"

DOCS = {
    "FT911-1": "Cats chase mice in the <B>barn</B>.",
    "FT911-2": "Dogs bark at night; cats sleep.",
    "FT911-3": "Stock markets fell &amp; rose.",
    "LA010189-1": "A cat show in Los Angeles drew crowds.",
    "LA010189-2": "Interest rates and the stock market.",
}
TOPICS = """<top>
<num> Number: 301
<title> cat shows

<desc> Description:
Find reports of cat shows.

<narr> Narrative:
A relevant document reports a cat show. Pet care alone is not relevant.
</top>

<top>
<num> Number: 302
<title> stock market

<desc> Description:
How did stock markets move?

<narr> Narrative:
Any report of market movement is relevant.
</top>
"""
QRELS = """301 0 LA010189-1 2
301 0 FT911-1 0
301 0 FT911-2 0
302 0 FT911-3 1
302 0 LA010189-2 2
"""
RUN = """301 Q0 LA010189-1 1 9.0 bm25
301 Q0 FT911-1 2 8.0 bm25
301 Q0 FT911-2 3 7.0 bm25
302 Q0 LA010189-2 1 5.0 bm25
302 Q0 FT911-3 2 4.0 bm25
"""


def readme_commands() -> list[str]:
    text = README.read_text(encoding="utf-8")
    section = text.split("## From a TREC collection to a report in six commands", 1)[1]
    block = re.search(r"```bash\n(.*?)```", section, re.DOTALL)
    assert block, "the README section lost its bash block"
    return [line for line in block.group(1).splitlines() if line.strip()]


def make_collection(folder: Path) -> None:
    docs = folder / "docs"
    (docs / "la").mkdir(parents=True)
    ft = "".join(f"<DOC>\n<DOCNO> {d} </DOCNO>\n<TEXT>\n{t}\n</TEXT>\n</DOC>\n"
                 for d, t in DOCS.items() if d.startswith("FT"))
    (docs / "ft911.trec").write_text(ft)
    la = "".join(f"<DOC><DOCNO>{d}</DOCNO><TEXT>{t}</TEXT></DOC>\n"
                 for d, t in DOCS.items() if d.startswith("LA"))
    with gzip.open(docs / "la" / "la010189.gz", "wt") as f:
        f.write(la)
    (docs / "README").write_text("Disks 4 and 5, a small sample.\n")
    (folder / "topics.301-450").write_text(TOPICS)
    (folder / "qrels.robust").write_text(QRELS)
    (folder / "bm25.run").write_text(RUN)


def test_the_readme_example_runs_from_files_to_a_report(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    commands = readme_commands()
    assert len(commands) == 6
    make_collection(tmp_path)
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    for command in commands:
        words = shlex.split(command)
        assert words[0] == "evalcore"
        result = runner.invoke(main, words[1:])
        assert result.exit_code == 0, f"{command}\n{result.output}"
    db = open_store(tmp_path / "robust.db")
    assert db.execute("SELECT count(*) FROM documents").fetchone()[0] == 5
    assert information_need(open_study(db, "robust", None), "301").narrative.startswith("A relevant document")
    text = db.execute("SELECT text FROM documents WHERE doc_id = 'FT911-3'").fetchone()[0]
    assert text == "Stock markets fell & rose."
    html = (tmp_path / "report.html").read_text()
    assert "bm25" in html and "cat shows" in html  # the report names the run and the queries
    robust = open_study(db, "robust", None)
    (stored,) = list_reports(robust)
    report = json.loads(load_report_body(robust, stored.report_id))
    (run,) = report["runs"]
    assert run["name"] == "bm25" and run["n_queries"] == 2
    per_query = {q["query_id"]: q["metrics"] for q in run["evaluation"]["queries"]}
    # 301: one relevant (LA010189-1) at rank 1 of 3 returned, all judged -> P@10 = 1/10
    assert per_query["301"]["precision"] == {"status": "available", "value": 0.1}
    assert per_query["302"]["reciprocal_rank"]["value"] == 1.0
    assert per_query["302"]["recall"]["value"] == 1.0
