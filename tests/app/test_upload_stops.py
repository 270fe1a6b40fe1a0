"""A huge all-invalid upload on the Data page: refused at the error limit, saying so."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from store_fixtures import table_snapshot  # noqa: E402

from evalcore.io.errors import STOP_AFTER  # noqa: E402


def test_an_all_invalid_upload_stops_at_the_limit_and_writes_nothing(small_store, new_app) -> None:
    _, db = small_store
    before = table_snapshot(db)
    at = new_app("ann", "views/data.py")
    at.selectbox(key="rl_import_kind").set_value("qrels").run()
    bad = "".join(f"q{i} 0 d{i}\n" for i in range(5 * STOP_AFTER)).encode()
    at.get("file_uploader")[0].set_value(("huge.qrels", bad, "text/plain"))
    next(b for b in at.button if b.label == "Import").click().run()
    assert not at.exception, at.exception
    assert any(f"at least {STOP_AFTER} errors found" in c.value for c in at.caption)
    report = at.code[0].value
    assert f"huge.qrels:{STOP_AFTER}: reading stopped at line {STOP_AFTER} after 1,000 errors" in (
        report)
    assert "huge.qrels:4000:" not in report
    assert table_snapshot(db) == before
