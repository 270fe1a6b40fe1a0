"""Hostile text on the pages (AppTest): every markdown element renders inert.

A store whose query text, document titles and texts, label notes, annotator
names, run names and file names carry HTML/JS and markdown injection is shown
on every page; each markdown element the app sends is rendered by a CommonMark
renderer and must hold no tag but p/br/strong/em/code (no script, img, a,
iframe, heading or div). The corpus search box gets FTS5 syntax and the app
neither fails nor renders it.
"""

import re
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

TESTS = Path(__file__).resolve().parents[1]
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))

from app_harness import ENTRY  # noqa: E402

from evalcore.store.connection import open_store  # noqa: E402
from evalcore.store.corpus import DocumentIn, add_documents  # noqa: E402
from evalcore.store.labels import record_label  # noqa: E402
from evalcore.store.runs import add_run  # noqa: E402
from evalcore.store.studies import QueryIn, StudyIn  # noqa: E402
from evalcore.store.study_setup import add_queries, create_study  # noqa: E402

HOSTILE = [
    "<script>alert(1)</script>",
    '<img src=x onerror="alert(1)">',
    "[click](javascript:alert(1)) ![p](http://evil.example/p.png)",
    "# Heading <iframe src=//evil.example></iframe>",
    "www.evil.example",
]
FTS5 = ['"unbalanced', "NEAR(a b)", "title:x*", "^a OR -b (((", "\x00", "*"]
_MD = MarkdownIt("gfm-like")
_FORBIDDEN = {"script", "img", "a", "iframe", "div", "h1", "h2", "h3", "h4", "h5", "h6", "svg"}
PAGES = ["views/home.py", "views/annotate.py", "views/data.py", "views/inspector.py",
         "views/dashboard.py", "views/compare.py", "views/agreement.py", "views/reports.py"]


def _tags(markdown: str) -> set[str]:
    markdown = re.sub(r":[a-z]+-(background|badge)\[", "[", markdown)  # Streamlit directives
    rendered = _MD.render(markdown)
    return {t.split()[0].strip("</>").lower() for t in re.findall(r"<[^>]+>", rendered)}


def _check_inert(at) -> int:
    checked = 0
    for element in [*at.markdown, *at.caption, *at.info, *at.warning, *at.error, *at.success]:
        value = getattr(element, "value", "")
        if isinstance(value, str):
            bad = _tags(value) & _FORBIDDEN
            if re.match(r"#{1,6} ", value) and "\n" not in value.strip():
                bad -= {f"h{len(value.split(' ')[0])}"}  # the page's own heading
            assert not bad, (bad, value)
            checked += 1
    return checked


@pytest.fixture
def hostile_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, new_store_target) -> Path:
    path = new_store_target("hostile.sqlite")
    db = open_store(path)
    create_study(db, StudyIn(study_id="s1", name=HOSTILE[0], corpus_id="c1"))
    add_documents(db, "c1", [
        DocumentIn(doc_id=f"d{i}", title=text, text=f"alert evil {text}\n{text}",
                   owner_org="acme", created_at=datetime(2025, 1, 1, tzinfo=UTC))
        for i, text in enumerate(HOSTILE)
    ])
    add_queries(db, "s1", [QueryIn(query_id="q1", text=" ".join(HOSTILE))])
    add_run(db, study_id="s1", name="<b>run</b>", source="imported", k=3,
            results=[("q1", r + 1, f"d{r}", 5.0 - r) for r in range(len(HOSTILE))])
    for i, text in enumerate(HOSTILE[:3]):
        record_label(db, study_id="s1", query_id="q1", unit_id=f"d{i}", gain=i % 3,
                     annotator=text, note=text)
    db.conn.close()
    monkeypatch.setenv("RELEVANCE_LEDGER_DB", str(path))
    return path


@pytest.mark.parametrize("page", PAGES)
def test_hostile_text_renders_inert_on_every_page(hostile_store: Path, page: str) -> None:
    if not (Path(ENTRY).parent / page).is_file():
        pytest.skip(f"{page} does not exist yet")
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(ENTRY, default_timeout=60)
    at.run()
    at.text_input(key="rl_annotator_input").set_value(HOSTILE[1]).run()
    at.switch_page(page).run()
    assert not at.exception, at.exception
    checked = _check_inert(at)
    if page == "views/annotate.py":
        for _ in range(len(HOSTILE)):
            at.button(key="next").click().run()
            checked += _check_inert(at)
        for query in FTS5 + HOSTILE:
            at.text_input(key="rl_search").set_value(query).run()
            assert not at.exception, (query, at.exception)
            checked += _check_inert(at)
    assert checked > 0
