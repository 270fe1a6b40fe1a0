"""docs/architecture.md names every module of evalcore/ and app/, and only modules that exist.

The doc's "Modules" section holds one ``### `folder/` `` heading per package folder and
one ``- `module.py` — ...`` line per module. A module added without a line, a line left
behind by a removed module, or a folder without a heading fails here, naming each.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "architecture.md"
HEADING = re.compile(r"^### `([\w/]+/)`\s*$")
ENTRY = re.compile(r"^- `(\w+\.py)` — \S")


def documented_modules(text: str) -> dict[str, list[str]]:
    """Each folder heading of the Modules section with the module names listed under it."""
    section = text.split("\n## Modules\n", 1)[1].split("\n## ", 1)[0]
    folders: dict[str, list[str]] = {}
    current: str | None = None
    for line in section.splitlines():
        if heading := HEADING.match(line):
            current = heading.group(1)
            assert current not in folders, f"docs/architecture.md: {current} has two headings"
            folders[current] = []
        elif entry := ENTRY.match(line):
            assert current is not None, f"docs/architecture.md: {line!r} before any folder"
            folders[current].append(entry.group(1))
    return folders


def code_modules() -> dict[str, list[str]]:
    """Every package folder of evalcore/ and app/ with its modules (``__init__.py`` aside)."""
    folders: dict[str, list[str]] = {}
    for package in ("evalcore", "app"):
        for folder in sorted([ROOT / package, *(ROOT / package).rglob("*/")]):
            if folder.name == "__pycache__" or not folder.is_dir():
                continue
            modules = sorted(p.name for p in folder.glob("*.py") if p.name != "__init__.py")
            if modules or (folder / "__init__.py").exists():
                folders[folder.relative_to(ROOT).as_posix() + "/"] = modules
    return folders


def test_the_doc_parses_into_folders_with_modules() -> None:
    folders = documented_modules(DOC.read_text(encoding="utf-8"))
    assert len(folders) >= 20
    assert "batch.py" in folders["evalcore/compute/"]


def test_every_module_is_named_once_and_every_named_module_exists() -> None:
    documented = documented_modules(DOC.read_text(encoding="utf-8"))
    actual = code_modules()
    problems = []
    for folder in sorted(set(actual) - set(documented)):
        problems.append(f"{folder}: no '### `{folder}`' heading in docs/architecture.md")
    for folder in sorted(set(documented) - set(actual)):
        problems.append(f"{folder}: named in docs/architecture.md but no such package")
    for folder in sorted(set(actual) & set(documented)):
        names = documented[folder]
        for name in sorted({n for n in names if names.count(n) > 1}):
            problems.append(f"{folder}{name}: listed twice in docs/architecture.md")
        for name in sorted(set(actual[folder]) - set(names)):
            problems.append(f"{folder}{name}: not described in docs/architecture.md")
        for name in sorted(set(names) - set(actual[folder])):
            problems.append(f"{folder}{name}: described in docs/architecture.md but missing")
    assert not problems, "\n".join(problems)
