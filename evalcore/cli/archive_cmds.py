"""A whole study in one file: ``evalcore export study`` and ``evalcore import study``.

Export needs the lead role; import makes the importer the new study's lead. A damaged,
tampered, incomplete or oversized archive, or a study id already in the store, is refused
naming the archive member and line (exit 2), and nothing is written. With a signing key an
export is signed and an import verified; without one an import records that the archive's
origin is unverified.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import click

from evalcore.cli.input_options import Args, command, option, quiet_option
from evalcore.cli.store_cmds import (
    actor_option,
    db_option,
    export_group,
    import_group,
    import_options,
    store,
    study_options,
)
from evalcore.io.progress import reporter
from evalcore.io.study_archive import load_signing_key
from evalcore.store.study_archive import ArchiveSummary, export_study, import_study, read_archive

#: The environment variable naming the signing key file (never the key itself).
KEY_FILE_ENV = "RELEVANCE_LEDGER_ARCHIVE_KEY_FILE"

_signing_key = option(
    "--signing-key key_path",
    "The organisation's archive signing key: a file of at least 32 secret bytes, "
    "readable by its owner only, kept outside the store (see the README).",
    type=click.Path(dir_okay=False, path_type=Path),
    envvar=KEY_FILE_ENV,
    show_envvar=True,
)


def _key(args: Args) -> bytes | None:
    if args.key_path is None:
        return None
    try:
        return load_signing_key(args.key_path)
    except ValueError as exc:
        click.echo(f"error: {exc}", err=True)
        raise SystemExit(2) from None


def _counts(summary: ArchiveSummary) -> str:
    keys = "queries documents runs results label_events references reports members audit".split()
    return ", ".join(f"{summary.rows[f'{k}.jsonl']:,} {k.replace('_', ' ')}" for k in keys)


@command(export_group, "study")
@study_options
@option(
    "--out",
    "The new archive file (an existing file is never overwritten).",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
)
@_signing_key
@quiet_option
@actor_option
def export_study_command(a: Args) -> None:
    """Everything of a study in one versioned archive (needs the lead role); signed with the
    organisation's key when one is given."""
    key = _key(a)
    with store(a, read=True) as db:
        summary = export_study(db, a.study_id, a.out, actor=a.actor, signing_key=key)
    reporter().done()
    click.echo(
        f"exported study {a.study_id} to {a.out} ({summary.bytes:,} bytes, "
        f"{summary.seconds} s): {_counts(summary)}"
    )
    click.echo(
        "signed with the organisation's key"
        if summary.signed
        else f"not signed (no --signing-key or {KEY_FILE_ENV}): an importer cannot verify "
        "its origin"
    )
    if summary.documents_withheld:
        click.echo(
            f"warning: {summary.documents_withheld:,} document(s) the study uses are not "
            "in the archive: you may not read them",
            err=True,
        )
    if summary.withheld:
        click.echo(
            "warning: what you may not read was left out of "
            f"{', '.join(summary.withheld)} (hashes, scores and counts of other "
            'organisations\' documents; docs/access-model.md, "Exports")',
            err=True,
        )


@command(import_group, "study")
@db_option
@option(
    "--in archive_path",
    "A study archive written by `evalcore export study`.",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    required=True,
)
@option("--as as_id", "Import under this study id (default: the archive's).")
@_signing_key
@option(
    "--accept-unsigned",
    "With a signing key: import an archive that is not signed anyway, as "
    "unverified (recorded in the audit log).",
    flag=True,
)
@import_options
def import_study_command(a: Args) -> None:
    """Restore a study archive into a store, all or nothing; --actor becomes its lead."""
    key = _key(a)
    with tempfile.TemporaryDirectory(prefix="study-import-") as tmp, store(a) as db:
        given = a.pick("accept_unsigned", "limits")
        archive = read_archive(a.archive_path, Path(tmp), signing_key=key, **given)
        summary = import_study(db, archive, actor=a.actor, study_id=a.as_id)
    reporter().done()
    click.echo(
        f"imported study {summary.study_id} from {a.archive_path} ({summary.seconds} s): "
        f"{_counts(summary)}"
    )
    if archive.origin.verified:
        click.echo(archive.origin.note)
    else:
        click.echo(f"warning: {archive.origin.note}; recorded in the audit log", err=True)
    if summary.withheld:
        click.echo(
            f"note: its exporter could not read everything: {', '.join(summary.withheld)} "
            "left out what they may not read (its pins over other organisations' "
            "documents cannot be run again here)",
            err=True,
        )
