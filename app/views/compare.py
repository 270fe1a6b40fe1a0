"""Run comparison: the bottom line first, then what would settle it, the paired tests and,
apart, the trec_eval-compatible numbers; then every chosen run's results table and
per-query differences.

**One picker, one sign.** The first run chosen is the baseline; every difference on the
page is candidate − baseline with the baseline named
(:data:`evalcore.analysis.bottom_line.DIFFERENCE`), as ``evalcore compare`` says it. A run
is compared only when :func:`evalcore.analysis.comparability.comparability` allows it; the
others are named with the reason. Results are computed once per store state and choice and
shared by every session (:mod:`app.components.shared_results`); on a study over
``LARGE_STUDY_QUERIES`` queries the verdicts come first, the queues and trec_eval numbers
from the background, the results table on a switch.

**Estimate instead** (contract section 13): a stored sample's estimates in their own
section, never in the verdict table.
"""

from functools import partial
from typing import NamedTuple

import pandas as pd
import streamlit as st

from app.components.address import new_request, restore_choice, restore_choices, write_address
from app.components.decide_panel import decide_queue_params
from app.components.figures import unchecked_figure
from app.components.live_state import with_live_state
from app.components.navigation import ANNOTATE
from app.components.page import (
    GLOSSARY_HELP,
    flash,
    results_rows,
    say,
    show_bottom_line,
    show_flash,
    show_rows,
    study_page,
)
from app.components.query_set_choice import QUERIES_PARAM, choose_query_set
from app.components.safe_text import escape_markdown, markdown_lines
from app.components.session import get_db, reader
from app.components.shared_results import compute_in_background, ready_result, shared_result
from app.components.state import LARGE_STUDY_QUERIES
from evalcore.access.roles import Permission
from evalcore.analysis.bottom_line import (
    DIFFERENCE,
    GLOSSARY,
    MeasureLine,
    bottom_line,
    paired_words,
)
from evalcore.analysis.bottom_line import signed as signed_text
from evalcore.analysis.comparability import NotVerified, RunTerms, Verdict, comparability
from evalcore.analysis.compare import RunComparison, compare_runs
from evalcore.analysis.decision import (
    EvaluatedPair,
    carried,
    carried_note,
    depth_note,
    fits_depth,
    stored_pair,
)
from evalcore.analysis.pair_comparison import (
    MeasureVerdict,
    PairComparison,
    compare_evaluated_pair,
    compare_pair,
)
from evalcore.analysis.query_set import QuerySetError, resolve_stored_query_set, restrict_evaluation
from evalcore.analysis.run_evaluation import evaluate_run
from evalcore.analysis.stats.correction import CORRECTION_LABELS
from evalcore.analysis.stats.significance import TEST_LABELS
from evalcore.contract.measures import FAMILIES, Measure
from evalcore.contract.results import METRIC_LABELS, METRICS, EvaluationReport
from evalcore.estimation.pair_estimate import Estimate, NotEstimable
from evalcore.estimation.stored import draw_stored_sample, estimate_stored
from evalcore.report.charts import delta_figure
from evalcore.report.decision_text import SELECTION_CAUTION
from evalcore.store.automatic_labels import automatic_sources
from evalcore.store.query_reads import query_texts
from evalcore.store.references import list_references
from evalcore.store.runs import RunInfo, list_runs
from evalcore.store.samples import list_samples
from evalcore.store.study_handle import Study, open_study
from evalcore.store.study_measures import study_measures

WORKING = "(working labels)"
PAGE = "compare"
#: Items of each measure's to-decide queue shown on the page.
QUEUE_SHOWN = 10
#: Cutoffs the measure picker offers (any measure of the catalogue at these depths).
CUTOFFS = (5, 10, 20, 100)
#: How often the page looks whether a large study's queues are computed.
PENDING_POLL_SECONDS = 2.0
_PENDING_SHOWN = "_rl_compare_pending_shown"
#: The sample the "Estimate instead" view shows, and what the last draw said.
SAMPLE_CHOICE = "rl_compare_sample"
NO_PREDICTOR = "(none)"
_DRAW_MESSAGE = "_rl_compare_draw_message"
#: The measure picker, and its measures carried to shallower runs' depth (chosen -> shown).
MEASURES_CHOICE = "rl_compare_measures"
_CARRIED = "_rl_compare_carried"
#: The table's significance marks: each run against the baseline, or every pair.
MODES = {"baseline": "each run vs the baseline", "pairwise": "every pair (the earlier run as baseline)"}


def _default_measures(handle: Study, depth: int) -> list[str]:
    """The measures the verdict section starts with: the study's chosen measures (a lead sets
    them on the Data page), a measure without a cutoff taken at ``depth`` (the shallower of
    the two runs' depths), those deeper than ``depth`` left out."""
    chosen = study_measures(handle)
    named = [m if m.k is not None else Measure(m.family, k=depth, rel=m.rel, p=m.p) for m in chosen]
    return list(dict.fromkeys(m.canonical for m in named if fits_depth(m, depth)))


def _measure_options(defaults: list[str], depth: int) -> list[str]:
    """The catalogue's measures at :data:`CUTOFFS` the runs hold, ``depth`` (the shallower
    run's stored depth) and below, and at ``depth`` itself (the defaults first): a deeper
    cutoff would count ranks never retrieved as empty."""
    cutoffs = dict.fromkeys([*(k for k in CUTOFFS if k < depth), depth])
    catalogue = [Measure(family, k).canonical for k in cutoffs for family in FAMILIES]
    return list(dict.fromkeys(defaults + catalogue))


def _carry_measures(depth: int, offered: list[str]) -> dict[str, str | None]:
    """Carry the chosen measures past ``depth`` (the runs changed to shallower ones) to it
    (:func:`~evalcore.analysis.decision.carried`); what the lead chose -> what shows
    instead, kept while it still does so (the caption says it), none after a new address."""
    kept = st.session_state.get(MEASURES_CHOICE)
    if kept is None or new_request(PAGE, "measures"):
        st.session_state.pop(_CARRIED, None)
        return {}
    origins: dict[str, str | None] = st.session_state.get(_CARRIED, {})
    moved = carried(kept, depth, offered)
    if moved:
        st.session_state[MEASURES_CHOICE] = list(dict.fromkeys(
            moved.get(name, name) for name in kept if moved.get(name, name)))
        via = {new: old for old, new in origins.items() if new}  # an earlier carry goes on
        origins = {**origins, **{via.get(old, old): new for old, new in moved.items()}}
    chosen = st.session_state[MEASURES_CHOICE]
    now = carried(list(origins), depth, offered)
    origins = {old: new for old, new in origins.items()
               if old in now and now[old] == new and (new is None or new in chosen)}
    st.session_state[_CARRIED] = origins
    return origins


def _evaluations(handle: Study, runs: list[str], reference: str | None) -> dict[
    str, EvaluationReport
]:
    """Each run's evaluation: from the shared live state on the working labels (kept up to
    date label by label), else evaluated against the frozen version (shared by sessions)."""
    if reference is None:
        return with_live_state(handle, lambda state, *_: {r: state.evaluation(r) for r in runs})
    return {
        run: shared_result(handle, ("evaluate_run", run, reference),
                           lambda run=run: evaluate_run(handle, run, reference))
        for run in runs
    }


def _run_terms(handle: Study, chosen: list[RunInfo], reference: str | None) -> list[RunTerms]:
    """Each chosen run's comparability terms: on the working labels from the shared live
    state without making its per-query results (:meth:`LiveDashboard.run_terms`), on a
    frozen version from each run's evaluation (shared by sessions)."""
    if reference is not None:
        reports = _evaluations(handle, [r.name for r in chosen], reference)
        return [RunTerms.of(r.name, reports[r.name], r.corpus_fingerprint) for r in chosen]
    return with_live_state(handle, lambda state, *_: [state.run_terms(r) for r in chosen])


def _comparable(
    terms: list[RunTerms], accept_unverified: bool
) -> tuple[list[str], dict[str, Verdict], dict[str, Verdict]]:
    """The runs compared with the first (the baseline), the refused ones with their
    verdicts, and every run's verdict."""
    verdicts = {t.name: comparability(t, terms[0]) for t in terms}
    refused = {n: v for n, v in verdicts.items() if not v.admitted(accept_unverified)}
    return [t.name for t in terms if t.name not in refused], refused, verdicts


class _Pair(NamedTuple):
    """What one comparison is computed for; ``queries``: the query set's ids (None: every
    query of the study)."""

    run_a: str
    run_b: str
    measures: tuple[str, ...]
    reference: str | None
    queries: tuple[str, ...] | None

    def whole_key(self) -> tuple:
        """The shared-result key of the whole comparison (queues and compat included)."""
        return ("compare_pair", *self, QUEUE_SHOWN)

    def whole(self, handle: Study) -> PairComparison:
        """The whole comparison (verdicts, queues, paired tests, compatibility numbers)."""
        return compare_pair(handle, *self[:4], queue_limit=QUEUE_SHOWN, query_ids=self.queries)


class _Choice(NamedTuple):
    """What the page compares: the baseline, the candidates, the measures, the reference
    (None: the working labels) and the query set's ids (None: every query of the study)."""

    baseline: str
    candidates: list[str]
    measures: list[str]
    reference: str | None
    queries: tuple[str, ...] | None

    def pair(self, candidate: str) -> _Pair:
        return _Pair(candidate, self.baseline, tuple(self.measures), self.reference, self.queries)


def _pair_comparison(handle: Study, pair: _Pair, *, large: bool) -> PairComparison:
    """The pair's verdicts, queues, paired tests and compatibility numbers, computed once
    per store state and choice and shared by every session. On a ``large`` study, until
    the whole comparison is computed (started in the background), the verdicts and paired
    tests alone (queues None, no compatibility numbers)."""
    key = pair.whole_key()
    if not large:
        return shared_result(handle, key, lambda: pair.whole(handle))
    whole = ready_result(handle, key)
    if whole is not None:
        return whole
    # Both runs read and evaluated once per store state and choice (shared by sessions): the
    # verdicts and, later, the queues and compatibility numbers read it. One per study is
    # kept (it holds both runs' columns), the last chosen.
    evaluated: EvaluatedPair = shared_result(
        handle, ("evaluated_pair", *pair),
        lambda: stored_pair(handle, *pair[:4], query_ids=pair.queries), alone=True)
    verdicts = partial(compare_evaluated_pair, evaluated, pair.reference, verdicts_only=True)
    return shared_result(handle, (*key, "verdicts only"), verdicts)


@st.fragment(run_every=PENDING_POLL_SECONDS)
def _pending_parts(study_id: str, pair: _Pair) -> None:
    """A note while a large study's queues and compatibility numbers are computed in the
    background, the whole page again once they are ready. The background work starts on the
    fragment's next run, once the page's first render is sent, from the pair and verdicts
    already computed."""
    handle = open_study(get_db(), study_id, reader())
    key = pair.whole_key()
    if ready_result(handle, key) is not None:
        st.rerun()
    shown = st.session_state.setdefault(_PENDING_SHOWN, set())
    if key in shown:
        evaluated = ready_result(handle, ("evaluated_pair", *pair), alone=True)
        verdicts = ready_result(handle, (*key, "verdicts only"))

        def whole(own: Study) -> PairComparison:
            if evaluated is None:
                return pair.whole(own)
            done = dict(queue_limit=QUEUE_SHOWN, verdicts=verdicts)
            return compare_evaluated_pair(evaluated, pair.reference, **done)

        compute_in_background(handle, key, whole)
    shown.add(key)
    st.caption("Working out which labels would decide each comparison and the trec_eval-"
               "compatible numbers (a large study: they appear here when ready).")


def _show_queue(item: MeasureVerdict, line: MeasureLine, texts: dict[str, str]) -> None:
    """The head of the to-decide queue, and the link that opens the Annotate page on it,
    in an expander titled by what would settle the measure."""
    d, queue = item.decision, item.queue
    assert queue is not None  # the page shows queues only once computed
    if not queue.items:
        return
    with st.expander(f"{d.measure}: {line.verdict_cell} \N{EM DASH} {line.settle}"):
        blocked = ""
        if line.status == "cannot be decided yet":
            blocked = ("Cannot be decided yet until the causes are lifted; meanwhile these "
                       "narrow the interval on the other queries. ")
        shown = f"{len(queue.items)} of {queue.n_candidates} unknown units"
        say("caption", f"{blocked}{shown}, those whose label can narrow the interval most first.")
        show_rows(
            {"query": it.query_id, "query text": texts.get(it.query_id, ""), "unit": it.unit_id,
             "kind": it.kind,
             f"{d.run_a} rank": _rank(it.rank_a), f"{d.run_b} rank (baseline)": _rank(it.rank_b),
             "narrows the interval by (at least)": round(it.removes, 4)}
            for it in queue.items)
        params = decide_queue_params(d.run_a, d.run_b, d.measure, st.query_params.get(QUERIES_PARAM))
        st.page_link(ANNOTATE.path, label=f"Label these on the Annotate page ({d.measure})",
                     icon=":material/rate_review:", query_params=params)


def _rank(rank: int) -> str:
    return str(rank) if rank else "not returned"


def _show_paired(pc: PairComparison) -> bool:
    """The pair's paired tests in one compact table, then which queries each left out, in
    plain words; whether any left queries out (the caution is said once, by the caller)."""
    columns = ("measure", "paired queries", f"mean {DIFFERENCE}", "p: randomization / t-test")
    st.table(pd.DataFrame(map(_paired_row, pc.measures), columns=columns).set_index("measure"))
    left_out = [f"{m.measure}: {paired_words(m.paired)}" for m in pc.measures if m.paired.n_excluded]
    if left_out:
        st.caption(markdown_lines(*map(escape_markdown, left_out)))
    return any(item.paired.selection_note for item in pc.measures)


def _paired_row(item: MeasureVerdict) -> tuple[str, ...]:
    t = item.paired
    ps = f"{_p(t.tests.get('randomization'))} / {_p(t.tests.get('paired_t'))}"
    return item.measure, f"{t.n_paired} of {t.n_queries}", _number(t.mean_delta, signed=True), ps


def _p(test) -> str:
    if test is None:
        return "not computed"
    return f"{test.p_value:.4g}" if test.computed else "not computable"


def _number(value: float | None, *, signed: bool = False) -> str:
    if value is None:
        return "not computable"
    return signed_text(value, 4) if signed else f"{value:.4f}"


def _show_compat(pc: PairComparison) -> None:
    """The trec_eval-compatible means, in their own table, labeled as such."""
    with st.expander(pc.compat_label.capitalize()):
        say("caption",
            "Not evidence: unjudged results are counted as non-relevant and queries without "
            "any label are left out, as trec_eval does. Use these only to reproduce a "
            "trec_eval number; the verdicts above are what the labels support.")
        show_rows(
            {"measure": row.measure,
             f"{pc.run_a} (compat.)": _number(row.value_a),
             f"{pc.run_b} (baseline, compat.)": _number(row.value_b),
             f"{DIFFERENCE} (compat.)": _number(row.difference, signed=True),
             "queries": f"{row.n_queries_a} / {row.n_queries_b}"}
            for row in pc.compat)
        for note in pc.compat_notes:
            say("caption", note)


def _short_titles(figure: dict) -> None:
    """The delta chart's panel titles for a page: the first (the heading above says it) left
    out, the second broken in two lines so that a phone-wide chart does not clip it."""
    notes = figure["layout"].get("annotations") or []
    if notes:
        notes[0]["text"] = ""
    for note in notes[1:]:
        note["text"] = str(note.get("text", "")).replace("; not 0 — ", "<br>not 0 — ")


def _accept_checkbox() -> None:
    """Whether runs whose comparability is not verified are compared (read at the top)."""
    st.checkbox("Compare runs whose comparability is not verified", value=False,
                key="rl_compare_accept_unverified",
                help="A run without a recorded corpus fingerprint (or a baseline without "
                     "one) cannot be shown to have searched the same corpus.")


def _bottom_line_section(handle: Study, choice: _Choice, texts: dict[str, str], *, large: bool,
                         over: str) -> None:
    """First: per candidate, the bottom line (sentence and compact table); then the labels
    that would settle each open measure, the paired tests (caution once) and, apart, the
    trec_eval-compatible numbers. Every difference is candidate − baseline. ``over``: the
    words naming the query set, said under the bottom lines."""
    baseline = choice.baseline
    st.subheader("Bottom line", help=GLOSSARY_HELP)
    if not choice.measures:
        st.info("Choose at least one measure.")
        return
    pairs: list[PairComparison] = []
    for candidate in choice.candidates:
        try:
            pc = _pair_comparison(handle, choice.pair(candidate), large=large)
        except (LookupError, ValueError) as error:
            say("error", f"No verdict for {candidate}: {error}")
            continue
        show_bottom_line(bottom_line(pc))
        pairs.append(pc)
    say("caption", over)
    for note in pairs[0].notes if pairs else []:  # the corpus size bounding open populations
        say("caption", f"Note: {note}.")
    if choice.reference is None:
        st.caption("Working labels: these verdicts and numbers change as labeling goes on. "
                   "Freeze a reference version on the Reports page for numbers you can defend.")
    if not pairs:
        return
    st.markdown("##### Labels that would settle it", help=(
        "The unknown units whose labels narrow each interval most; the link opens the "
        "Annotate page working through them."))
    for pc in pairs:
        if any(item.queue is None for item in pc.measures):
            _pending_parts(handle.study_id, choice.pair(pc.run_a))
            continue
        lines = bottom_line(pc).measures
        shown = [(item, line) for item, line in zip(pc.measures, lines, strict=True)
                 if line.status != "decided" and item.queue is not None and item.queue.items]
        if not shown:
            say("caption", f"{pc.run_a}: nothing left to label for these measures.")
        for item, line in shown:
            _show_queue(item, line, texts)
    st.markdown("##### Paired significance tests", help=GLOSSARY["paired test"])
    caution = False
    for pc in pairs:
        if len(pairs) > 1:
            say("caption", f"{pc.run_a} vs {baseline} (baseline)")
        caution = _show_paired(pc) or caution
    if caution:
        say("caption", f"Caution: {SELECTION_CAUTION}.")
    for pc in pairs:
        if pc.compat:
            _show_compat(pc)


def _on_draw(study_id: str, candidate: str, baseline: str, measures: list[str]) -> None:
    """Draw the sample the form describes (a lead's action; the store refuses others)."""
    state = st.session_state
    name = str(state.get("rl_sample_new_name", "")).strip()
    size, seed = int(state.get("rl_sample_new_size", 100)), int(state.get("rl_sample_new_seed", 7))
    pair = {"candidate": candidate, "baseline": baseline, "measures": measures}
    try:
        draw_stored_sample(get_db(), study_id=study_id, name=name, **pair, size=size, seed=seed,
                           actor=reader())
    except (LookupError, ValueError, PermissionError) as error:
        flash(_DRAW_MESSAGE, "error", f"No sample drawn: {error}")
        return
    done = f"Sample {name} drawn: label it on the Annotate page (queue: a sample)."
    flash(_DRAW_MESSAGE, "success", done)
    st.session_state[SAMPLE_CHOICE] = name


def _draw_form(study_id: str, candidate: str, baseline: str, measures: list[str]) -> None:
    with st.expander("Draw a sample (lead)"):
        say("caption",
            f"A random sample of the unknown units of {candidate} vs {baseline} (baseline) "
            f"on {', '.join(measures) or 'the chosen measures'}, with a recorded seed.")
        cols = st.columns(3)
        cols[0].text_input("Name", key="rl_sample_new_name", value="s1")
        cols[1].number_input("Size (labels)", min_value=1, max_value=100_000, value=100,
                             key="rl_sample_new_size")
        cols[2].number_input("Seed", min_value=0, value=7, key="rl_sample_new_seed")
        pair = (study_id, candidate, baseline, measures)
        st.button("Draw the sample", key="rl_sample_draw", disabled=not measures, on_click=_on_draw,
                  args=pair)


def _estimate_section(handle: Study, choice: _Choice) -> None:
    """The "Estimate instead" section: a stored sample's estimates, apart from the decided
    verdicts above (contract section 13: never evidence, never decided)."""
    baseline, candidates, measures, reference, queries = choice
    if not st.toggle("Estimate instead", key="rl_compare_estimate",
                     help=GLOSSARY["estimated"]):
        return
    st.subheader("Estimated from a sample", help=GLOSSARY["estimated"])
    st.caption("An estimate is a confidence interval from a random sample of labels: a "
               "different kind of statement from the verdicts above, never evidence and "
               "never decided.")
    show_flash(_DRAW_MESSAGE)
    pairs = {(c, baseline) for c in candidates} | {(baseline, c) for c in candidates}
    samples = [s for s in list_samples(handle) if (s.run_a, s.run_b) in pairs]
    if handle.may(Permission.DRAW_SAMPLE):
        _draw_form(handle.study_id, candidates[0], baseline, measures)
    if not samples:
        st.info("No sample of these runs yet: a lead draws one here or with "
                "evalcore sample draw.")
        return
    names = [s.name for s in samples]
    if st.session_state.get(SAMPLE_CHOICE) not in names:
        st.session_state[SAMPLE_CHOICE] = names[-1]
    name = st.selectbox("Sample", names, key=SAMPLE_CHOICE, format_func=lambda n: f"Sample {n}")
    sample = samples[names.index(name)]
    if reference is not None:
        st.caption("The estimate uses the working labels (a sample's labels are working "
                   "labels), whatever reference the verdicts above use.")
    candidate = sample.run_a if sample.run_b == baseline else sample.run_b
    shown = [m for m in measures if m in sample.measures]
    if not shown:
        say("info", f"Sample {name} was drawn for {', '.join(sample.measures)}: "
                    "choose one of those measures above.")
        return
    sources = [a.source for a in automatic_sources(handle)]
    predictor = None
    if sources:
        choice = st.selectbox(
            "Automatic judgments as predictor", [NO_PREDICTOR, *sources],
            key="rl_compare_predictor",
            help="An automatic source only helps the estimate (a good one narrows the "
                 "interval, a wrong one widens it); it is never evidence.")
        predictor = None if choice == NO_PREDICTOR else choice
    pair = {"candidate": candidate, "baseline": baseline}
    try:
        found = estimate_stored(handle, name, **pair, measures=shown, query_ids=queries,
                                automatic=predictor)
    except (LookupError, ValueError) as error:
        say("error", f"No estimate from sample {name}: {error}")
        return
    say("markdown", f"{candidate} vs {baseline} (baseline), sample {name}")
    rows = [_estimate_cells(e) for e in found.estimates]
    st.table(pd.DataFrame(rows, columns=_ESTIMATE_COLUMNS).set_index("measure"))
    estimated = [e for e in found.estimates if not isinstance(e, NotEstimable)]
    methods = [f"Method: {m}." for m in sorted({e.method for e in estimated})]
    st.caption(markdown_lines(*map(escape_markdown, methods + [e.text() for e in estimated])))


#: The estimate table's columns (narrow: a phone shows the whole row).
_ESTIMATE_COLUMNS = ("measure, estimate, confidence interval, sampled of unknown units, "
                     "labeled · non-response").split(", ")


def _estimate_cells(e: Estimate | NotEstimable) -> tuple[str, ...]:
    """One measure's row of the estimate table."""
    if isinstance(e, NotEstimable):
        return e.measure, "not estimable", e.reason, "", ""
    interval = f"{e.level:.0%}: {signed_text(e.lower, 3)} to {signed_text(e.upper, 3)}"
    sampled = f"{e.n_sampled:,} of {e.n_unknown:,}"
    answered = f"{e.n_labeled:,} · {e.n_nonresponse:,}"
    return e.measure, e.text().split(" (")[0], interval, sampled, answered


study, handle = study_page("Compare runs")
infos = {r.name: r for r in list_runs(handle)}
if len(infos) < 2:
    st.info("A comparison needs at least two runs: create or import another on the Data page.")
    st.stop()

top = st.columns([3, 3, 2])
versions = [WORKING] + [v.name for v in list_references(handle)]
# the runs, the measures and the reference are in the address (a shared link shows the same)
restore_choices(PAGE, "runs", "rl_compare_runs", list(infos), list(infos)[:2], what="runs")
restore_choice(PAGE, "reference", "rl_compare_reference", versions, what="reference")
chosen_names = top[0].multiselect(
    "Runs (the first is the baseline)", list(infos),
    key="rl_compare_runs", persist_state="session",
    help=f"The first run is the baseline; each other run is a candidate. Every difference on "
         f"this page is {DIFFERENCE}: a positive number means the candidate scores higher.")
version = top[2].selectbox("Reference", versions, key="rl_compare_reference",
                           persist_state="session")
reference = None if version == WORKING else version
depths = {n: infos[n].k for n in chosen_names} or {n: r.k for n, r in infos.items()}
depth = min(depths.values())
defaults = _default_measures(handle, depth)
offered = _measure_options(defaults, depth)
moved = _carry_measures(depth, offered)
restore_choices(PAGE, "measures", MEASURES_CHOICE, offered, defaults, what="measures",
                absent="not offered for these runs (see under Measures)")
measures = top[1].multiselect("Measures", offered, key=MEASURES_CHOICE,
                              persist_state="session")
if depth < max(CUTOFFS):  # why the deeper cutoffs are not offered, under the picker
    with top[1]:
        changed = f"{carried_note(moved)}. " if moved else ""
        say("caption", changed + depth_note(depths))
joined = {"runs": ",".join(chosen_names), "measures": ",".join(measures)}
write_address(PAGE, {**joined, "reference": reference})

if len(chosen_names) < 2:
    st.info("Choose at least two runs: the first is the baseline.")
    st.stop()
with st.spinner("Evaluating the runs…"):
    terms = _run_terms(handle, [infos[n] for n in chosen_names], reference)
accept = st.session_state.get("rl_compare_accept_unverified", False)
same, refused, verdicts = _comparable(terms, accept)
for name, verdict in refused.items():
    not_verified = isinstance(verdict, NotVerified)
    what = "'s comparability is not verified" if not_verified else " is not comparable"
    say("warning", f"Run {name}{what}: {verdict}; it is left out of the comparison.")
accepted = [n for n in same if isinstance(verdicts[n], NotVerified)]
if accepted:
    say("caption",
        f"Compared although their comparability is not verified (you accepted them): "
        f"{', '.join(accepted)}.")
if len(same) < 2:
    st.info("Fewer than two comparable runs: nothing to compare.")
    _accept_checkbox()
    st.stop()

texts = query_texts(handle)
large = len(texts) > LARGE_STUDY_QUERIES
spec = choose_query_set("rl_compare_queries")
if spec is None:
    st.stop()
try:
    key = ("query_set", tuple(same), spec.model_dump_json(), reference)
    query_set = shared_result(handle, key, partial(resolve_stored_query_set, handle, same, spec,
                                                   reference))
except QuerySetError as error:
    say("error", f"No verdict on these queries: {error}")
    st.stop()
queries = None if query_set.scope is None else tuple(query_set.scope)
over = query_set.record().describe().replace("queries: ", "Over ", 1)
choice = _Choice(same[0], same[1:], measures, reference, queries)
_bottom_line_section(handle, choice, texts, large=large, over=over)
_estimate_section(handle, choice)

st.subheader("Every chosen run")
_accept_checkbox()
options = st.columns([2, 3])
metric = options[0].selectbox("Metric", METRICS, key="rl_compare_metric",
                              format_func=lambda m: METRIC_LABELS[m].format(k="k"))
with options[1].popover("Significance marks", width="stretch"):
    test = st.selectbox("Test for the table's marks", list(TEST_LABELS),
                        format_func=TEST_LABELS.get, key="rl_compare_test")
    alpha = st.selectbox("Significance level", [0.05, 0.01, 0.1], key="rl_compare_alpha")
    correction = st.selectbox("Correction", list(CORRECTION_LABELS),
                              format_func=CORRECTION_LABELS.get, key="rl_compare_correction")
    mode = st.selectbox("Pairs", list(MODES), key="rl_compare_mode", format_func=MODES.get)
# The tests (permutations, bootstraps) are the slow part: computed once per store state
# and choice of runs and test, shared by every session; switching the metric reuses it.
every_key = ("compare_runs", tuple(same), reference, mode, test, alpha, correction, queries)
if large and ready_result(handle, every_key) is None and not st.toggle(
        "Compute the results table and per-query differences", key="rl_compare_every_run"):
    say("caption",
        f"A large study ({len(texts):,} queries): every chosen run's results table and "
        "per-query differences take seconds to compute, so the verdicts above come first. "
        "Switch this on to compute them (shared with every session until the labels change).")
    st.stop()


def _every_run() -> RunComparison:
    reports = _evaluations(handle, same, reference)
    if queries is not None:
        reports = {run: restrict_evaluation(report, queries) for run, report in reports.items()}
    return compare_runs(reports, mode=mode, test=test, alpha=alpha, correction=correction)


comparison = shared_result(handle, every_key, _every_run)

st.markdown("##### Results table")
if queries is not None:
    say("caption", f"Over the {len(queries)} quer{'y' if len(queries) == 1 else 'ies'} "
                   "of the query set chosen above.")
show_rows(results_rows(comparison.table, terms[0].k))
say("caption", comparison.table.legend)

st.markdown("##### Per-query differences")
for item, adjusted in zip(comparison.comparisons, comparison.adjusted_p_values, strict=True):
    if item.metric != metric:
        continue
    facts = [f"paired on {item.n_paired} of {item.n_queries} queries (the chart's lower strip "
             "shows why the others were left out)"]
    if item.mean_delta is not None:
        facts.append(f"mean Δ on the {item.n_paired} paired queries: "
                     f"{signed_text(item.mean_delta, 4)} (a difference on the paired subset, "
                     "not a run's score)")
    if adjusted is not None:
        facts.append(f"{TEST_LABELS[test]} p after {CORRECTION_LABELS[correction]}: {adjusted:.4g}")
    with st.container(border=True):
        st.markdown(
            f"**{escape_markdown(item.run_a)} \N{MINUS SIGN} {escape_markdown(item.run_b)} "
            f"(baseline)** on {escape_markdown(item.label)}")
        st.caption(markdown_lines(*map(escape_markdown, facts)))
        figure = delta_figure(item)
        figure["layout"].pop("title", None)  # the same sentence is written just above
        _short_titles(figure)
        figure["layout"]["margin"] = {"t": 40, "b": 30}
        st.plotly_chart(unchecked_figure(figure), key=f"rl_delta_{item.run_a}_{item.run_b}")
