"""Upload limits benchmark: what a hostile BEIR zip costs the app (issue 12, item 5).

    python benchmarks/bench_upload_limits.py [--gib 2] [--text-mib 40]

1. A zip made on the fly whose corpus.jsonl unpacks to ``--gib`` GiB (highly
   compressible JSON lines), uploaded through ``import_upload`` as the Data page
   does, in a fresh process: wall time, peak resident memory (VmHWM) and the
   message.                                  target: refused, peak < 500 MiB
2. For the record, an ordinary (3-4x compressible) BEIR zip of ``--text-mib``
   MiB of text, imported the same way: time and peak memory.
3. With ``--legit-gib N``: a legitimate BEIR corpus unpacking to N GiB (documents
   of 150 words made of sentences from a fixed set, about 28x compressible so the
   zip fits the 200 MiB upload limit), written to a temporary file and imported the
   same way: time, documents written, peak RSS.          target: peak < 500 MiB
   Needs about 7x N GiB of free disk (the unpacked files, the scratch copy, the
   store and its WAL), all deleted at the end.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import random
import sys
import tempfile
import time
import zipfile
from io import BytesIO
from pathlib import Path


def _peak_rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _zip(corpus_lines, extra: dict[str, str]) -> bytes:
    buffer = BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        with archive.open("ds/corpus.jsonl", "w", force_zip64=True) as out:
            for line in corpus_lines:
                out.write(line)
        for name, text in extra.items():
            archive.writestr(name, text)
    return buffer.getvalue()


EXTRA = {"ds/queries.jsonl": '{"_id": "q1", "text": "solar"}\n',
         "ds/qrels/test.tsv": "query-id\tcorpus-id\tscore\nq1\td0\t1\n"}


def bomb_lines(gib: float):
    text = b"a" * (1024 * 1024 - 40)
    for i in range(int(gib * 1024)):
        yield b'{"_id": "d%d", "text": "' % i + text + b'"}\n'


def text_lines(mib: float):
    rng = random.Random(1)
    words = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(3, 9)))
             for _ in range(5000)]
    size, i = 0, 0
    while size < mib * 1024 * 1024:
        line = (json.dumps({"_id": f"d{i}", "title": " ".join(rng.choices(words, k=6)),
                            "text": " ".join(rng.choices(words, k=150))}) + "\n").encode()
        size += len(line)
        i += 1
        yield line


def legit_lines(gib: float):
    """Documents of ~150 words, each a different mix of 64 fixed sentences, up to ``gib``."""
    rng = random.Random(2)
    words = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(3, 9)))
             for _ in range(3000)]
    sentences = [" ".join(rng.choices(words, k=15)) + "." for _ in range(64)]
    size, i = 0, 0
    while size < gib * 1024**3:
        line = (json.dumps({"_id": f"d{i}", "title": sentences[i % 64][:60],
                            "text": " ".join(rng.choices(sentences, k=10))}) + "\n").encode()
        size += len(line)
        i += 1
        yield line


def _zip_file(path: Path, corpus_lines, extra: dict[str, str]) -> int:
    """Write the zip to ``path`` (never held in memory); return the unpacked size."""
    unpacked = 0
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        with archive.open("ds/corpus.jsonl", "w", force_zip64=True) as out:
            for line in corpus_lines:
                out.write(line)
                unpacked += len(line)
        for name, text in extra.items():
            archive.writestr(name, text)
    return unpacked


def child(data: bytes | str, workdir: str, queue: multiprocessing.Queue) -> None:
    from evalcore.io.errors import InputErrors
    from evalcore.store.connection import open_store
    from evalcore.store.imports.uploads import import_upload
    from evalcore.store.studies import StudyIn
    from evalcore.store.study_setup import create_study

    db = open_store(Path(workdir) / "store.db")
    create_study(db, StudyIn(study_id="s", corpus_id="c"))
    base = _peak_rss_mib()
    if isinstance(data, str):  # a zip file's path: read as the app receives an upload
        data = Path(data).read_bytes()
    start = time.perf_counter()
    try:
        summary = import_upload(db, "beir", data, "dataset.zip", study_id="s", actor="bench")
        outcome = f"imported {summary.documents:,} documents"
    except InputErrors as exc:
        outcome = f"refused: {exc}"
    queue.put((time.perf_counter() - start, base, _peak_rss_mib(), outcome))


def measure(label: str, data: bytes | str, unpacked: int) -> float:
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    with tempfile.TemporaryDirectory() as workdir:
        process = ctx.Process(target=child, args=(data, workdir, queue))
        process.start()
        elapsed, base, peak, outcome = queue.get()
        process.join()
    size = Path(data).stat().st_size if isinstance(data, str) else len(data)
    print(f"{label}: upload {size / 1024:,.0f} KiB unpacking to {unpacked / 1024**2:,.0f} MiB")
    print(f"  time {elapsed:.2f} s, peak RSS {peak:,.0f} MiB (target < 500 MiB; process "
          f"baseline {base:,.0f} MiB)")
    print(f"  {outcome.splitlines()[0][:300]}")
    return peak


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gib", type=float, default=2.0)
    parser.add_argument("--text-mib", type=float, default=40.0)
    parser.add_argument("--legit-gib", type=float, default=0.0)
    parser.add_argument("--only-legit", action="store_true", help="skip cases 1 and 2")
    args = parser.parse_args()
    if args.legit_gib > 0:
        with tempfile.TemporaryDirectory() as folder:
            start = time.perf_counter()
            path = Path(folder) / "dataset.zip"
            unpacked = _zip_file(path, legit_lines(args.legit_gib), EXTRA)
            print(f"(made the {args.legit_gib:g} GiB legitimate zip in "
                  f"{time.perf_counter() - start:.1f} s)")
            measure("3. legitimate corpus zip", str(path), unpacked)
        if args.only_legit:
            return 0
    start = time.perf_counter()
    bomb = _zip(bomb_lines(args.gib), EXTRA)
    print(f"(made the {args.gib:g} GiB zip in {time.perf_counter() - start:.1f} s)")
    measure("1. highly compressible zip", bomb, int(args.gib * 1024**3))
    if args.text_mib > 0:
        lines = list(text_lines(args.text_mib))
        measure("2. ordinary text zip", _zip(iter(lines), EXTRA), sum(map(len, lines)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
