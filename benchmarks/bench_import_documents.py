"""Document import benchmark (issue 15: 100,000 documents import in under 30 s).

    python benchmarks/bench_import_documents.py [--documents 100000] [--words 120]
                                                [--workdir DIR]

Writes a TREC ``<DOC>`` file (gzip) and a JSONL file of ``--documents``
synthetic documents of about ``--words`` words each, then imports each, in a
fresh subprocess, into a fresh store with ``evalcore import documents`` (the
CLI: reading, validation and the upsert): wall
time, CPU time (on a loaded machine the wall time is mostly waiting for a core) and
peak resident memory (VmHWM) of that process. target: < 30 s each. The store
keeps no full-text index: lexical indexes are built by evalcore when a search
or an execution first needs them.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_MEASURE = """
import sys, time
from pathlib import Path
from click.testing import CliRunner
from evalcore.cli import main
db, path = sys.argv[1], sys.argv[2]
runner = CliRunner()
assert runner.invoke(main, ["init", "--db", db]).exit_code == 0
assert runner.invoke(main, ["study", "create", "--db", db, "--study", "s", "--corpus", "c"]
                     ).exit_code == 0
start, cpu = time.perf_counter(), time.process_time()
result = runner.invoke(main, ["import", "documents", "--db", db, "--study", "s", path,
                              "--owner-org", "bench"])
elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
assert result.exit_code == 0, result.output
peak = next(int(l.split()[1]) / 1024 for l in Path("/proc/self/status").read_text().splitlines()
            if l.startswith("VmHWM:"))
print(f"{elapsed:.2f} {cpu:.2f} {peak:.0f}")
"""


def _words(rng: random.Random, vocabulary: list[str], n: int) -> str:
    return " ".join(rng.choice(vocabulary) for _ in range(n))


def write_collection(folder: Path, documents: int, words: int) -> tuple[Path, Path]:
    rng = random.Random(15)
    vocabulary = [f"w{i}" for i in range(20_000)]
    trec = folder / "collection.trec.gz"
    jsonl = folder / "collection.jsonl"
    with gzip.open(trec, "wt", compresslevel=1) as t, jsonl.open("w") as j:
        for i in range(documents):
            text = _words(rng, vocabulary, words)
            title = _words(rng, vocabulary, 6)
            t.write(f"<DOC>\n<DOCNO> D{i} </DOCNO>\n<HEADLINE>{title}</HEADLINE>\n"
                    f"<TEXT>\n{text}\n</TEXT>\n</DOC>\n")
            j.write(json.dumps({"id": f"D{i}", "title": title, "text": text}) + "\n")
    return trec, jsonl


def measure(db: Path, path: Path) -> tuple[float, float, float]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", _MEASURE, str(db), str(path)], env=env,
                         capture_output=True, text=True, check=True).stdout.split()
    return float(out[0]), float(out[1]), float(out[2])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=100_000)
    parser.add_argument("--words", type=int, default=120)
    parser.add_argument("--workdir", type=Path, default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=args.workdir) as tmp:
        folder = Path(tmp)
        start = time.perf_counter()
        trec, jsonl = write_collection(folder, args.documents, args.words)
        print(f"wrote {args.documents:,} documents of ~{args.words} words "
              f"in {time.perf_counter() - start:.1f} s")
        for name, path in (("TREC <DOC> (gzip)", trec), ("JSONL", jsonl)):
            seconds, cpu, peak = measure(folder / f"{path.stem}.db", path)
            verdict = "ok" if seconds < 30 else "OVER TARGET"
            print(f"import documents, {name}: {seconds:.1f} s wall ({cpu:.1f} s CPU), peak RSS "
                  f"{peak:,.0f} MiB (target < 30 s: {verdict})")


if __name__ == "__main__":
    main()
