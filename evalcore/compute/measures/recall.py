"""R@k: relevant units in 1..k divided by \\|R\\|, the relevant reference units.

Only measurable against a population declared complete
(``population_incomplete``), with every unit in 1..k labeled
(``unlabeled_returned``), no unit of the reference set in conflict across the
threshold (``label_conflict``: \\|R\\| is unknown) and \\|R\\| > 0
(``no_relevant_units``, when no reference label can be relevant). Every reason
that applies is reported. Under ``trec_eval`` a query with \\|R\\| = 0 is 0.

Bounds range over every completion (contract sections 10 and 12): an
unlabeled unit in 1..k over 0..MAX_GAIN as if it were in the reference set with
that gain, a conflict over its annotators' gains, and, on a population not
declared complete, any number 0..``U_out`` of the unlabeled units outside 1..k
relevant. A completion with \\|R\\| = 0 is left out (the measure is undefined
there); when every completion has \\|R\\| = 0 there are no bounds (NaN). With
``a`` certainly relevant units in 1..k, ``u`` units of unknown relevance in
1..k, ``Rc`` certainly relevant reference units, ``v`` conflicts of unknown
relevance outside 1..k and ``w = U_out``::

    lower = a / (Rc + v + w)   (unknowns in 1..k non-relevant, every other one relevant;
                                when Rc + v + w = 0: 1, or 0 under trec_eval; 0 when w
                                is unbounded)
    upper = (a + u) / (Rc + u) (unknowns in 1..k relevant, those outside not; 0 when
                                Rc + u = 0: relevant units only outside 1..k)

Both are attained by a completion (the lower one approached when ``w`` is
unbounded): the bounds are tight.
"""

from __future__ import annotations

from evalcore.compute.measures.base import MeasureArrays, population_measure, ratio
from evalcore.compute.measures.ranking import Cut
from evalcore.contract.measures import Measure


def compute(cut: Cut, measure: Measure) -> MeasureArrays:
    a, u = cut.n_sure, cut.n_maybe
    rc, maybe_ref = cut.n_sure_ref, cut.n_maybe_ref
    v = maybe_ref - cut.n_maybe_conflict
    w = cut.u_out
    trec = cut.protocol.trec_eval
    value = ratio(a, rc, 0.0)
    # Rc + v + w = 0: a completion has |R| > 0 only through relevant units in 1..k (value
    # 1), or is 0 under trec_eval.
    lower = ratio(a, rc + v + w, 0.0 if trec else 1.0)
    upper = ratio(a + u, rc + u, 0.0)
    defined = trec | (rc + maybe_ref + u + w > 0)
    no_relevant = rc + maybe_ref == 0
    return population_measure(cut, value, maybe_ref > 0, no_relevant, (lower, upper, defined))
