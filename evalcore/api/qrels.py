"""``evalcore.Qrels``: qrels read, checked and packed once, to evaluate many runs against.

    >>> qrels = evalcore.Qrels({"q1": {"d1": 2, "d2": 0}})
    >>> for run in runs:
    ...     result = qrels.evaluate(run, measures=["nDCG@10", "P@5"])

As pytrec_eval's ``RelevanceEvaluator`` and ranx's ``Qrels``: the qrels are
read (a path, a nested dict ``{query_id: {doc_id: gain}}``, a pandas DataFrame
or a pyarrow Table with columns ``query_id, doc_id, relevance``), checked with
the same rules and messages as ``evalcore.evaluate`` and held as arrays plus one
``doc -> gain`` dict per query; each evaluation reads only the run. The result
is exactly ``evalcore.evaluate(qrels, run, ...)``'s.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from evalcore.api.inputs import TrecSource, as_judged, checked_gain_map

if TYPE_CHECKING:
    from evalcore.api.evaluate import MeasureNames
    from evalcore.api.result import EvaluationResult
    from evalcore.io.ranked import Judged


class Qrels:
    """Qrels prepared once (see the module docstring); ``gain_map`` as in ``evaluate``.

    Raises :class:`~evalcore.io.errors.InputErrors` naming every wrong query, doc
    or gain, and ``ValueError`` for a ``gain_map`` that does not map gains to 0..4.
    """

    def __init__(self, qrels: TrecSource, *, gain_map: Mapping[int, int] | None = None) -> None:
        self.judged: Judged = as_judged(qrels, checked_gain_map(gain_map), keep=True)

    @property
    def query_ids(self) -> list[str]:
        """The judged queries, in input order."""
        return list(self.judged.query_ids)

    def __len__(self) -> int:
        return len(self.judged.query_ids)

    def evaluate(
        self, run: TrecSource, measures: MeasureNames | None = None, **options: Any
    ) -> EvaluationResult:
        """``evalcore.evaluate(self, run, measures, **options)``: this run against these qrels."""
        from evalcore.api.evaluate import evaluate

        return evaluate(self, run, measures, **options)

    def __repr__(self) -> str:
        return (
            f"Qrels({self.judged.name}: {len(self)} queries, "
            f"{self.judged.label_gain.size} judged docs)"
        )
