"""A short excerpt of a document around the first words matching a query (plain text)."""

from app.components.safe_text import query_terms, term_spans

SNIPPET_CHARS = 220


def snippet(text: str, query: str, width: int = SNIPPET_CHARS) -> str:
    """About ``width`` characters of ``text`` around its first query-term match.

    Plain text, cut at word boundaries with ``…`` where cut; the caller escapes
    and highlights it (:func:`app.components.safe_text.highlight_terms`).
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
