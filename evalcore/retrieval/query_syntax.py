"""User query text -> a safe FTS5 MATCH expression.

The user's text is never handed to the FTS5 query parser as syntax. It is split
into terms here: maximal runs of letters, numbers, combining marks and
private-use characters (Unicode categories L*, N*, M*, Co); everything else
(spaces, punctuation, symbols, emoji, control characters including NUL) only
separates terms. Terms are de-duplicated case-insensitively (each distinct term
counts once), each is written as an FTS5 string (``"..."`` with any ``"``
doubled, although a term never holds one) and the strings are joined with
``OR``, so BM25 ranks documents by how well they match any of the terms.
Operators such as ``AND``, ``NEAR(``, ``*``, ``^``, ``:`` or column filters in
the text are either separators or plain words inside quotes.

FTS5 tokenizes each quoted string again with the index's tokenizer
(``porter unicode61``: case folding, diacritics removed, Porter stemming); a
term that holds no token for it (e.g. only combining marks) matches nothing.
A text with no term has no expression: searching it returns no result.
"""

import unicodedata

#: The Unicode categories of term characters: letters, numbers, marks, private use.
_TERM_CATEGORIES = frozenset("LNM")


def query_terms(text: str) -> list[str]:
    """The distinct terms of ``text`` in order of first appearance (case-insensitive)."""
    terms: list[str] = []
    seen: set[str] = set()
    current: list[str] = []
    for ch in text + " ":
        category = unicodedata.category(ch)
        if category[0] in _TERM_CATEGORIES or category == "Co":
            current.append(ch)
            continue
        if current:
            term = "".join(current)
            current = []
            key = term.casefold()
            if key not in seen:
                seen.add(key)
                terms.append(term)
    return terms


def quote_term(term: str) -> str:
    """``term`` as an FTS5 string literal."""
    return '"' + term.replace('"', '""') + '"'


def match_expression(text: str) -> str | None:
    """The FTS5 MATCH expression for ``text``, or None when it holds no term."""
    terms = query_terms(text)
    if not terms:
        return None
    return " OR ".join(quote_term(t) for t in terms)
