"""The background import of every view's modules after the first page (app/components/warmup.py)."""

import sys
from pathlib import Path

from app.components import warmup
from app.components.navigation import SECTIONS, view_file


def test_view_imports_reads_top_level_imports_only(tmp_path: Path) -> None:
    script = tmp_path / "view.py"
    script.write_text(
        "import json, os.path\n"
        "from evalcore.store import marks\n"
        "from . import sibling\n"
        "def later():\n"
        "    import decimal\n"
    )
    assert warmup.view_imports(script) == ["json", "os.path", "evalcore.store"]


def test_every_view_import_is_warmed() -> None:
    modules = set(warmup._modules())
    for views in SECTIONS.values():
        for view in views:
            missing = set(warmup.view_imports(view_file(view))) - modules
            assert not missing, (view.title, missing)
    assert "evalcore.analysis.compare" in modules  # the Compare page's heavy import


def test_a_module_that_fails_to_import_does_not_stop_the_rest(monkeypatch) -> None:
    monkeypatch.delitem(sys.modules, "colorsys", raising=False)
    warmup.import_all(("relevance_ledger_no_such_module", "colorsys"))
    assert "colorsys" in sys.modules


def test_the_thread_imports_every_view_module_then_freezes(monkeypatch) -> None:
    imported, frozen = [], []
    monkeypatch.setattr(warmup, "import_all", lambda names: imported.extend(names))
    monkeypatch.setattr(warmup.gc, "freeze", lambda: frozen.append(list(imported)))
    warmup._warm()
    assert tuple(imported) == warmup._modules()
    assert frozen == [imported]  # after the imports, once


def test_the_thread_shortens_the_switch_interval_only_while_it_imports(monkeypatch) -> None:
    seen: list[float] = []
    monkeypatch.setattr(warmup, "import_all", lambda names: seen.append(sys.getswitchinterval()))
    monkeypatch.setattr(warmup.gc, "freeze", lambda: seen.append(sys.getswitchinterval()))
    before = sys.getswitchinterval()
    warmup._warm()
    assert seen == [warmup.IMPORT_SWITCH_INTERVAL, before]  # the freeze runs after the restore
    assert sys.getswitchinterval() == before
