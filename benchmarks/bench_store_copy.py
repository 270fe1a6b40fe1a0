"""``evalcore migrate-store`` both ways: the demo store, and a store holding a 1M-line run.

Builds the demo study (``evalcore demo``'s store) and, separately, a store with one study
whose run is imported from a TREC file of ``--lines`` lines (``--queries`` queries,
doc ids drawn from a pool of ``--pool`` ids, unknown to the corpus), then copies each
SQLite -> PostgreSQL -> SQLite, every copy in a process of its own (its peak RSS is the
process's own). Prints rows, seconds, rows/s and peak RSS per copy.

    python benchmarks/bench_store_copy.py --server postgresql://ledger@/postgres?host=/tmp/pgt \
        [--lines 1000000] [--queries 1000] [--pool 50000] [--prefix bench_copy]

Each PostgreSQL database (``<prefix>_<hex>``) is created on the server and dropped after.
"""

import argparse
import json
import random
import secrets
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

_COPY = """
import json, resource, sys, time
from evalcore.store.store_copy import copy_store
started = time.perf_counter()
summary = copy_store(sys.argv[1], sys.argv[2])
print(json.dumps({"rows": summary.rows, "seconds": time.perf_counter() - started,
                  "copy_seconds": summary.seconds,
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "largest": max((t.rows, t.table) for t in summary.tables)}))
"""


def _copy(source: str, target: str) -> dict:
    out = subprocess.run([sys.executable, "-c", _COPY, source, target], check=True,
                         capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _demo(path: Path) -> None:
    from evalcore.demo.study import build_demo
    from evalcore.store.connection import open_store

    db = open_store(path)
    build_demo(db)
    db.conn.close()


def _big_run(path: Path, lines: int, queries: int, pool: int, work: Path) -> float:
    """A store with one study and a run of ``lines`` lines imported by ``evalcore import run``;
    returns the import's seconds."""
    rng = random.Random(7)
    depth = lines // queries
    run = work / "big.run"
    with run.open("w") as out:
        for q in range(queries):  # ranks 1..depth, scores decreasing (awkward floats on purpose)
            docs = rng.sample(range(pool), depth)
            out.writelines(f"q{q:05d} Q0 d{d:07d} {r} {1000.0 / (r + 0.1)!r} big\n"
                           for r, d in enumerate(docs, start=1))
    cli = [sys.executable, "-m", "evalcore"]
    subprocess.run([*cli, "init", "--db", str(path), "--study", "s", "--corpus", "c"],
                   check=True, capture_output=True)
    started = time.perf_counter()
    subprocess.run([*cli, "import", "run", "--db", str(path), "--study", "s", str(run),
                    "--k", str(depth), "--allow-unknown-ids", "--quiet"], check=True,
                   capture_output=True)
    return time.perf_counter() - started


def _database(server: str, prefix: str) -> str:
    import psycopg

    name = f"{prefix}_{secrets.token_hex(5)}"
    with psycopg.connect(server, autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name}")
    return urlunsplit(urlsplit(server)._replace(path=f"/{name}"))


def _drop(server: str, url: str) -> None:
    import psycopg

    with psycopg.connect(server, autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {urlsplit(url).path[1:]} WITH (FORCE)")


def _line(label: str, result: dict) -> str:
    rate = result["rows"] / result["copy_seconds"]
    return (f"{label:<28} {result['rows']:>10,} rows  {result['copy_seconds']:7.2f} s "
            f"(process {result['seconds']:.2f} s)  {rate:>9,.0f} rows/s  "
            f"peak RSS {result['peak_rss_mb']:.0f} MB  largest {result['largest'][1]} "
            f"({result['largest'][0]:,})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server", required=True)
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--pool", type=int, default=50_000)
    parser.add_argument("--prefix", default="bench_copy")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-copy-") as tmp:
        work = Path(tmp)
        stores = {"demo": work / "demo.sqlite", f"{args.lines:,}-line run": work / "big.sqlite"}
        _demo(stores["demo"])
        imported = _big_run(stores[f"{args.lines:,}-line run"], args.lines, args.queries,
                            args.pool, work)
        print(f"import run of {args.lines:,} lines: {imported:.1f} s")
        for name, path in stores.items():
            url = _database(args.server, args.prefix)
            try:
                print(_line(f"{name}: SQLite -> PG", _copy(str(path), url)))
                print(_line(f"{name}: PG -> SQLite", _copy(url, str(work / f"{path.stem}-back.sqlite"))))
                print(_line(f"{name}: SQLite -> SQLite", _copy(str(path), str(work / f"{path.stem}-2.sqlite"))))
            finally:
                _drop(args.server, url)


if __name__ == "__main__":
    main()
