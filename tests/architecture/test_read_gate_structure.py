"""A read of a study's data takes a study handle, checked structurally.

Every public function (and public class's method) of ``evalcore.store``,
``evalcore.annotation``, ``evalcore.retrieval``, ``evalcore.analysis``,
``evalcore.live`` and ``evalcore.report`` that takes a store (``db``) and a study id
either says who acts (an actor, annotator or reviewer: a write, or a check, authorised
inside it) or is one of the few facts the gate itself reads. Everything else reads
through a :class:`~evalcore.store.study_handle.Study`, which only
:func:`~evalcore.store.study_handle.open_study` makes, once it has checked the actor may
read. tests/access/test_library_read_authorization.py opens the handle as a stranger.
"""

import ast
import functools
import importlib
import inspect
import pkgutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from evalcore.store.study_handle import Study

PACKAGES = ("store", "annotation", "retrieval", "analysis", "live", "report")
ROOT = Path(__file__).resolve().parents[2]

#: Who acts, named by a write or a check: it authorises them itself.
ACTORS = {"actor", "annotator", "reviewer", "who", "created_by"}

#: The facts the gate reads to decide (a study's settings, mode, members and leads, whether
#: it exists), and the study-wide steps of an authorised import: not behind a handle.
GATE_FACTS = {
    "evalcore.store.studies.get_study": "read by authorize for the study's organisation",
    "evalcore.store.studies.study_exists": "the gate's unknown-id check",
    "evalcore.store.membership.study_mode": "read by authorize",
    "evalcore.store.membership.member_role": "read by authorize",
    "evalcore.store.membership.study_leads": "read by authorize (who can grant access)",
    "evalcore.store.membership.study_access": "read by authorize (mode, role, leads, "
                                              "organisation in one statement)",
    "evalcore.store.members.get_member": "one membership row, read by the members page's gate",
    "evalcore.store.imports.common.register_queries": "inside an authorised import",
    "evalcore.store.unit_codes.assign_unit_codes": "inside an authorised run write",
    "evalcore.store.pins.insert_pin": "inside pin_protocol, authorised for the lead",
    "evalcore.store.staged_studies.discard_staged_study": "cleanup of a failed import",
    "evalcore.store.staged_studies.forget_created": "publishing step of an import (a write)",
    "evalcore.store.authorize.require_known_study": "the gate's unknown-id message",
    "evalcore.store.scoping.require_study_view": "the gate, for commands before a handle",
}


def _modules() -> Iterator[object]:
    for package_name in PACKAGES:
        package = importlib.import_module(f"evalcore.{package_name}")
        yield package
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            yield importlib.import_module(info.name)


@functools.cache
def _functions() -> dict[str, inspect.Signature]:
    """Qualified name -> signature of every public function (and public class's method)
    defined in those packages."""
    found: dict[str, inspect.Signature] = {}
    for module in _modules():
        for name, value in vars(module).items():
            if name.startswith("_") or getattr(value, "__module__", None) != module.__name__:
                continue
            candidates = [(name, value)]
            if inspect.isclass(value):
                candidates = [(f"{name}.{attr}", getattr(member, "__func__", member))
                              for attr, member in vars(value).items() if not attr.startswith("_")]
            for qualified, function in candidates:
                if inspect.isfunction(function):
                    found[f"{module.__name__}.{qualified}"] = inspect.signature(function)
    return found


def _by_id(signature: inspect.Signature) -> bool:
    return "db" in signature.parameters and "study_id" in signature.parameters


def test_every_read_of_a_study_takes_a_handle() -> None:
    unchecked = [
        name
        for name, signature in _functions().items()
        if _by_id(signature)
        and not (ACTORS & signature.parameters.keys())
        and name not in GATE_FACTS
    ]
    assert not unchecked, f"reads of a study by id, not through a Study handle: {unchecked}"


def test_a_handle_is_not_combined_with_a_second_reader() -> None:
    """A handle says who reads: a read that takes one names no viewer beside it."""
    both = [
        name
        for name, signature in _functions().items()
        if any(
            p.annotation is Study or p.annotation == "Study" for p in signature.parameters.values()
        )
        and "viewer" in signature.parameters
    ]
    assert not both, both


@pytest.mark.parametrize("listed", sorted(GATE_FACTS))
def test_every_listed_fact_still_exists(listed: str) -> None:
    """A stale entry would hide a new function of the same name."""
    assert listed in _functions() and _by_id(_functions()[listed]), listed


def test_only_open_study_makes_a_handle() -> None:
    with pytest.raises(TypeError, match="open_study"):
        Study(None, "s", None, None)  # type: ignore[arg-type]
    private = [
        str(path.relative_to(ROOT))
        for folder in ("evalcore", "app")
        for path in (ROOT / folder).rglob("*.py")
        if path.name != "study_handle.py" and "_OPENED" in path.read_text(encoding="utf-8")
    ]
    assert not private, private


def _defined(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        node.name
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    ]


def test_no_unchecked_twin_is_left() -> None:
    twins = [
        f"{path.relative_to(ROOT)}:{name}"
        for folder in ("evalcore", "app")
        for path in (ROOT / folder).rglob("*.py")
        for name in _defined(path)
        if name.endswith("_unchecked")
    ]
    assert not twins, twins
