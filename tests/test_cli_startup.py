"""``evalcore evaluate`` on TREC files imports only what it needs.

The statistics (scipy), the app's and the store's dependencies (pandas,
plotly, streamlit, sqlite_utils) cost most of a second of start-up and
tens of MB; evaluating files needs none of them.
"""

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
HEAVY = ("scipy", "pandas", "pyarrow", "plotly", "streamlit", "sqlite_utils",
         "evalcore.report.model",
         "evalcore.analysis", "evalcore.store",
         # lighter, but other branches' (--db, JSONL input, a failing command, mappings):
         "sqlite3", "evalcore.cli.store_source", "evalcore.cli.failures",
         "evalcore.io.observations_jsonl", "evalcore.io.trec_mappings",
         "evalcore.contract.observation")


def test_evaluate_from_trec_files_imports_no_heavy_module(tmp_path):
    qrels, run = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels.write_text("q1 0 d1 1\nq1 0 d2 0\nq2 0 d9 2\n")
    run.write_text("q1 Q0 d1 1 2.0 t\nq1 Q0 d3 2 1.0 t\nq2 Q0 d9 1 1.0 t\n")
    code = (
        "import sys\n"
        "from evalcore.cli import main\n"
        "from evalcore.io import trec_columnar\n"
        "trec_columnar.MIN_BYTES = 0  # the columnar path, as on large files\n"
        "for fmt in ('json', 'table'):\n"
        f"    main(['evaluate', '--qrels', {str(qrels)!r}, '--run', {str(run)!r}, '--k', '10',\n"
        "          '--complete', '--unjudged-as-nonrelevant', '--format', fmt],\n"
        "         standalone_mode=False)\n"
        f"heavy = [m for m in {HEAVY!r} if m in sys.modules]\n"
        "print('HEAVY', heavy, file=sys.stderr)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=tmp_path, env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})
    assert out.returncode == 0, out.stderr
    assert '"q1"' in out.stdout  # it did evaluate
    assert "HEAVY []" in out.stderr
