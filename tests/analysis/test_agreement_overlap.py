"""Agreement and conflicts from the overlapping queries only equal those from the whole study."""

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from store_fixtures import apply_label_steps, new_store

from evalcore.analysis.agreement import (
    agreement_and_conflicts,
    annotator_labels,
    open_conflicts,
    study_agreement,
)
from evalcore.analysis.stats.annotators import summarize_agreement
from evalcore.store.resolution import conflicts, resolve_study
from evalcore.store.study_handle import open_study

actions = st.lists(
    st.tuples(st.sampled_from(["label", "label", "label", "undo", "adjudicate"]),
              st.sampled_from(["q1", "q2", "q3"]), st.sampled_from(["A", "B"]),
              st.sampled_from(["ann", "bob", "Cy@x.org", "cy@X.org "]), st.integers(0, 3)),
    max_size=25,
)


@settings(max_examples=120, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=actions)
def test_overlap_only_reads_give_the_whole_study_answer(tmp_path_factory, steps) -> None:
    db = new_store(tmp_path_factory.mktemp("overlap"))
    apply_label_steps(db, steps)
    whole = summarize_agreement(annotator_labels(resolve_study(open_study(db, "s", None))))
    assert study_agreement(open_study(db, "s", None)) == whole
    expected = sorted(
        ((q, r) for q, units in conflicts(open_study(db, "s", None)).items() for r in units),
        key=lambda qr: (
            -(max(qr[1].annotators.values()) - min(qr[1].annotators.values())),
            qr[0],
            qr[1].unit_id,
        ),
    )
    assert open_conflicts(open_study(db, "s", None)) == expected
    # the agreement page's one read gives both answers
    assert agreement_and_conflicts(open_study(db, "s", None)) == (whole, expected)
