"""R@k: relevant units in 1..k divided by \\|R\\|, the relevant reference units.

Only measurable against a population declared complete
(``population_incomplete``), with every unit in 1..k labeled
(``unlabeled_returned``), no unit of the reference set in conflict across the
threshold (``label_conflict``: \\|R\\| is unknown) and \\|R\\| > 0
(``no_relevant_units``, when no reference label can be relevant). Every reason
that applies is reported. Under ``trec_eval`` a query with \\|R\\| = 0 is 0.

Bounds, when the only reasons are unknown gains (an unlabeled unit in 1..k
ranges over 0..MAX_GAIN as if it were in the reference set with that gain; a
conflict over its annotators' gains). With ``a`` certainly relevant units in
1..k, ``u`` units of unknown relevance in 1..k, ``Rc`` certainly relevant
reference units and ``v`` conflicts of unknown relevance outside 1..k::

    lower = a / (Rc + v)      (every unknown non-relevant; when Rc + v = 0: 1, or 0
                               under trec_eval, where |R| = 0 is valued 0)
    upper = (a + u) / (Rc + u) (unknowns in 1..k relevant, those outside not)

Both are attained by a completion: the bounds are tight.
"""

from __future__ import annotations

from evalcore.compute.measures.base import MeasureArrays, population_reasons, ratio
from evalcore.compute.measures.ranking import Cut
from evalcore.contract.measures import Measure

FAMILY = "R"


def compute(cut: Cut, measure: Measure) -> MeasureArrays:
    a, u = cut.n_sure, cut.n_maybe
    rc, maybe_ref = cut.n_sure_ref, cut.n_maybe_ref
    v = maybe_ref - cut.n_maybe_conflict
    value = ratio(a, rc, 0.0)
    return MeasureArrays(
        value=value,
        reason_bits=population_reasons(cut, maybe_ref > 0, rc + maybe_ref == 0),
        # Rc + v = 0: a completion has |R| > 0 only through relevant units in 1..k (value
        # 1), or is 0 under trec_eval.
        lower=ratio(a, rc + v, 0.0 if cut.protocol.trec_eval else 1.0),
        upper=ratio(a + u, rc + u, 0.0),
        blocking_limit=cut.limit,
        threshold=cut.threshold,
        reference_conflicts=True,
    )
