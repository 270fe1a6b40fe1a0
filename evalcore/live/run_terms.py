"""The comparability terms of the live state's runs, without per-query objects.

:class:`~evalcore.analysis.comparability.RunTerms` of a run's evaluation need its
protocol and its cutoff (the one ``k`` all its queries share). Every query of a run
in the live state (:mod:`evalcore.live.dashboard`) is packed at the run's own ``k``,
so the cutoff is that ``k`` (None for a run with no query, as ``RunTerms.of`` gives):
the Compare page reads it without making the state's per-query results (a second or
more per run on a large study).
"""

from __future__ import annotations

from evalcore.analysis.comparability import RunTerms
from evalcore.live.dashboard import LiveDashboard
from evalcore.store.runs import RunInfo


def live_run_terms(state: LiveDashboard, run: RunInfo) -> RunTerms:
    """``RunTerms.of(run.name, state.evaluation(run.name), run.corpus_fingerprint)``."""
    return RunTerms(name=run.name, corpus_fingerprint=run.corpus_fingerprint,
                    protocol=state.protocol,
                    k=state.k(run.name) if state.runs[run.name].index else None)
