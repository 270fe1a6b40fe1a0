"""``evalcore sample``: named random samples of a comparison's unknown units (contract
section 13).

``draw`` and ``grow`` print the sampled units as JSON lines in the order annotators take
them, a summary on stderr; both are lead-only in a team study and audited. Exit status:
0 success, 1 refused (not a lead), 2 invalid input.
"""

from __future__ import annotations

import json
from collections import Counter

import click

from evalcore.cli import main
from evalcore.cli.input_options import Args, command, option
from evalcore.cli.store_cmds import actor_option, fail, store, study_options
from evalcore.store.study_handle import open_study

FORMATS = ("text", "json")
_SIZE = click.IntRange(1, 10_000_000)
_SEED = click.IntRange(0, 2**63 - 1)


@main.group("sample")
def sample_group() -> None:
    """Random samples of unknown units, for estimated comparisons."""


def _units(view, states: dict | None = None) -> list[dict]:  # type: ignore[no-untyped-def]
    """The sample's units in labeling order as JSON objects (with their state if given)."""
    return [
        {
            "position": position,
            "query_id": u.query_id,
            "unit_id": u.unit_id,
            "stratum": u.stratum,
            "inclusion_probability": u.inclusion_probability,
        }
        | ({} if states is None else {"state": states.get((u.query_id, u.unit_id), "open")})
        for position, u in enumerate(view.units(), start=1)
    ]


def _print_sample(view) -> None:  # type: ignore[no-untyped-def]
    """The units as JSON lines on stdout, the summary on stderr."""
    for unit in _units(view):
        click.echo(json.dumps(unit, ensure_ascii=False))
    click.echo(_summary(view), err=True)


def _summary(view) -> str:  # type: ignore[no-untyped-def]
    s, d = view.sample, view.design
    return (
        f"sample {s.name!r}: {s.n_units} units of {d.n_unknown} unknown "
        f"({d.draws} of {len(d.queries)} queries with unknown units; "
        f"{len(d.strata)} strata; seed {s.seed}); {d.run_a} vs {d.run_b} on "
        f"{', '.join(d.measures)}"
    )


def _lookup_failed(err: LookupError, summary: str) -> None:
    fail([f"error: {err.args[0] if err.args else err}"], summary)


@command(sample_group, "draw")
@study_options
@option(
    "--runs", "Two run names, comma-separated: BASELINE,CANDIDATE (as for compare).", required=True
)
@option(
    "-m --measure measures",
    "A measure the sample serves, e.g. P@10 (repeat for several).",
    multiple=True,
    required=True,
)
@option("--size", "How many units to label (reached in expectation).", required=True, type=_SIZE)
@option("--seed", "The random seed (recorded with the sample).", required=True, type=_SEED)
@option("--name", "The sample's name (unique in the study).", required=True)
@actor_option
def draw_command(a: Args) -> None:
    """Draw a sample of the unknown units of two runs and print its units in order."""
    from evalcore.contract.measures import UnknownMeasure, parse_measure
    from evalcore.estimation.stored import draw_stored_sample

    nothing = "evalcore sample draw: nothing was written"
    names = [r.strip() for r in a.runs.split(",") if r.strip()]
    if len(names) != 2 or names[0] == names[1]:
        problem = "--runs takes two different run names, comma-separated (e.g. --runs A,B)"
        fail([f"error: {problem}; got {a.runs!r}"], nothing)
    try:
        for m in a.measures:
            parse_measure(m)
    except UnknownMeasure as err:
        fail([f"error: -m: {err}"], nothing)
    with store(a, read=True) as db:
        try:
            given = a.pick("study_id", "name", "measures", "size", "seed", "actor")
            view = draw_stored_sample(db, candidate=names[1], baseline=names[0], **given)
        except LookupError as err:
            _lookup_failed(err, nothing)
    _print_sample(view)


@command(sample_group, "grow")
@study_options
@option("--name", "The sample to grow.", required=True)
@option("--size", "The new size in units (at least the current one).", required=True, type=_SIZE)
@actor_option
def grow_command(a: Args) -> None:
    """Draw more units into the same design; print the whole sample in order."""
    from evalcore.estimation.stored import grow_stored_sample

    with store(a, read=True) as db:
        try:
            view = grow_stored_sample(db, **a.pick("study_id", "name", "size", "actor"))
        except LookupError as err:
            _lookup_failed(err, "evalcore sample grow: nothing was written")
    _print_sample(view)


@command(sample_group, "list")
@study_options
@actor_option
def list_command(a: Args) -> None:
    """The study's samples: name, runs, measures, size, units, seed, who drew them."""
    from evalcore.store.samples import list_samples

    with store(a, read=True) as db:
        samples = list_samples(open_study(db, a.study_id, a.actor))
    if not samples:
        click.echo(f"no sample in study {a.study_id}; draw one with: evalcore sample draw")
        return
    for s in samples:
        click.echo(
            f"{s.name}\t{s.run_b},{s.run_a}\t{','.join(s.measures)}\tsize {s.size}\t"
            f"{s.n_units} units\tseed {s.seed}\tdrawn {s.created_at} by {s.created_by}"
        )


@command(sample_group, "show")
@study_options
@option("--name", "The sample.", required=True)
@option("--format fmt", shown="text", choices=FORMATS)
@actor_option
def show_command(a: Args) -> None:
    """A sample's design (runs, measures, query set, seed, strata, inclusion
    probabilities; with --format json the whole draw order) and its units in order with
    their state."""
    from evalcore.estimation.stored import sample_queue, show_sample

    with store(a, read=True) as db:
        try:
            view = show_sample(open_study(db, a.study_id, a.actor), a.name)
            queue = sample_queue(open_study(db, a.study_id, a.actor), a.name)
        except LookupError as err:
            _lookup_failed(err, "evalcore sample show")
    s, d = view.sample, view.design
    units = _units(view, {(q.query_id, q.unit_id): q.state for q in queue})
    if a.fmt == "json":
        shown = {"name": s.name, "study": s.study_id, "candidate": d.run_a, "baseline": d.run_b}
        shown |= {key: getattr(d, key) for key in ("measures", "query_ids")}
        shown |= {key: getattr(s, key) for key in ("seed", "size")}
        shown |= {key: getattr(d, key) for key in ("draws", "n_unknown", "method")}
        shown |= {key: getattr(s, key) for key in ("created_at", "created_by", "grown_at")}
        shown["strata"] = [
            st.model_dump(mode="json") | {"inclusion_probability": st.inclusion_probability}
            for st in d.strata
        ]
        shown["units"] = units
        # the whole design: every population query in draw order with its unknown units
        shown["population"] = [q.model_dump(mode="json") for q in d.queries]
        click.echo(json.dumps(shown, indent=2, ensure_ascii=False))
        return
    click.echo(_summary(view))
    click.echo(
        f"design: {d.method}; {len(d.query_ids)} queries in the query set, size "
        f"{s.size}; drawn {s.created_at} by {s.created_by}"
        + (f", grown {s.grown_at}" if s.grown_at else "")
    )
    for st in d.strata:
        click.echo(
            f"  stratum {st.index}: {st.n_sampled} of {st.n_queries} queries "
            f"({st.n_units} unknown units), inclusion probability "
            f"{st.inclusion_probability:.4f}"
        )
    counts = Counter(u["state"] for u in units)
    click.echo(
        f"units: {counts['labeled']} labeled, {counts['non-response']} non-response, "
        f"{counts['open']} to label"
    )
    for u in units:
        click.echo(json.dumps(u, ensure_ascii=False))
