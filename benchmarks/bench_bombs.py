"""Decompression bombs benchmark: what a hostile compressed file costs (issue 28, item 4).

    python benchmarks/bench_bombs.py [--documents 20000]

Each bomb of the attack (tests/bombs.py: a 1 MB gzip holding one 1 GiB document,
a 100 KB file holding a 100 MiB document, a 3 MB file without <DOC>), then a
document of 40 MiB compressed at an ordinary ratio (so that the per-document
bound, not the ratio rule, refuses it), is imported with ``evalcore import
documents`` in a fresh process: exit status, wall time, peak RSS (VmHWM)
and the first line of the message. For the record, a genuine gzip TREC file of
``--documents`` documents is imported the same way: its peak RSS is the
anchor the bombs are compared with (measured in the same run).
                                                   target: every bomb < 300 MB peak
"""

from __future__ import annotations

import argparse
import base64
import gzip
import os
import random
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from bombs import BOMB_NAMES, MiB, run_measured, trec_bomb  # noqa: E402


def _genuine(path: Path, documents: int) -> None:
    rng = random.Random(7)
    words = [f"w{i}" for i in range(5000)]
    with gzip.open(path, "wt", compresslevel=6) as out:
        for i in range(documents):
            text = " ".join(rng.choices(words, k=120))
            out.write(f"<DOC>\n<DOCNO>d{i}</DOCNO>\n<TEXT>\n{text}\n</TEXT>\n</DOC>\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=20_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-bombs-") as tmp:
        folder = Path(tmp)
        run_measured(["init", "--db", "s.db", "--study", "s", "--corpus", "c"], folder)
        inputs: list[tuple[str, Path]] = []
        for name in BOMB_NAMES:
            path = folder / f"{name}.gz"
            path.write_bytes(trec_bomb(name))
            inputs.append((name, path))
        big = folder / "document-40-mib.trec.gz"
        text = base64.b64encode(os.urandom(30 * MiB))
        big.write_bytes(gzip.compress(b"<DOC><DOCNO>d</DOCNO>\n" + text + b"\n</DOC>\n",
                                      compresslevel=1))
        inputs.append(("40 MiB document (ratio 1.3)", big))
        genuine = folder / "genuine.trec.gz"
        _genuine(genuine, args.documents)
        inputs.append((f"genuine: {args.documents:,} documents", genuine))
        print(f"{'input':<32} {'file':>10} {'exit':>4} {'wall s':>7} {'peak MiB':>9}  message")
        for name, path in inputs:
            result = run_measured(["import", "documents", "--db", "s.db", "--study", "s",
                                   path.name, "--format", "trec"], folder)
            first = result["output"].splitlines()[0][:110] if result["output"] else ""
            print(f"{name:<32} {path.stat().st_size:>10,} {result['exit_code']:>4} "
                  f"{result['seconds']:>7} {result['peak_rss_mib']:>9}  {first}")


if __name__ == "__main__":
    main()
