"""Import observation JSONL (evidence contract section 2) into a study.

Parsed and validated by :func:`evalcore.io.observations_jsonl.parse_observations`. Each
observation gives its query (registered); its ``labels`` as ``label`` events by
``observations:<file name>`` (or the one given), source ``import`` (a unit labeled twice
alike is one event and a warning, differently an error naming the line and both label
positions); ``population_complete: true`` as a ``complete`` event (after the labels); and
its ranking (``returned_ids`` / ``scores``) as one result list of the run ``run_name``
(default: the file name without extension; ``""``: labels only).

A stored run has one ``k``, ``scan_complete`` and corpus fingerprint: they must agree across
the file (an error names the first line that differs). ``corpus_id`` and ``retrieval_unit``,
when given, must match the study. ``permitted_ids`` and ``unit_of`` cannot be stored on a
study run (evaluate such files with ``evalcore evaluate --observations``); ``cutoff`` and
``reference_version`` are not stored (a warning says so). Unit ids unknown to a non-empty
corpus are refused unless ``allow_unknown_ids``."""

from __future__ import annotations

from pathlib import Path

import sqlite_utils

from evalcore.access.roles import Permission
from evalcore.io.errors import ErrorLog
from evalcore.io.observations_jsonl import parse_observations
from evalcore.io.text_lines import numbered_lines
from evalcore.store.imports import common
from evalcore.store.runs import add_run
from evalcore.store.studies import get_study
from evalcore.store.study_handle import open_study
from evalcore.store.transaction import write_transaction


def import_observations(
    db: sqlite_utils.Database,
    source: common.Source,
    *,
    study_id: str,
    run_name: str | None = None,
    annotator: str | None = None,
    allow_unknown_ids: bool = False,
    actor: str = "import",
) -> common.ImportSummary:
    """Import an observation JSONL file (all or nothing); see the module docstring."""
    study = get_study(db, study_id)
    text = common.load_source(source)
    observations = parse_observations(text)
    ids = (i for o in observations
           for i in (o.query_id, *o.returned_ids, *(label.id for label in o.labels)))
    common.refuse_long_ids(ids, text)
    line_numbers = [n for n, _ in numbered_lines(text.text, comments=False)]
    who = annotator or f"observations:{Path(text.name).name}"
    name = common.source_stem(Path(text.name).name) if run_name is None else run_name
    log = ErrorLog(text.name)
    warnings: list[str] = []
    events: list[common.NewEvent] = []
    first = observations[0]
    ignored: set[str] = set()
    for line, obs in zip(line_numbers, observations, strict=True):
        if obs.corpus_id is not None and obs.corpus_id != study.corpus_id:
            log.add(line, "corpus_id", f"{obs.corpus_id!r} is not the study's corpus "
                    f"{study.corpus_id!r}", "import into a study of that corpus")
        if obs.retrieval_unit != study.retrieval_unit:
            log.add(line, "retrieval_unit", f"{obs.retrieval_unit!r} is not the study's unit "
                    f"{study.retrieval_unit!r}")
        for fld in ("permitted_ids", "unit_of"):
            if getattr(obs, fld) is not None:
                log.add(line, fld, "cannot be stored with a study run",
                        "evaluate this file directly with evalcore evaluate --observations")
        for fld in ("cutoff", "reference_version"):
            if getattr(obs, fld) is not None:
                ignored.add(fld)
        if name:
            for fld in ("k", "scan_complete", "corpus_fingerprint"):
                if getattr(obs, fld) != getattr(first, fld):
                    log.add(line, fld, f"{getattr(obs, fld)!r} differs from line "
                            f"{line_numbers[0]} ({getattr(first, fld)!r}); a stored run has one {fld}",
                            "split the file into one run per value")
        seen: dict[str, tuple[int, int]] = {}
        for i, label in enumerate(obs.labels):
            if label.conflict is not None:
                log.add(line, f"labels[{i}].conflict", f"unit {label.id} is a conflict; the store "
                        "records each annotator's label, not a conflict",
                        "import the annotators' labels as a labels file, or evaluate this "
                        "file directly with evalcore evaluate --observations")
                continue
            earlier = seen.setdefault(label.id, (i, label.gain))
            if earlier[0] == i:
                events.append(common.NewEvent(obs.query_id, label.id, "label", label.gain, who))
            elif earlier[1] == label.gain:
                warnings.append(f"{text.name}:{line}: labels[{i}] repeats labels[{earlier[0]}] "
                                f"({label.id}, gain {label.gain}); recorded once")
            else:
                log.add(line, f"labels[{i}].gain", f"unit {label.id} has gain {label.gain} but "
                        f"labels[{earlier[0]}] gives {earlier[1]}", "keep one of the two labels")
    log.raise_if_any()
    warnings.extend(f"'{f}' is not stored in a study and was ignored" for f in sorted(ignored))
    summary = common.ImportSummary(kind="observations", study_id=study_id, source=text.name,
                            rows=len(observations), warnings=warnings, run=name or None,
                            notes=text.notes())
    with write_transaction(db):
        handle = open_study(db, study_id, actor, Permission.IMPORT)
        if name:
            summary.refuse_run_taken(db, "choose another name with --run, or --run '' to import "
                                         "labels only")
        returned = (u for o in observations for u in o.returned_ids)
        common.check_known_ids(db, study.corpus_id, [*(e.unit_id for e in events), *returned], text,
                        allow_unknown=allow_unknown_ids)
        summary.queries = common.register_queries(db, study_id, (o.query_id for o in observations))
        common.write_label_events(handle, events, summary)
        summary.completeness_events = common.mark_queries_complete(
            db, study_id=study_id,
            query_ids=(o.query_id for o in observations if o.population_complete),
            actor=actor, reason=f"population_complete in {text.name}",
        )
        if name:
            results = [
                (o.query_id, rank, u, None if o.scores is None else o.scores[rank - 1])
                for o in observations
                for rank, u in enumerate(o.returned_ids, start=1)
            ]
            add_run(db, actor=actor, study_id=study_id, name=name, source="imported", k=first.k,
                    results=results, protocol={"imported_from": Path(text.name).name},
                    corpus_fingerprint=first.corpus_fingerprint,
                    scan_complete=first.scan_complete)
            summary.results = len(results)
        summary.audit(db, actor)
    return summary
