"""Which queries trec_eval evaluates: the query side of the trec_eval compatibility switch.

trec_eval walks the queries of the qrels file (in ``strcmp`` order) and
evaluates those that also have results:

* a run query with **no qrels entry** is ignored (nothing to measure it against);
* a qrels query with **no results** is ignored by default; with ``-c``
  (``all_queries=True``, ``--trec-eval-all-queries``) it counts, with an empty
  ranking, so every measure of it is 0, and the mean is over every qrels query.

The ignored queries are counted in the notes, so nothing disappears silently.
(trec_eval 10.0-rc3, the source shipped beside this project, stops with
"result qid '...' not found in qrels" on a qrels query without results when
``-c`` is not given; its own help text, trec_eval 9 and pytrec_eval ignore
the query, which is what is done here.)
"""

from __future__ import annotations

from dataclasses import dataclass, field

#: Query IDs named per note before "...".
_SHOWN = 5


@dataclass(frozen=True)
class TrecEvalScope:
    """The queries to evaluate, ordered as trec_eval prints them, and what was left out."""

    query_ids: list[str]
    notes: list[str] = field(default_factory=list)


def scope_of_ids(judged: set[str], ranked: set[str], *, all_queries: bool) -> TrecEvalScope:
    """The queries trec_eval evaluates, from the query IDs of the qrels (``judged``) and of the
    run (``ranked``); see the module docstring."""
    keep = judged if all_queries else judged & ranked
    notes = []
    unjudged = sorted(ranked - judged)
    if unjudged:
        notes.append(
            f"{len(unjudged)} run quer{_y(unjudged)} without qrels ignored, as trec_eval "
            f"ignores them: {_some(unjudged)}"
        )
    unranked = sorted(judged - ranked)
    if unranked and all_queries:
        notes.append(
            f"{len(unranked)} qrels quer{_y(unranked)} without results counted as 0 "
            f"(trec_eval -c): {_some(unranked)}"
        )
    elif unranked:
        notes.append(
            f"{len(unranked)} qrels quer{_y(unranked)} without results ignored, as trec_eval "
            f"ignores them without -c (--trec-eval-all-queries counts them as 0): "
            f"{_some(unranked)}"
        )
    return TrecEvalScope(sorted(keep), notes)


def _y(ids: list[str]) -> str:
    return "y" if len(ids) == 1 else "ies"


def _some(ids: list[str]) -> str:
    shown = ", ".join(ids[:_SHOWN])
    return shown + (f", ... ({len(ids) - _SHOWN} more)" if len(ids) > _SHOWN else "")
