"""The evidence store as an input of ``evalcore evaluate --db F --study S --run R``.

The stored run is evaluated against the working reference or a frozen version and prints
the same JSON as the file-based evaluate of the same evidence. Measures may use any cutoff
up to the run's stored depth: a deeper one is an input error, since the ranks below were
never retrieved.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import click
from click.core import ParameterSource

from evalcore.api.inputs import EvalInput
from evalcore.cli.actor import default_actor
from evalcore.cli.input_options import Args
from evalcore.compute.evaluate import packing_depth
from evalcore.contract.evaluation_protocol import EvalProtocol
from evalcore.contract.measures import Measure
from evalcore.io.errors import InputError, InputErrors
from evalcore.store.study_handle import open_study


def choose_store_source(
    given: Args, file_options: list[str]
) -> Callable[[EvalProtocol, tuple[Measure, ...] | None], EvalInput]:
    """Check the store options of ``evaluate`` (``given``; ``file_options``: the file options
    also given); return the loader (``--run`` is a run name here)."""
    db, study, run, reference = given.db, given.study, given.run, given.reference
    if db is None:
        given = [n for n, v in (("--study", study), ("--reference", reference)) if v is not None]
        verb = "requires" if len(given) == 1 else "require"
        raise click.UsageError(f"{' and '.join(given)} {verb} --db FILE (the evidence store)")
    if file_options:
        raise click.UsageError(
            f"--db cannot be combined with {', '.join(file_options)}: the store holds the run, "
            "its k, the labels and the completeness claims"
        )
    missing = [n for n, v in (("--study", study), ("--run", run)) if v is None]
    if missing:
        raise click.UsageError(f"--db needs {' and '.join(missing)} as well (--run names a "
                               "stored run)")
    assert study is not None and run is not None
    return lambda protocol, measures: store_source(
        db, study, str(run), reference, protocol, measures, actor=given.actor
    )


def _lookup_error(db: Path, option: str, exc: Exception) -> InputErrors:
    return InputErrors([InputError(file=str(db), field=option, message=str(exc))])


def store_source(
    db_path: Path,
    study: str,
    run_name: str,
    reference: str | None,
    protocol: EvalProtocol,
    measures: tuple[Measure, ...] | None = None,
    *,
    actor: str | None = None,
) -> EvalInput:
    """A stored run packed for the metric computer
    (:func:`evalcore.analysis.run_evaluation.pack_stored_run`), once ``actor``
    (default: the OS user) may see the study; a refusal exits with status 1."""
    from evalcore.access.decisions import PermissionDenied
    from evalcore.analysis.run_evaluation import pack_stored_run
    from evalcore.store.connection import open_store
    from evalcore.store.references import ReferenceNotFoundError
    from evalcore.store.runs import RunNotFoundError
    from evalcore.store.scoping import require_study_view
    from evalcore.store.studies import StudyNotFoundError

    db = open_store(db_path)
    try:
        viewer = actor or default_actor()
        require_study_view(db, viewer, study)
        run = pack_stored_run(open_study(db, study, viewer), run_name, reference, protocol)
    except PermissionDenied as exc:
        click.echo(f"refused: {exc}", err=True)
        click.echo("evalcore evaluate: nothing was computed or shown", err=True)
        raise SystemExit(1) from None
    except StudyNotFoundError as exc:
        raise _lookup_error(db_path, "--study", exc) from None
    except RunNotFoundError as exc:
        raise _lookup_error(db_path, "--run", exc) from None
    except ReferenceNotFoundError as exc:
        raise _lookup_error(db_path, "--reference", exc) from None
    finally:
        db.conn.close()
    depth = packing_depth(measures)
    from evalcore.analysis.decision import depth_problems

    stored = run.columns.run.k if run.columns.query_ids else depth
    problems = depth_problems({run_name: stored}, measures or ())
    if problems:
        raise InputErrors([InputError(
            file=str(db_path), field="-m", message="; ".join(problems),
            hint=f"use cutoffs up to {stored}, or store a deeper run",
        )])
    return EvalInput(run.packed(depth), run.diagnostics)


def with_study_settings(
    db_path: Path, study: str | None, protocol: EvalProtocol
) -> EvalProtocol:
    """The protocol with the study's threshold and gain where the options were left at default."""
    ctx = click.get_current_context()
    from evalcore.store.connection import open_store
    from evalcore.store.studies import StudyNotFoundError, get_study

    db = open_store(db_path)
    try:
        settings = get_study(db, study) if study else None
    except StudyNotFoundError:
        return protocol  # reported by the source with the known studies
    finally:
        db.conn.close()
    if settings is None:
        return protocol
    declared = settings.protocol()
    defaults = [field for field in ("relevance_threshold", "gain")
                if ctx.get_parameter_source(field) is ParameterSource.DEFAULT]
    return protocol.model_copy(update={field: getattr(declared, field) for field in defaults})
