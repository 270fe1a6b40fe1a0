"""Run comparison: per-query deltas, paired tests and a paper-style results table.

All numbers come from :mod:`evalcore.analysis.compare` on each
run's evaluation (the comparison shared by sessions until the store changes,
:mod:`app.components.shared_results`): on the working labels from the shared live state (equal to
:func:`evalcore.analysis.run_evaluation.evaluate_run`, kept current label by label),
on a frozen version from ``evaluate_run``. A paired test uses only
the queries where both runs have the metric; the page says on how many and
why the rest were left out. A run is compared with the first chosen run only
when :func:`evalcore.analysis.comparability.comparability` allows it (same
corpus, protocol and cutoff: the rule reports apply); the others are named with
the reason and left out.
"""

import pandas as pd
import streamlit as st

from app.components.live_state import with_live_state
from app.components.page import study_page
from app.components.safe_text import escape_markdown
from app.components.session import db_path, get_db
from app.components.shared_results import shared_result
from evalcore.analysis.comparability import NotVerified, RunTerms, Verdict, comparability
from evalcore.analysis.compare import compare_runs
from evalcore.analysis.run_evaluation import evaluate_run
from evalcore.analysis.stats.correction import CORRECTION_LABELS
from evalcore.analysis.stats.significance import TEST_LABELS
from evalcore.contract.results import AGGREGATE_LABELS, METRICS, EvaluationReport
from evalcore.report.charts import delta_figure
from evalcore.store.references import list_references
from evalcore.store.runs import RunInfo, list_runs

WORKING = "(working labels)"


def _evaluations(study_id: str, runs: list[str], reference: str | None) -> dict[
    str, EvaluationReport
]:
    """Each run's evaluation: from the shared live state on the working labels (kept up to
    date label by label), else evaluated against the frozen version (shared by sessions)."""
    if reference is None:
        return with_live_state(study_id, lambda state, *_: {r: state.evaluation(r) for r in runs})
    db = get_db()
    return {
        run: shared_result(db, str(db_path()), study_id, ("evaluate_run", run, reference),
                           lambda run=run: evaluate_run(db, study_id, run, reference))
        for run in runs
    }


def _comparable(
    chosen: list[RunInfo], reports: dict[str, EvaluationReport], accept_unverified: bool
) -> tuple[list[str], dict[str, Verdict], dict[str, Verdict]]:
    """The runs compared with the first (the baseline), the refused ones with their
    verdicts, and every run's verdict."""
    terms = [RunTerms.of(r.name, reports[r.name], r.corpus_fingerprint) for r in chosen]
    verdicts = {t.name: comparability(t, terms[0]) for t in terms}
    refused = {n: v for n, v in verdicts.items() if not v.admitted(accept_unverified)}
    return [t.name for t in terms if t.name not in refused], refused, verdicts


def _results_table(comparison) -> pd.DataFrame:
    table = comparison.table
    rows = []
    for row in table.rows:
        out = {"run": f"({row.letter}) {row.run}"}
        for metric in table.metrics:
            cell = row.cells[metric]
            marks = "".join(cell.marks)
            out[table.column_labels[metric]] = cell.text + (f" ^{marks}" if marks else "")
        rows.append(out)
    return pd.DataFrame(rows)


db, study = study_page("Compare runs")
infos = {r.name: r for r in list_runs(db, study.study_id)}
if len(infos) < 2:
    st.info("A comparison needs at least two runs: create or import another on the Data page.")
    st.stop()

top = st.columns([4, 2, 2])
chosen_names = top[0].multiselect("Runs (the first is the baseline)", list(infos),
                                  default=list(infos)[:2], key="rl_compare_runs")
metric = top[1].selectbox("Metric", METRICS, key="rl_compare_metric",
                          format_func=lambda m: AGGREGATE_LABELS[m].format(k="k"))
versions = [WORKING] + [v.name for v in list_references(db, study.study_id)]
version = top[2].selectbox("Reference", versions, key="rl_compare_reference")
reference = None if version == WORKING else version
options = st.columns([2, 2, 2, 2])
test = options[0].selectbox("Test for the table's marks", list(TEST_LABELS),
                            format_func=TEST_LABELS.get, key="rl_compare_test")
alpha = options[1].selectbox("Significance level", [0.05, 0.01, 0.1], key="rl_compare_alpha")
correction = options[2].selectbox("Correction", list(CORRECTION_LABELS),
                                  format_func=CORRECTION_LABELS.get, key="rl_compare_correction")
mode = options[3].selectbox("Pairs", ["baseline", "pairwise"], key="rl_compare_mode",
                            format_func={"baseline": "each run vs the baseline",
                                         "pairwise": "every pair"}.get)

if len(chosen_names) < 2:
    st.info("Choose at least two runs.")
    st.stop()
if reference is None:
    st.caption("Working labels: these numbers change as labeling goes on. Freeze a reference "
               "version on the Reports page for numbers you can defend.")
with st.spinner("Evaluating the runs…"):
    reports = _evaluations(study.study_id, chosen_names, reference)
accept = st.checkbox("Compare runs whose comparability is not verified", value=False,
                     key="rl_compare_accept_unverified",
                     help="A run without a recorded corpus fingerprint (or a baseline without "
                          "one) cannot be shown to have searched the same corpus.")
same, refused, verdicts = _comparable([infos[n] for n in chosen_names], reports, accept)
for name, verdict in refused.items():
    what = ("'s comparability is not verified" if isinstance(verdict, NotVerified)
            else " is not comparable")
    st.warning(escape_markdown(
        f"Run {name}{what}: {verdict}; it is left out of the comparison."
    ))
accepted = [n for n in same if isinstance(verdicts[n], NotVerified)]
if accepted:
    st.caption(escape_markdown(
        f"Compared although their comparability is not verified (you accepted them): "
        f"{', '.join(accepted)}."
    ))
if len(same) < 2:
    st.info("Fewer than two comparable runs: nothing to compare.")
    st.stop()

# The tests (permutations, bootstraps) are the slow part: computed once per store state
# and choice of runs and test, shared by every session; switching the metric reuses it.
comparison = shared_result(
    db, str(db_path()), study.study_id,
    ("compare_runs", tuple(same), reference, mode, test, alpha, correction),
    lambda: compare_runs({name: reports[name] for name in same}, mode=mode, test=test,
                         alpha=alpha, correction=correction),
)

st.subheader("Results table")
st.dataframe(_results_table(comparison), hide_index=True, width="stretch")
st.caption(escape_markdown(comparison.table.legend))

st.subheader("Per-query differences")
for item, adjusted in zip(comparison.comparisons, comparison.adjusted_p_values, strict=True):
    if item.metric != metric:
        continue
    with st.container(border=True):
        st.markdown(f"**{escape_markdown(item.run_a)} − {escape_markdown(item.run_b)}** on "
                    f"{escape_markdown(item.label)}")
        st.markdown(escape_markdown(f"Paired tests {item.summary}."))
        if item.mean_delta is not None:
            st.caption(escape_markdown(
                f"mean Δ on the {item.n_paired} paired queries: {item.mean_delta:+.4f} "
                "(a difference on the paired subset, not a run's score)"))
        for result in item.tests.values():
            st.caption(escape_markdown(result.describe()))
        if adjusted is not None:
            st.caption(escape_markdown(
                f"{TEST_LABELS[test]} p after {CORRECTION_LABELS[correction]}: {adjusted:.4g}"))
        figure = delta_figure(item)
        figure["layout"].pop("title", None)  # the same sentence is written just above
        figure["layout"]["margin"] = {"t": 40, "b": 30}
        st.plotly_chart(figure, key=f"rl_delta_{item.run_a}_{item.run_b}")
