"""Safe rendering of untrusted text (documents, queries, notes, file contents).

Document and query text is never rendered as HTML and never as raw markdown.
:func:`escape_markdown` backslash-escapes every ASCII punctuation character
(CommonMark: any escaped ASCII punctuation is a literal), which neutralises
emphasis, links, images, headings, lists, tables, HTML tags and entities,
Streamlit's ``:color[...]`` directives and ``$...$`` math, and breaks GFM
autolinks (``http://``, ``www.``). Line structure is kept with hard breaks.

:func:`highlight_terms` escapes everything and then wraps the query terms it
finds in a highlight directive whose content is only letters and digits, so
the highlighting itself cannot inject anything.
"""

import re
import string

#: Every ASCII punctuation character, each escaped with a backslash.
_PUNCTUATION = frozenset(string.punctuation)
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
#: Characters that are not ASCII punctuation but still change rendering.
_INVISIBLE = re.compile("[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f\u200b-\u200f\u2028\u2029\ufeff]")
_MIN_TERM = 2
#: Words too common to be worth highlighting.
_STOPWORDS = frozenset(
    "a an and are as at be by for from has have how i in is it its of on or that the this "
    "to was what when where which who why will with you your".split()
)


_LEADING_SPACE = re.compile(r"^[ \t]+", re.MULTILINE)


#: GFM autolink literals (``http://``, ``www.``, ``user@host``) survive backslash escapes in
#: Streamlit's renderer; an invisible WORD JOINER inside each trigger stops them.
_WORD_JOINER = "\u2060"
_AUTOLINK_TRIGGERS = (
    (re.compile(r"://"), ":" + _WORD_JOINER + "//"),
    (re.compile(r"(?i)(www)\."), r"\1" + _WORD_JOINER + "."),
    (re.compile(r"(?<=[\w.+-])@(?=[\w-]+\.\w)"), "@" + _WORD_JOINER),
)


def _normalise(text: str) -> str:
    """Drop invisible control characters, unify line ends, strip line indentation,
    and break autolink triggers.

    Leading spaces would turn a line into an indented code block.
    """
    text = _INVISIBLE.sub("", text)
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    for pattern, replacement in _AUTOLINK_TRIGGERS:
        text = pattern.sub(replacement, text)
    return _LEADING_SPACE.sub("", text)


def _escape_chars(text: str) -> str:
    """Backslash-escape ASCII punctuation; newlines become markdown hard breaks."""
    out = "".join("\\" + ch if ch in _PUNCTUATION else ch for ch in text)
    return out.replace("\n", "  \n")


def escape_markdown(text: str) -> str:
    """``text`` as markdown that renders exactly as the literal text."""
    return _escape_chars(_normalise(text))


def query_terms(query: str) -> list[str]:
    """The distinct words of a query (lower case, letters/digits only, >= 2 characters,
    common English stop words left out)."""
    seen: dict[str, None] = {}
    for word in _WORD.findall(query.lower()):
        if len(word) >= _MIN_TERM and word not in _STOPWORDS:
            seen.setdefault(word, None)
    return list(seen)


def term_spans(text: str, terms: list[str]) -> list[tuple[int, int]]:
    """``(start, end)`` of each word of ``text`` that starts with a query term.

    Prefix matching lets "password" highlight "passwords"; matching is
    case-insensitive and on whole-word starts only.
    """
    if not terms:
        return []
    spans: list[tuple[int, int]] = []
    for match in _WORD.finditer(text):
        word = match.group(0).lower()
        if any(word.startswith(term) for term in terms):
            spans.append((match.start(), match.end()))
    return spans


def highlight_terms(text: str, query: str, *, style: str = "orange-background") -> str:
    """Escaped markdown of ``text`` with the words matching ``query`` highlighted.

    The highlighted words are letters and digits only (see :data:`_WORD`), so
    wrapping them in ``:style[...]`` and ``**`` cannot change how anything
    else renders.
    """
    text = _normalise(text)
    spans = term_spans(text, query_terms(query))
    pieces: list[str] = []
    cursor = 0
    for start, end in spans:
        pieces.append(_escape_chars(text[cursor:start]))
        pieces.append(f":{style}[**{text[start:end]}**]")
        cursor = end
    pieces.append(_escape_chars(text[cursor:]))
    return "".join(pieces)


def truncate(text: str, limit: int) -> str:
    """At most ``limit`` characters, cut at a word boundary, with an ellipsis."""
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0] or text[:limit]
    return cut + " …"


def markdown_lines(*lines: str) -> str:
    """Lines of markdown (each already escaped or built from escaped text) in one element,
    one per line (hard breaks): fewer elements for the browser to draw than one each."""
    return "  \n".join(lines)


SNIPPET_CHARS = 220


def snippet(text: str, query: str, width: int = SNIPPET_CHARS) -> str:
    """About ``width`` characters of ``text`` around its first query-term match.

    Plain text, cut at word boundaries with ``…`` where cut; the caller escapes
    and highlights it (:func:`highlight_terms`).
    """
    flat = " ".join(text.split())
    if len(flat) <= width:
        return flat
    spans = term_spans(flat, query_terms(query))
    start = max(0, spans[0][0] - width // 4) if spans else 0
    end = min(len(flat), start + width)
    start = max(0, end - width)
    if start > 0:
        cut = flat.find(" ", start)
        start = cut + 1 if 0 <= cut < end else start
    if end < len(flat):
        cut = flat.rfind(" ", start, end)
        end = cut if cut > start else end
    return ("… " if start > 0 else "") + flat[start:end] + (" …" if end < len(flat) else "")
