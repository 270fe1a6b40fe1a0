"""Decompression bombs, built cheaply, and a child process that measures what importing one
costs (not a test module; ``benchmarks/bench_bombs.py`` uses it too).

A gzip file may hold several members one after the other (every reader of gzip
reads them all): a member of 1 MiB of one byte compresses to about 1 KiB, so
repeating it makes a file that unpacks to gigabytes from a few megabytes
without ever compressing gigabytes.
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
import textwrap
from pathlib import Path

MiB = 1024 * 1024

#: The three bombs of issue 28 (item 4): name -> (builder, description).
BOMB_NAMES = ("one-gib-document", "hundred-mib-document", "no-doc")


def _repeated(byte: bytes, mib: int) -> bytes:
    """``mib`` MiB of ``byte``, as gzip members of 1 MiB each."""
    return gzip.compress(byte * MiB, compresslevel=9) * mib


def trec_bomb(name: str) -> bytes:
    """The gzip bytes of bomb ``name``:

    * ``one-gib-document``: about 1 MB holding one <DOC> of 1 GiB;
    * ``hundred-mib-document``: about 100 KB holding one <DOC> of 100 MiB;
    * ``no-doc``: about 3 MB unpacking to 3 GiB of text without any <DOC>.
    """
    head = gzip.compress(b"<DOC>\n<DOCNO>bomb</DOCNO>\n<TEXT>\n")
    tail = gzip.compress(b"\n</TEXT>\n</DOC>\n")
    if name == "one-gib-document":
        return head + _repeated(b"a", 1024) + tail
    if name == "hundred-mib-document":
        return head + _repeated(b"a", 100) + tail
    if name == "no-doc":
        return _repeated(b"x", 3 * 1024)
    raise ValueError(name)


#: The child: the command line in process, then its peak resident memory (VmHWM: this
#: process's own; ru_maxrss would keep the parent's peak across exec).
_CHILD = textwrap.dedent("""
    import json, re, sys, time
    from click.testing import CliRunner
    from evalcore.cli import main
    started = time.monotonic()
    result = CliRunner().invoke(main, sys.argv[1:])
    status = open("/proc/self/status").read()
    print(json.dumps({
        "exit_code": result.exit_code,
        "output": result.output[-2000:],
        "seconds": round(time.monotonic() - started, 2),
        "peak_rss_mib": round(int(re.search(r"VmHWM:\\s+(\\d+)", status).group(1)) / 1024, 1),
    }))
""")


def run_measured(args: list[str], cwd: Path) -> dict:
    """Run ``evalcore ARGS`` in a fresh Python process; its exit code, output, wall time and
    peak resident memory (MiB)."""
    done = subprocess.run([sys.executable, "-c", _CHILD, *args], cwd=cwd, capture_output=True,
                          text=True, timeout=600, check=False)
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-2000:])
    return json.loads(done.stdout.strip().splitlines()[-1])
