"""Lines of Python in ``evalcore/`` and ``app/`` after ``ruff format``, per package, beside the target.

    python benchmarks/count_lines.py [--target 34500]

Copies both folders to a temporary directory, formats the copies with ``ruff format``
at the project's line length (``[tool.ruff] line-length`` in pyproject.toml), and
counts every line of every ``.py`` file (blank lines and docstrings included: what a
reader scrolls through). The working tree is not touched. Prints one line per package
(a folder holding ``.py`` files directly), the total and the target.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import tomllib
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("evalcore", "app")
TARGET = 34_500


def line_length() -> int:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return int(config["tool"]["ruff"]["line-length"])


def formatted_counts(root: Path) -> Counter[str]:
    """Lines per package of ``root``'s :data:`FOLDERS`, after ``ruff format`` of a copy."""
    with tempfile.TemporaryDirectory(prefix="count_lines_") as tmp:
        copy = Path(tmp)
        for folder in FOLDERS:
            shutil.copytree(root / folder, copy / folder,
                            ignore=shutil.ignore_patterns("__pycache__"))
        subprocess.run([sys.executable, "-m", "ruff", "format", "--quiet", "--no-cache",
                        "--isolated", f"--line-length={line_length()}", *FOLDERS],
                       cwd=copy, check=True)
        counts: Counter[str] = Counter()
        for path in sorted(copy.rglob("*.py")):
            package = str(path.parent.relative_to(copy))
            counts[package] += len(path.read_text(encoding="utf-8").splitlines())
        return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", type=int, default=TARGET)
    args = parser.parse_args()
    counts = formatted_counts(ROOT)
    for package, lines in sorted(counts.items()):
        print(f"{package:32s} {lines:7,}")
    for folder in FOLDERS:
        total = sum(n for p, n in counts.items() if p == folder or p.startswith(folder + "/"))
        print(f"{folder + '/ (all)':32s} {total:7,}")
    total = sum(counts.values())
    verdict = "met" if total <= args.target else f"NOT MET ({total - args.target:,} over)"
    print(f"{'total':32s} {total:7,}  target <= {args.target:,}  {verdict}")


if __name__ == "__main__":
    main()
