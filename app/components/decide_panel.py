"""The annotate page's verdict panel for the "to decide A vs B" queue, and its address.

The address contract (the Compare page links here):
``?queue=decide&run_a=<A>&run_b=<B>&measure=<canonical measure name>``, each
value URL-encoded (``measure=P%4010``). ``queue=blocking`` (or no ``queue``) is
the blocking order, query by query; ``queue=sample&sample=<name>`` a stored sample's
units in their order.
"""

import streamlit as st

from app.components.page import say
from app.components.query_set_choice import QUERIES_PARAM
from app.components.safe_text import escape_markdown
from app.components.session import address_params
from evalcore.analysis.decision import Decision
from evalcore.live.decide_state import DecideState

QUEUE_PARAM = "queue"
RUN_A_PARAM = "run_a"
RUN_B_PARAM = "run_b"
MEASURE_PARAM = "measure"
DECIDE_PARAMS = (QUEUE_PARAM, RUN_A_PARAM, RUN_B_PARAM, MEASURE_PARAM)
BLOCKING = "blocking"
DECIDE = "decide"
#: A stored sample's units in their order (``?queue=sample&sample=<name>``).
SAMPLE = "sample"
SAMPLE_PARAM = "sample"
#: queue parameter value -> what the selector says.
QUEUES = {
    BLOCKING: "Blocking order (query by query)",
    DECIDE: "To decide A vs B",
    SAMPLE: "A sample (for an estimate)",
}


def decide_queue_params(run_a: str, run_b: str, measure: str,
                        queries: str | None = None) -> dict[str, str]:
    """Query parameters (for ``st.page_link``) of the Annotate page on the queue deciding
    ``run_a`` against ``run_b`` on ``measure`` (its canonical name), over the query set
    ``queries`` (its spec; None: every query): the link from the Compare page."""
    extra = {QUERIES_PARAM: queries} if queries else {}
    return address_params(**dict(zip(DECIDE_PARAMS, (DECIDE, run_a, run_b, measure),
                                     strict=True)), **extra)


def _bounds(decision: Decision) -> str:
    """``[lo, hi]`` of the decision's interval (empty when it has none)."""
    if decision.lower is None or decision.upper is None:
        return ""
    return f"[{decision.lower:+.4f}, {decision.upper:+.4f}]"


def settled_text(decision: Decision) -> str:
    """What a settled verdict means, in plain words."""
    if decision.verdict == "tied":
        return (f"{decision.measure} is decided: tied. Every query's difference is known to "
                "be 0, whatever the missing labels are.")
    better = decision.run_a if decision.verdict == "a_better" else decision.run_b
    return (f"{decision.measure} is decided: {better} is better, whatever the missing labels "
            f"are (mean {decision.run_a} − {decision.run_b} in {_bounds(decision)}).")


def show_verdict_panel(state: DecideState) -> None:
    """The target measure's verdict, its interval and the labels still needed; then the
    other offered measures in one line each. Keyed ``rl_verdict`` (tests read it)."""
    decision, n = state.decision, state.labels_to_decide
    with st.container(border=True, key="rl_verdict"):
        st.markdown("**" + escape_markdown(f"{decision.measure}: {decision.verdict_text}") + "**")
        if decision.verdict == "undecided":
            if _bounds(decision):
                say("markdown", f"mean {decision.run_a} − {decision.run_b} in {_bounds(decision)}")
            say("markdown", f"about {n} label{'s' if n != 1 else ''} still needed (an estimate)"
                if n is not None else "labeling the units of this queue is not expected to "
                "decide it (units no run returned may keep it open)")
            say("caption",
                f"{decision.n_unknown_units} unknown units can still move it; "
                f"{decision.n_known} of {decision.n_queries} queries' differences are known.")
        elif state.settled:
            say("success", settled_text(decision))
        else:
            say("warning",
                decision.summary + ". Labels from this queue cannot decide it; the blocking "
                "order lists what lifts those reasons.")
        lines = [f"{d.measure}: {d.verdict_text}"
                 + (f" {_bounds(d)}" if _bounds(d) and d.verdict == "undecided" else "")
                 for d in state.decisions if d.measure != decision.measure]
        if lines:
            say("caption", "Other measures: " + " · ".join(lines))


#: Below 640 px Streamlit stacks the columns: the panel goes under the item, so a one-line
#: verdict is shown above the item there (and hidden where the panel is beside the item).
_NARROW_ONLY = """<style>
@media (min-width: 641px) { .st-key-rl_verdict_line { display: none; } }
</style>"""


def show_verdict_line(state: DecideState) -> None:
    """The verdict in one line, for narrow screens (keyed ``rl_verdict_line``)."""
    decision = state.decision
    parts = [f"{decision.measure}: {decision.verdict_text}"]
    if decision.verdict == "undecided" and decision.lower is not None:
        parts.append(_bounds(decision))
        if state.labels_to_decide is not None:
            parts.append(f"about {state.labels_to_decide} labels still needed")
    st.html(_NARROW_ONLY)
    with st.container(key="rl_verdict_line"):
        say("caption", " · ".join(parts) + " (the panel below says more)")
