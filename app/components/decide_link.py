"""The address of the Annotate page working through a "to decide A vs B" queue: the link
contract between the Compare and Annotate pages
(``queue=decide&run_a=A&run_b=B&measure=P%4010``, with ``queries=`` for a query set).
"""

from app.components.query_set_choice import QUERIES_PARAM
from app.components.session import address_params

QUEUE_PARAM = "queue"
DECIDE_QUEUE = "decide"
RUN_A_PARAM = "run_a"
RUN_B_PARAM = "run_b"
MEASURE_PARAM = "measure"


def decide_queue_params(run_a: str, run_b: str, measure: str,
                        queries: str | None = None) -> dict[str, str]:
    """Query parameters (for ``st.page_link``) of the Annotate page on the queue deciding
    ``run_a`` against ``run_b`` on ``measure`` (its canonical name), over the query set
    ``queries`` (its spec; None: every query)."""
    extra = {QUERIES_PARAM: queries} if queries else {}
    return address_params(**{QUEUE_PARAM: DECIDE_QUEUE, RUN_A_PARAM: run_a, RUN_B_PARAM: run_b,
                             MEASURE_PARAM: measure, **extra})
