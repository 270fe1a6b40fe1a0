"""The trec_eval anchor of the benchmarks: build the C tool once per run, measure children.

    from trec_eval_anchor import trec_eval_binary, measure

:func:`trec_eval_binary` unpacks ``../shared/tools/trec_eval-src.tar.gz`` (beside
the repository, or beside its main checkout from a git worktree; ``TREC_EVAL_TARBALL``
overrides the path) into a temporary
directory, runs ``make`` there and returns the binary, or None with the reason
in :data:`unavailable` when it cannot (no tarball, no compiler, a failed build):
a benchmark then says so and runs the rest. The build is done at most once per
process; the directory is removed at exit.

:func:`measure` runs one child process and returns its wall seconds, CPU
seconds and peak resident set size, all of that child alone (``os.wait4``),
optionally killing it at a resident-memory cap.
"""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_BESIDE = "shared/tools/trec_eval-src.tar.gz"


def _default_tarball() -> Path:
    """``../shared/...`` beside the repository, or beside its main checkout when ROOT is a
    git worktree (found like tests/shared_data.py finds ``../shared``)."""
    sys.path.insert(0, str(ROOT / "tests"))
    try:
        from shared_data import SHARED
    except ImportError:  # (no pytest)
        return ROOT.parent / _BESIDE
    finally:
        sys.path.remove(str(ROOT / "tests"))
    return SHARED.parent / _BESIDE


TARBALL = Path(os.environ.get("TREC_EVAL_TARBALL") or _default_tarball())

#: Why the binary could not be built (set when :func:`trec_eval_binary` returns None).
unavailable: str | None = None
_built: Path | None = None
_tried = False


def trec_eval_binary() -> Path | None:
    """The trec_eval binary built from the tarball (once per process), or None."""
    global _built, _tried, unavailable
    if _tried:
        return _built
    _tried = True
    if not TARBALL.is_file():
        unavailable = f"no trec_eval source at {TARBALL}"
        return None
    if shutil.which("make") is None or shutil.which("cc") is None and shutil.which("gcc") is None:
        unavailable = "no make or C compiler on PATH"
        return None
    work = Path(tempfile.mkdtemp(prefix="trec_eval_build_"))
    atexit.register(shutil.rmtree, work, ignore_errors=True)
    try:
        with tarfile.open(TARBALL) as archive:
            archive.extractall(work, filter="data")
        makefiles = sorted(work.rglob("Makefile"), key=lambda p: len(p.parts))
        if not makefiles:
            unavailable = f"{TARBALL} holds no Makefile"
            return None
        source = makefiles[0].parent
        done = subprocess.run(["make"], cwd=source, capture_output=True, text=True, timeout=600)
        binary = source / "trec_eval"
        if done.returncode != 0 or not binary.is_file():
            tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
            unavailable = f"make failed in {source}: {' | '.join(tail)}"
            return None
    except (OSError, tarfile.TarError, subprocess.SubprocessError) as exc:
        unavailable = f"could not build trec_eval: {exc}"
        return None
    _built = binary
    return binary


@dataclass(frozen=True)
class ChildCost:
    """What one child process cost."""

    wall_s: float
    cpu_s: float
    peak_rss_mb: float
    returncode: int
    #: The child was killed for passing the resident-memory cap.
    over_cap: bool = False

    def __str__(self) -> str:
        capped = " (killed at the memory cap)" if self.over_cap else ""
        return (f"{self.wall_s:.2f} s wall (CPU {self.cpu_s:.2f} s), "
                f"peak RSS {self.peak_rss_mb:.0f} MB{capped}")


def _rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except (OSError, ValueError):
        pass
    return 0.0


def measure(
    argv: list[str], *, env: dict[str, str] | None = None, rss_cap_mb: float | None = None
) -> ChildCost:
    """Run ``argv`` (stdout discarded, stderr kept) and return its own cost.

    With ``rss_cap_mb`` the child is killed once its resident memory passes the
    cap (polled every 0.2 s), so a benchmark cannot exhaust a shared machine.
    """
    start = time.perf_counter()
    child = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    assert child.stderr is not None
    over_cap = threading.Event()
    finished = threading.Event()

    def watch() -> None:
        while not finished.wait(0.2):
            if rss_cap_mb is not None and _rss_mb(child.pid) > rss_cap_mb:
                over_cap.set()
                child.kill()
                return

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    err = child.stderr.read()
    _pid, status, usage = os.wait4(child.pid, 0)
    finished.set()
    watcher.join()
    wall = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0 and not over_cap.is_set():
        print(f"    ! {argv[0]} exited {child.returncode}: {err.decode(errors='replace')[-500:]}")
    return ChildCost(
        wall_s=wall,
        cpu_s=usage.ru_utime + usage.ru_stime,
        peak_rss_mb=usage.ru_maxrss / 1024,  # Linux: kilobytes
        returncode=child.returncode,
        over_cap=over_cap.is_set(),
    )
