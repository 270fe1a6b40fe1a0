"""A run's protocol in one readable line (for tables and reports)."""

from typing import Any

#: Keys shown first, in this order, when a protocol holds them.
_KNOWN = "method top_k weights cutoff organisations pinned_protocol reference_version".split()
#: Keys not shown as ``key=value``: the known ones, the corpus fingerprint and execution details.
_DETAILS = "corpus_fingerprint execution corpus_id tie_rule tokenizer pinned_document_count"
_HIDDEN = {*_KNOWN, *_DETAILS.split()}


def protocol_summary(protocol: dict[str, Any]) -> str:
    """E.g. ``lexical · top_k 10 · weights title 4, text 1 · cutoff 2026-06-30 · northwind``.

    Known keys come first; other scalar keys follow as ``key=value``; the corpus
    fingerprint and execution details are left out (shown elsewhere).
    """
    parts: list[str] = []
    for key in _KNOWN:
        value = protocol.get(key)
        if value in (None, "", [], {}):
            continue
        if key == "weights" and isinstance(value, dict):
            numbers = [f"{k} {v:g}" for k, v in sorted(value.items()) if isinstance(v, int | float)]
            parts.append("weights " + ", ".join(numbers))
        elif key == "cutoff":
            parts.append(f"cutoff {str(value)[:10]}")
        elif key == "organisations" and isinstance(value, list):
            parts.append("orgs " + ", ".join(map(str, value)))
        elif key == "method":
            parts.append(str(value))
        else:
            parts.append(f"{key.replace('_', ' ')} {value}")
    for key, value in sorted(protocol.items()):
        if key not in _HIDDEN and isinstance(value, str | int | float | bool):
            parts.append(f"{key}={value}")
    return " · ".join(parts)
