"""No public read of a study's data without a viewer (issue 12, item 2), checked structurally.

Every public function of ``evalcore.store``, ``evalcore.annotation``,
``evalcore.retrieval``, ``evalcore.analysis``, ``evalcore.live`` and
``evalcore.report`` that takes a store (``db``) and a study id must take
``viewer`` (a required keyword: the gate,
:func:`evalcore.store.read_access.require_read`), or ``actor`` (an authorised
action), or be an internal variant named ``*_unchecked`` (a building block,
called after one check), or be in one of the commented lists below. A new
function that reads a study's data fails here until it is gated or its place
in a list is argued.
tests/access/test_library_read_authorization.py calls the gated ones as a stranger.
"""

import ast
import functools
import importlib
import inspect
import pkgutil
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGES = ("store", "annotation", "retrieval", "analysis", "live", "report")

#: Not reads: writes, each authorised inside its own transaction by the actor, annotator
#: or reviewer it takes (or run only inside an authorised write).
NOT_READS = {
    "evalcore.store.cant_judge.record_cant_judge": "the annotator's own write",
    "evalcore.store.drafts.save_draft": "the annotator's own unsaved note",
    "evalcore.store.drafts.clear_draft": "the annotator's own unsaved note",
    "evalcore.store.labels.record_label": "authorised for the annotator (LABEL)",
    "evalcore.store.labels.undo_last_label": "authorised for the annotator (LABEL)",
    "evalcore.store.labels.adjudicate": "authorised for the reviewer (ADJUDICATE)",
    "evalcore.store.samples.record_nonresponse": "authorised for the annotator (LABEL)",
    "evalcore.store.members.create_team_study": "the lead creates the study",
    "evalcore.store.imports.common.register_queries": "inside an authorised import",
    "evalcore.store.imports.common.write_label_events": "inside an authorised import",
    "evalcore.store.unit_codes.assign_unit_codes": "inside an authorised run write "
                                                   "(runs.write_run_results)",
    "evalcore.store.pins.insert_pin": "inside pin_protocol, authorised for the lead",
    "evalcore.store.staged_studies.discard_staged_study": "cleanup of a failed import",
    "evalcore.store.staged_studies.forget_created": "publishing step of an import (a write)",
    "evalcore.annotation.item_token.show_item": "the annotator's screen token (no data)",
}

#: The facts the gate itself reads to decide (a study's mode, members and leads, whether it
#: exists): they cannot be behind the gate.
GATE_FACTS = {
    "evalcore.store.studies.get_study": "read by authorize for the study's organisation",
    "evalcore.store.studies.study_exists": "the gate's unknown-id check",
    "evalcore.store.membership.study_mode": "read by authorize",
    "evalcore.store.membership.member_role": "read by authorize",
    "evalcore.store.membership.study_leads": "read by authorize (who can grant access)",
    "evalcore.store.members.get_member": "one membership row, read by the members page's gate",
}

ALLOWED = set(NOT_READS) | set(GATE_FACTS)


def _modules() -> Iterator[object]:
    for package_name in PACKAGES:
        package = importlib.import_module(f"evalcore.{package_name}")
        yield package
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            yield importlib.import_module(info.name)


@functools.cache
def _study_reads() -> dict[str, inspect.Signature]:
    """Qualified name -> signature of every public function (and public class's method)
    defined in those packages that takes a store and a study id."""
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
                if not inspect.isfunction(function):
                    continue
                signature = inspect.signature(function)
                if "db" in signature.parameters and ({"study_id", "study"}
                                                     & signature.parameters.keys()):
                    found[f"{module.__name__}.{qualified}"] = signature
    return found


def test_every_public_read_of_a_study_takes_the_viewer() -> None:
    missing = [
        name for name, signature in _study_reads().items()
        if not ({"viewer", "actor"} & signature.parameters.keys())
        and not name.endswith("_unchecked") and name not in ALLOWED
    ]
    assert not missing, f"public reads of a study without a viewer: {missing}"


#: The gate itself: ``viewer`` is its first argument (required, positional).
GATES = {
    "evalcore.store.authorize.may_read",
    "evalcore.store.authorize.require_known_study",
    "evalcore.store.read_access.require_read",
    "evalcore.store.scoping.can_view_study",
    "evalcore.store.scoping.require_study_view",
    "evalcore.store.scoping.displayable_text",
}


def test_the_viewer_is_a_required_keyword() -> None:
    """No default: a caller that forgets the viewer fails at once, it does not read unchecked."""
    loose = [
        name for name, signature in _study_reads().items()
        if "viewer" in signature.parameters and name not in GATES
        and (signature.parameters["viewer"].default is not inspect.Parameter.empty
             or signature.parameters["viewer"].kind is not inspect.Parameter.KEYWORD_ONLY)
    ]
    assert not loose, f"viewer must be a required keyword: {loose}"


@pytest.mark.parametrize("listed", sorted(ALLOWED))
def test_every_listed_exception_still_exists(listed: str) -> None:
    """A stale entry would hide a new function of the same name."""
    assert listed in _study_reads(), f"{listed} is listed but is no longer a study read"


def test_the_transition_default_is_gone() -> None:
    import evalcore.store.read_access as read_access

    assert not hasattr(read_access, "NOT_PASSED")


#: Modules above the library that may call a ``*_unchecked`` block, and why each is checked
#: first. A page (app/views) never does: it passes the session's reader to the gated face.
UNCHECKED_CALLERS = {
    "app/components/shared_results.py": "store_marks_unchecked after require_read (cache key)",
    "app/components/export_refusals.py": "suspect checks after require_read of the asking session",
    "app/components/state.py": "pool and marks after require_read of the asking session",
    "evalcore/cli/retrieve.py": "run_exists_unchecked after _seen authorised --actor",
}


def _unchecked_imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
            for alias in node.names if alias.name.endswith("_unchecked")}


def test_pages_and_commands_read_through_the_gate() -> None:
    root = Path(__file__).resolve().parents[2]
    callers = {str(p.relative_to(root)) for folder in ("app", "evalcore/cli")
               for p in (root / folder).rglob("*.py") if _unchecked_imports(p)}
    assert callers <= set(UNCHECKED_CALLERS), sorted(callers - set(UNCHECKED_CALLERS))
    assert set(UNCHECKED_CALLERS) <= callers, "stale entry in UNCHECKED_CALLERS"
