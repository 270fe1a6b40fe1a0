"""Untrusted text renders as inert literal text, highlighted or not.

The escaped markdown is rendered with a GFM-like CommonMark renderer (with
autolinks) and the HTML it produces is checked: one paragraph, no tags other
than line breaks (and <strong> for highlights), and the visible text equal to
the input.
"""

import html
import re

from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from app.components.safe_text import (
    escape_markdown,
    highlight_terms,
    query_terms,
    term_spans,
    truncate,
)

_MD = MarkdownIt("gfm-like")
_TAG = re.compile(r"<[^>]+>")
HOSTILE = "<script>alert(1)</script> and a [markdown link](http://example.com) **bold**"


def _render(markdown: str) -> str:
    # Streamlit's directives (:color[...]) are not CommonMark: drop the wrapper for the check.
    markdown = re.sub(r":orange-background\[(\*\*[^\]]*\*\*)\]", r"\1", markdown)
    return _MD.render(markdown)


def _tags(rendered: str) -> set[str]:
    return {t.split()[0].strip("</>") for t in _TAG.findall(rendered)}


def _visible(rendered: str) -> str:
    """The text a reader sees (the invisible word joiners that break autolinks removed)."""
    return html.unescape(_TAG.sub("", rendered)).replace("\u2060", "").strip()


def test_hostile_document_renders_as_its_literal_text() -> None:
    rendered = _render(escape_markdown(HOSTILE))
    assert _tags(rendered) == {"p"}
    assert _visible(rendered) == HOSTILE
    assert "<script" not in rendered and "<a " not in rendered and "<strong" not in rendered


def test_autolink_triggers_are_broken_invisibly() -> None:
    for sample in ("see http://example.com/a", "www.example.com", "mail user@example.com",
                   "HTTPS://X.IO", "WWW.EXAMPLE.COM"):
        rendered = _render(escape_markdown(sample))
        assert "<a" not in rendered, rendered
        assert _visible(rendered) == sample
    assert "\u2060" in escape_markdown("http://x")


def test_markdown_constructs_are_inert() -> None:
    samples = [
        "# heading", "- item", "1. item", "> quote", "| a | b |\n|---|---|\n| 1 | 2 |",
        "```code```", "    indented code", "![img](http://x/y.png)", "<http://x.com>",
        "www.example.com", "https://example.com/path", "&lt;b&gt; &amp;", "~~strike~~",
        "_under_ *star*", "line one\\\nline two", "<img src=x onerror=alert(1)>",
        "[ref]: http://evil", "$x^2$", ":red[colored] :material/home:",
    ]
    for sample in samples:
        rendered = _render(escape_markdown(sample))
        assert _tags(rendered) <= {"p", "br"}, (sample, rendered)
        expected = re.sub(r"^[ \t]+", "", sample, flags=re.MULTILINE)
        assert _visible(rendered).replace("\n", "") == expected.replace("\n", ""), sample


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=80))
def test_any_single_line_text_renders_literally(text: str) -> None:
    text = "".join(ch for ch in text if ch.isprintable() and ch not in "\u2028\u2029").strip()
    rendered = _render(escape_markdown(text))
    assert _tags(rendered) <= {"p"}
    assert _visible(rendered) == text.strip()


@settings(max_examples=200, deadline=None)
@given(
    st.text(alphabet="ab <>[]()*_#`!:/.&\\x", max_size=60),
    st.text(alphabet="ab x", max_size=10),
)
def test_highlighting_adds_only_strong_tags(text: str, query: str) -> None:
    rendered = _render(highlight_terms(text, query))
    assert _tags(rendered) <= {"p", "strong"}
    assert _visible(rendered) == text.strip()


def test_highlight_wraps_whole_words_starting_with_a_term() -> None:
    out = highlight_terms("Reset your passwords, not a bypassword.", "password reset")
    assert ":orange-background[**Reset**]" in out
    assert ":orange-background[**passwords**]" in out
    assert "bypassword" in out and "**bypassword**" not in out


def test_highlight_keeps_spaces_between_pieces() -> None:
    out = highlight_terms("a password here", "password")
    assert out == "a :orange-background[**password**] here"


def test_query_terms_are_words_only() -> None:
    assert query_terms("<b>Reset</b> the password!! a") == ["reset", "password"]
    assert query_terms("**]) :red[") == ["red"]
    assert term_spans("no terms", []) == []


def test_newlines_become_hard_breaks_and_indentation_is_dropped() -> None:
    assert escape_markdown("one\n    two\r\nthree") == "one  \ntwo  \nthree"


def test_truncate() -> None:
    assert truncate("short", 10) == "short"
    assert truncate("a long sentence here", 9) == "a long …"
