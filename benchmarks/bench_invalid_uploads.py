"""How long a reader takes to refuse a huge file in which every line is invalid.

Writes three files of about ``--mb`` MB (default 50) to a temporary folder —
TREC qrels, labels JSONL and observation JSONL, every line invalid — and times
each reader until it raises :class:`~evalcore.io.errors.InputErrors`. Readers
stop after a fixed number of errors, so the time should
not grow with the file size beyond decoding it.

    python benchmarks/bench_invalid_uploads.py [--mb 50]
"""

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from evalcore.io.errors import InputErrors
from evalcore.io.label_rows import parse_labels
from evalcore.io.observations_jsonl import read_observations
from evalcore.io.text_lines import read_source
from evalcore.io.trec import read_qrels

LINES: dict[str, str] = {
    # three fields instead of four: the careful path names every line
    "qrels.txt": "q{i} 0 doc-{i}-with-a-longer-identifier\n",
    # Latin-1 text: not valid UTF-8 on any line (decoded line by line)
    "qrels-latin1.txt": "q{i} 0 caf\u00e9-{i}-with-a-longer-identifier 1\n",
    # a misspelled field (a "did you mean" suggestion) and gain 7 (out of range)
    "labels.jsonl": '{{"qurey_id": "q{i}", "unit_id": "doc-{i}", "gain": 7, "note": "x"}}\n',
    # k must be >= 1, a returned id must be a non-empty string, a misspelled field
    "observations.jsonl": '{{"query_id": "q{i}", "k": 0, "returned_ids": ["", "d{i}"], '
    '"lables": []}}\n',
}

READERS: dict[str, Callable[[Path], object]] = {
    "qrels.txt": read_qrels,
    "qrels-latin1.txt": read_qrels,
    "labels.jsonl": lambda p: parse_labels(read_source(p), "jsonl", default_annotator="bench"),
    "observations.jsonl": read_observations,
}


def write_file(path: Path, template: str, size: int) -> int:
    lines = 0
    encoding = "latin-1" if "latin1" in path.name else "utf-8"
    with path.open("w", encoding=encoding) as out:
        written = 0
        batch: list[str] = []
        while written < size:
            line = template.format(i=lines)
            batch.append(line)
            written += len(line)
            lines += 1
            if len(batch) == 10_000:
                out.write("".join(batch))
                batch = []
        out.write("".join(batch))
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=50.0)
    args = parser.parse_args()
    size = int(args.mb * 1_000_000)
    with tempfile.TemporaryDirectory() as tmp:
        for name, template in LINES.items():
            path = Path(tmp) / name
            lines = write_file(path, template, size)
            start = time.perf_counter()
            try:
                READERS[name](path)
            except InputErrors as exc:
                elapsed = time.perf_counter() - start
                last = str(exc).splitlines()[-1]
                print(f"{name}: {path.stat().st_size / 1e6:.1f} MB, {lines:,} invalid lines, "
                      f"refused in {elapsed:.2f} s ({exc.total:,} errors counted)")
                print(f"  last message line: {last[:160]}")
            else:
                raise SystemExit(f"{name}: the reader accepted an invalid file")


if __name__ == "__main__":
    main()
