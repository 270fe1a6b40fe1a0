"""evalcore's imports run one way: down the layer order, with no cycles.

The layer order is written here and in docs/architecture.md, and nowhere else.
Every ``import`` in ``evalcore/`` counts, at module level or inside a function:
an import placed inside a function to dodge a cycle is still an edge.
"""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "evalcore"

# Low -> high. A module may import from its own layer or a lower one.
# Packages on the same row are peers: neither may import the other.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("contract",),
    ("compute",),
    ("io",),
    ("api",),
    ("access",),
    ("store",),
    ("annotation", "retrieval"),
    ("analysis",),
    ("estimation",),
    ("live",),
    ("report",),
    ("demo",),
    ("cli",),
)

# The package root: ``evalcore/__init__.py`` re-exports the public API (so it
# sits above what it re-exports) and ``__main__`` runs the CLI.
ROOT_MODULES = {"evalcore": "api", "evalcore.__main__": "main"}


def _rank(package: str) -> int:
    for rank, row in enumerate(LAYERS):
        if package in row:
            return rank
    raise AssertionError(f"evalcore.{package} is in no layer: add it to LAYERS and docs/architecture.md")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def _typing_only(tree: ast.Module) -> set[int]:
    """ids of the import nodes under ``if TYPE_CHECKING:`` (they never run)."""
    inside: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and ast.unparse(node.test).endswith("TYPE_CHECKING"):
            for statement in node.body:
                inside.update(id(child) for child in ast.walk(statement))
    return inside


def _imported(module: str, path: Path, known: set[str], *, typing: bool = True) -> set[str]:
    """Every evalcore module ``module`` imports, at any depth of its body.

    ``typing=False`` leaves out imports under ``if TYPE_CHECKING:``.
    """
    is_package = path.name == "__init__.py"
    targets: set[str] = set()
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    skipped = set() if typing else _typing_only(tree)
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")
                if not is_package:
                    base = base[:-1]
                base = base[: len(base) - (node.level - 1)]
                stem = ".".join(base + ([node.module] if node.module else []))
            else:
                stem = node.module or ""
            # ``from pkg import name`` imports the module pkg.name when there is
            # one, else the name from pkg. (Importing any module also runs its
            # parent packages' ``__init__``; that implicit step is no edge.)
            names = [
                f"{stem}.{alias.name}" if f"{stem}.{alias.name}" in known else stem
                for alias in node.names
            ]
        else:
            continue
        for name in names:
            if not name.startswith("evalcore"):
                continue
            # The deepest evalcore module the name denotes.
            while name and name not in known:
                name = name.rpartition(".")[0]
            if name and name != module:
                targets.add(name)
    return targets


def _graph(*, typing: bool = True) -> dict[str, set[str]]:
    modules = _modules()
    known = set(modules)
    return {name: _imported(name, path, known, typing=typing) for name, path in modules.items()}


def _layer(module: str) -> str | None:
    if module in ROOT_MODULES:
        return None
    return module.split(".")[1]


def test_every_package_has_a_layer() -> None:
    packages = {_layer(name) for name in _modules()} - {None}
    for package in packages:
        _rank(package)
    named = {package for row in LAYERS for package in row}
    assert named <= packages, f"LAYERS names packages that do not exist: {sorted(named - packages)}"


def test_imports_only_go_down_the_layers() -> None:
    upward = []
    for module, targets in sorted(_graph().items()):
        source = _layer(module)
        if source is None:
            continue
        for target in sorted(targets):
            destination = _layer(target)
            if destination is None:
                upward.append(f"{module} -> {target} (the package root is above every layer)")
                continue
            if destination == source:
                continue
            if _rank(destination) > _rank(source):
                upward.append(f"{module} -> {target} ({source} is below {destination})")
            elif _rank(destination) == _rank(source):
                upward.append(f"{module} -> {target} ({source} and {destination} are peers)")
    assert not upward, "imports that go up the layer order:\n" + "\n".join(upward)


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle per strongly connected component with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def visit(start: str) -> None:
        # Iterative Tarjan: (node, iterator over its successors).
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            advanced = False
            for successor in successors:
                if successor not in index:
                    index[successor] = low[successor] = len(index)
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sorted(graph[successor]))))
                    advanced = True
                    break
                if successor in on_stack:
                    low[node] = min(low[node], index[successor])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    components.append(component)

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return [_one_cycle(graph, set(component)) for component in components]


def _one_cycle(graph: dict[str, set[str]], component: set[str]) -> list[str]:
    """A shortest cycle through the component's first module, for the message."""
    start = min(component)
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for successor in sorted(graph[node] & component):
                if successor == start:
                    return paths[node] + [start]
                if successor not in paths:
                    paths[successor] = paths[node] + [successor]
                    following.append(successor)
        frontier = following
    raise AssertionError(f"no cycle through {start}")  # pragma: no cover - Tarjan found one


def test_no_import_cycles() -> None:
    # A typing-only import never runs, so it cannot close a cycle (it still counts
    # for the layer order above: naming a higher layer's type is a dependency on it).
    cycles = _cycles(_graph(typing=False))
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(cycle) for cycle in cycles)


# The checker itself, on small graphs and sources, so a broken checker cannot pass silently.


def test_cycle_finder_reports_a_cycle_and_ignores_a_chain() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": set()}) == []
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c", "a"]]


@pytest.mark.parametrize(
    ("module", "filename", "source", "expected"),
    [
        ("evalcore.io.trec", "trec.py", "from ..contract import observation", {"evalcore.contract.observation"}),
        ("evalcore.io.trec", "trec.py", "from . import errors", {"evalcore.io.errors"}),
        ("evalcore.io", "__init__.py", "from .errors import X", {"evalcore.io.errors"}),
        ("evalcore.io.trec", "trec.py", "def f():\n    import evalcore.store.clock\n", {"evalcore.store.clock"}),
        ("evalcore.io.trec", "trec.py", "from evalcore.store.clock import now", {"evalcore.store.clock"}),
        ("evalcore.io.trec", "trec.py", "from evalcore import store", {"evalcore.store"}),
        ("evalcore.io.trec", "trec.py", "import evalcore.store.clock as c", {"evalcore.store.clock"}),
        ("evalcore.io.trec", "trec.py", "from evalcore.store.clock.x import y", {"evalcore.store.clock"}),
        ("evalcore.io.trec", "trec.py", "import json", set()),
    ],
)
def test_import_reader_resolves_relative_and_nested_imports(
    tmp_path: Path, module: str, filename: str, source: str, expected: set[str]
) -> None:
    path = tmp_path / filename
    path.write_text(source, encoding="utf-8")
    known = {
        "evalcore",
        "evalcore.contract",
        "evalcore.contract.observation",
        "evalcore.io",
        "evalcore.io.errors",
        "evalcore.io.trec",
        "evalcore.store",
        "evalcore.store.clock",
    }
    assert _imported(module, path, known) == expected


def test_typing_only_imports_are_told_apart(tmp_path: Path) -> None:
    path = tmp_path / "trec.py"
    path.write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from evalcore.store import clock\n",
        encoding="utf-8",
    )
    known = {"evalcore", "evalcore.store", "evalcore.store.clock", "evalcore.io.trec"}
    assert _imported("evalcore.io.trec", path, known) == {"evalcore.store.clock"}
    assert _imported("evalcore.io.trec", path, known, typing=False) == set()
