"""``evalcore protocol pin|show|list`` and ``evalcore retrieve``: the pinned lexical workflow.

Exit status: 0 success, 1 refused (the corpus or access rules changed since the pin; the
refusal is recorded and nothing is stored), 2 invalid input.
"""

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import click
import sqlite_utils

from evalcore.access.decisions import PermissionDenied
from evalcore.cli import main
from evalcore.cli.actor import default_actor
from evalcore.cli.input_options import Args, command, option, quiet_option
from evalcore.cli.process_setup import skip_final_collection
from evalcore.cli.store_location import NEW_OR_EXISTING_STORE
from evalcore.io.errors import InputErrors
from evalcore.io.progress import reporter
from evalcore.retrieval.errors import ProtocolNotFoundError, RetrievalRefused
from evalcore.retrieval.lexical_protocol import load_protocol
from evalcore.retrieval.pin import (
    PinnedProtocol,
    get_pinned_protocol,
    list_pinned_protocols,
    pin_protocol,
)
from evalcore.retrieval.workflow import execute_protocol
from evalcore.store.authorize import require_known_study
from evalcore.store.connection import open_store
from evalcore.store.location import store_exists
from evalcore.store.runs import run_exists
from evalcore.store.scoping import require_study_view
from evalcore.store.studies import StudyNotFoundError
from evalcore.store.study_handle import Study, open_study


def _actor(args: Args) -> str:
    return args.actor or default_actor()


@contextmanager
def _guarded() -> Iterator[None]:
    """Map the workflow's exceptions to messages and exit statuses (1 refused, 2 bad input)."""
    try:
        yield
    except RetrievalRefused as exc:
        click.echo(str(exc), err=True)
        raise SystemExit(1) from None
    except PermissionDenied as exc:
        click.echo(f"refused: {exc}", err=True)
        raise SystemExit(1) from None
    except InputErrors as exc:
        click.echo(f"error: the protocol file is invalid ({exc.total} problems):", err=True)
        click.echo(str(exc), err=True)
        raise SystemExit(2) from None
    except (ValueError, StudyNotFoundError, ProtocolNotFoundError) as exc:
        click.echo(f"error: {exc}", err=True)
        raise SystemExit(2) from None


def _open(db_path: Path) -> sqlite_utils.Database:
    if not store_exists(db_path):
        click.echo(f"error: no evidence store at {db_path}; check --db", err=True)
        raise SystemExit(2)
    return open_store(db_path)


def _seen(args: Args) -> Study:
    """The study, once the actor may see it (under :func:`_guarded`: a refusal exits 1, an
    unknown study 2)."""
    db = _open(args.db_path)
    require_study_view(db, _actor(args), args.study_id)
    return open_study(db, args.study_id, _actor(args))


def _describe_pin(pinned: PinnedProtocol) -> None:
    click.echo(f"protocol: {pinned.name}")
    click.echo(f"corpus: {pinned.protocol.corpus_id}")
    click.echo(f"corpus_fingerprint: {pinned.corpus_fingerprint}")
    withheld = " (of the organisations you may read)" if pinned.withheld_organisations else ""
    click.echo(f"documents: {pinned.document_count}{withheld}")
    for org in pinned.protocol.organisations:
        if org in pinned.withheld_organisations:
            click.echo(f"  {org}: withheld (you may not read its documents)")
            continue
        count = pinned.documents_by_organisation.get(org, 0)
        click.echo(f"  {org}: {count}")
        if count == 0:
            click.echo(
                f"warning: organisation {org!r} owns no visible document (a typo, or "
                "nothing before the cutoff?)",
                err=True,
            )
    click.echo(f"cutoff: {pinned.protocol.to_json_dict()['cutoff']}")
    click.echo(f"top_k: {pinned.protocol.top_k}")


_DB = option(
    "--db db_path",
    "The evidence store (a file or a postgresql:// URL).",
    required=True,
    type=NEW_OR_EXISTING_STORE,
)
_STUDY = option("--study study_id", "The study id.", required=True)
_ACTOR = option("--actor", "Who does this (default: the login name).")


@main.group("protocol")
def protocol_group() -> None:
    """Pin and inspect lexical retrieval protocols."""


@command(protocol_group, "pin")
@_DB
@_STUDY
@option(
    "--protocol protocol_path",
    "protocol.json: method, top_k, cutoff, organisations, ...",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
)
@option("--name", "Name of the pin (unique in the study).", required=True)
@_ACTOR
def pin_command(a: Args) -> None:
    """Pin a protocol: record the visible document set and its corpus fingerprint.

    Prints the fingerprint and the number of documents per organisation.
    """
    with _guarded():
        protocol = load_protocol(a.protocol_path)
        db = _open(a.db_path)
        require_known_study(db, _actor(a), a.study_id)
        pinned = pin_protocol(db, **a.pick("study_id", "name"), protocol=protocol, actor=_actor(a))
        _describe_pin(pinned)


@command(protocol_group, "show")
@_DB
@_STUDY
@option("--name", "Name of the pin.", required=True)
@_ACTOR
def show_command(a: Args) -> None:
    """Print a pinned protocol as JSON (with its fingerprint and document counts)."""
    with _guarded():
        pinned = get_pinned_protocol(_seen(a), a.name)
        click.echo(json.dumps(pinned.model_dump(mode="json"), indent=2, sort_keys=True))


@command(protocol_group, "list")
@_DB
@_STUDY
@_ACTOR
def list_command(a: Args) -> None:
    """List the study's pinned protocols: name, documents, fingerprint, pinned at/by."""
    with _guarded():
        for pinned in list_pinned_protocols(_seen(a)):
            click.echo(
                f"{pinned.name}\t{pinned.document_count}\t{pinned.corpus_fingerprint}\t"
                f"{pinned.pinned_at}\t{pinned.pinned_by}"
            )


@command(main, "retrieve")
@_DB
@_STUDY
@option(
    "--protocol protocol_ref",
    "A pinned protocol name, or a protocol.json file: a file is pinned first "
    "(under --pin-name, default the run name) and then run.",
    required=True,
)
@option("--name run_name", "Name of the new run.", required=True)
@option("--pin-name", "Name for the pin when --protocol is a file (default: the run name).")
@option(
    "--time-budget time_budget_s",
    "Seconds; queries not reached in time are not executed and the run is "
    "stored with scan_complete=false (its metrics are partial_scan).",
    type=float,
)
@quiet_option
@_ACTOR
def retrieve_command(a: Args) -> None:
    """Run every query of the study with a pinned lexical protocol (FTS5 BM25).

    The pin is revalidated first: if any pinned document changed, moved to
    another organisation or disappeared, or new documents became visible, the
    run is refused (exit 1), the refusal is recorded and nothing is stored.
    """
    who, protocol_ref, run_name = _actor(a), a.protocol_ref, a.run_name
    with _guarded():
        path = Path(protocol_ref)
        is_file = path.is_file() or protocol_ref.endswith(".json")
        if is_file:
            protocol = load_protocol(path)
        study = _seen(a)
        db = study.db
        if is_file:
            if run_exists(study, run_name):  # before pinning: a taken name leaves no new pin
                raise ValueError(
                    f"run {run_name!r} already exists in study {a.study_id!r}; choose another name"
                )
            name = a.pin_name or run_name
            pinned = pin_protocol(db, study_id=a.study_id, name=name, protocol=protocol, actor=who)
            click.echo(f"pinned {protocol_ref} as protocol {pinned.name!r}")
            protocol_name = pinned.name
        else:
            if a.pin_name is not None:
                raise ValueError("--pin-name applies only when --protocol is a protocol.json file")
            protocol_name = protocol_ref
        run = execute_protocol(
            db,
            protocol_name=protocol_name,
            actor=who,
            **a.pick("study_id", "run_name", "time_budget_s"),
        )
        # Stored and committed: the store closed, the exit has nothing left to finalise.
        db.conn.close()
        skip_final_collection()
        reporter().done()
        execution = run.protocol["execution"]
        click.echo(f"run: {run.name}")
        click.echo(f"protocol: {protocol_name}")
        click.echo(f"corpus_fingerprint: {run.corpus_fingerprint}")
        click.echo(f"documents: {run.protocol['pinned_document_count']}")
        click.echo(f"queries: {execution['queries_executed']} of {execution['queries_total']}")
        click.echo(f"k: {run.k}")
        click.echo(f"scan_complete: {'true' if run.scan_complete else 'false'}")
        if not run.scan_complete:
            click.echo(
                "warning: the time budget ran out; the run is stored as a partial scan "
                "and its metrics will be unavailable (partial_scan)",
                err=True,
            )
