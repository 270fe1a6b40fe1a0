"""A whole study in one file: ``evalcore export study`` and ``evalcore import study``.

    evalcore export study --db store.db --study trec --out trec.study.zip --actor LEAD
    evalcore import study --db other.db --in trec.study.zip [--as trec-copy] --actor LEAD

Export needs the lead role; import makes the importer the new study's lead and
follows the store's rules for organisations and corpora. A damaged, tampered,
incomplete or oversized archive, or a study id already in the store, is refused
naming the archive member and line (exit 2), and nothing is written.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import click

from evalcore.cli.input_options import limit_options, quiet_option
from evalcore.cli.store_cmds import (
    actor_option,
    db_option,
    export_group,
    import_group,
    store,
    study_option,
)
from evalcore.contract.limits import ReadLimits
from evalcore.io.progress import reporter
from evalcore.store.study_archive import ArchiveSummary, export_study, import_study, read_archive


def _counts(summary: ArchiveSummary) -> str:
    keys = ("queries", "documents", "runs", "results", "label_events", "references", "reports",
            "members", "audit")
    return ", ".join(f"{summary.rows[f'{k}.jsonl']:,} {k.replace('_', ' ')}" for k in keys)


@export_group.command("study")
@db_option
@study_option
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="The new archive file (an existing file is never overwritten).")
@quiet_option
@actor_option
def export_study_command(db_path: Path, study_id: str, out: Path, actor: str) -> None:
    """Everything of a study in one versioned archive (needs the lead role)."""
    with store(db_path, "export study", study_id=study_id, actor=actor, read=True) as db:
        summary = export_study(db, study_id, out, actor=actor)
    reporter().done()
    click.echo(f"exported study {study_id} to {out} ({summary.bytes:,} bytes, "
               f"{summary.seconds} s): {_counts(summary)}")
    if summary.documents_withheld:
        click.echo(f"warning: {summary.documents_withheld:,} document(s) the study uses are not "
                   "in the archive: you may not read them", err=True)


@import_group.command("study")
@db_option
@click.option("--in", "archive_path", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              required=True, help="A study archive written by `evalcore export study`.")
@click.option("--as", "as_id", default=None, help="Import under this study id (default: the "
                                                  "archive's).")
@limit_options
@quiet_option
@actor_option
def import_study_command(db_path: Path, archive_path: Path, as_id: str | None,
                         limits: ReadLimits, actor: str) -> None:
    """Restore a study archive into a store, all or nothing; --actor becomes its lead."""
    with tempfile.TemporaryDirectory(prefix="study-import-") as tmp, \
            store(db_path, "import study", actor=actor) as db:
        archive = read_archive(archive_path, Path(tmp), limits=limits)
        summary = import_study(db, archive, actor=actor, study_id=as_id)
    reporter().done()
    click.echo(f"imported study {summary.study_id} from {archive_path} ({summary.seconds} s): "
               f"{_counts(summary)}")
