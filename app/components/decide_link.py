"""The address of the Annotate page working through a "to decide A vs B" queue.

The link contract between the Compare page and the Annotate page: the query
parameters ``queue=decide&run_a=<A>&run_b=<B>&measure=<canonical measure name>``
(URL-encoded, e.g. ``?queue=decide&run_a=bm25-plain&run_b=bm25-title-boost&measure=P%4010``),
beside the session's study and annotator (:func:`app.components.session.address_params`),
so the address opens the same queue in a new tab, after a reload or from a bookmark.
"""

from app.components.session import address_params

QUEUE_PARAM = "queue"
DECIDE_QUEUE = "decide"
RUN_A_PARAM = "run_a"
RUN_B_PARAM = "run_b"
MEASURE_PARAM = "measure"


def decide_queue_params(run_a: str, run_b: str, measure: str) -> dict[str, str]:
    """Query parameters (for ``st.page_link``) of the Annotate page on the queue deciding
    ``run_a`` against ``run_b`` on ``measure`` (its canonical name)."""
    return address_params(**{QUEUE_PARAM: DECIDE_QUEUE, RUN_A_PARAM: run_a, RUN_B_PARAM: run_b,
                             MEASURE_PARAM: measure})
