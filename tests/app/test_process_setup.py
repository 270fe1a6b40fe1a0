"""The app server's background imports (app/process_setup.py): the module lists come from the
scripts themselves, and a background import ends by freezing what the process holds."""

import gc
import sys
from pathlib import Path

from app import process_setup
from app.components.navigation import SECTIONS, view_file


def test_view_imports_reads_top_level_imports_unless_nested(tmp_path: Path) -> None:
    script = tmp_path / "view.py"
    script.write_text(
        "import json, os.path\n"
        "from evalcore.store import marks\n"
        "from . import sibling\n"
        "def later():\n"
        "    import decimal\n"
    )
    assert process_setup.view_imports(script) == ["json", "os.path", "evalcore.store"]
    assert "decimal" in process_setup.view_imports(script, nested=True)


def test_every_page_import_is_warmed() -> None:
    modules = set(process_setup.every_page_modules())
    for views in SECTIONS.values():
        for view in views:
            missing = set(process_setup.view_imports(view_file(view))) - modules
            assert not missing, (view.title, missing)
    assert "evalcore.analysis.compare" in modules  # the Compare page's heavy import


def test_the_first_request_modules_are_read_from_the_entry_and_home_files() -> None:
    modules = process_setup.first_request_modules()
    assert {"app.components.auth", "app.components.session", "app.process_setup"} <= set(modules)
    assert "pandas" in modules  # the home page's tables
    assert "evalcore.demo.study" in modules  # opening the store checks for the demo


def test_a_background_import_skips_a_broken_module_then_freezes(monkeypatch) -> None:
    frozen = []
    monkeypatch.setattr(process_setup.gc, "freeze", lambda: frozen.append(True))
    monkeypatch.delitem(sys.modules, "colorsys", raising=False)
    process_setup.import_then_freeze(["relevance_ledger_no_such_module", "colorsys"])
    assert "colorsys" in sys.modules and frozen == [True]
    assert gc.isenabled()
