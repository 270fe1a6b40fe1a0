"""User query text -> search terms, so no text is ever parsed as query syntax.

A term is a maximal run of letters, numbers, combining marks and private-use
characters (Unicode categories L*, N*, M*, Co); everything else (spaces,
punctuation, symbols, emoji, control characters including NUL) only separates
terms, so operators such as ``AND``, ``NEAR(``, ``*``, ``^``, ``:`` or column
filters are separators or plain words. Terms are de-duplicated
case-insensitively (each distinct term counts once) and a document scores by
how well it matches any of them (BM25, as FTS5's ``"t1" OR "t2" ...``). The
index's tokenizer (``porter unicode61``: case folding, diacritics removed,
Porter stemming) tokenizes each term again; a term with no token for it (e.g.
only combining marks) matches nothing. A text with no term returns no result.
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

