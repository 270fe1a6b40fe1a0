"""A study's population: how many units its corpus holds, which bounds open populations.

On a query not declared complete, up to ``U_out`` unlabeled units may be relevant (contract
section 12); the metric computer derives ``U_out`` from the corpus size
(:meth:`ObservationBatch.with_corpus_size <evalcore.compute.batch.ObservationBatch.with_corpus_size>`).
The size is known only when sound: the study's unit is the document and every unit it
mentions (returned by a run or labeled) is a published document of a corpus the store holds;
the size is then that corpus's published documents. Otherwise outside units stay unbounded.
:func:`study_population` is the one place that decides; the observation reads
(:mod:`evalcore.store.observations`) carry its size to every evaluation of the study."""

import threading
from dataclasses import dataclass, replace

import sqlite_utils

from evalcore.store.document_imports import published
from evalcore.store.store_identity import store_place
from evalcore.store.studies import StudyIn
from evalcore.store.study_handle import Study


@dataclass(frozen=True)
class StudyPopulation:
    """What the store knows of a study's population (see the module docstring)."""

    corpus_id: str
    retrieval_unit: str
    #: published documents of the corpus
    documents: int
    #: units the study mentions (returned or labeled) that are not among them
    outside: int

    @property
    def corpus_size(self) -> int | None:
        """The corpus size evaluations use, or None: not known (outside units unbounded)."""
        if self.retrieval_unit != "document" or self.documents == 0 or self.outside:
            return None
        return self.documents

    def size_notes(self) -> list[str]:
        """The note recording the corpus size used; when the store holds the corpus but
        its size cannot be used (units outside it), the note saying why; else none (no
        corpus in the store: outside units unbounded, as on observations without a size)."""
        held = self.documents > 0 and self.retrieval_unit == "document"
        return [self.note()] if self.corpus_size is not None or held else []

    def note(self) -> str:
        """One line for a report: the size used and what bounds it, or why there is none."""
        size = self.corpus_size
        if size is not None:
            return (
                f"corpus size {size} (documents of corpus {self.corpus_id!r} in the store): "
                "bounds R, nDCG and AP where a relevant set is not declared complete"
            )
        if self.retrieval_unit != "document":
            why = f"the study's unit is {self.retrieval_unit!r}, not a document of the corpus"
        elif self.documents == 0:
            why = f"corpus {self.corpus_id!r} holds no documents in the store"
        else:
            why = (
                f"{self.outside} unit(s) the study's runs returned or labeled are not "
                f"documents of corpus {self.corpus_id!r}"
            )
        return (
            f"corpus size unknown ({why}): where a relevant set is not declared "
            "complete, any number of unlabeled units may be relevant"
        )


def study_population(handle: Study) -> StudyPopulation:
    """The study's :class:`StudyPopulation` now. A corpus of :data:`_KEEP_FROM` documents or more
    is counted once per store file and study while its generation
    (:mod:`evalcore.store.corpus_generations`) stays; units new to the study since are checked
    alone."""
    db, study = handle.db, handle.settings
    marks = _marks(db, study)
    place = store_place(db)  # a file made again at the same path is another store
    key = None if place is None else (place, handle.study_id)  # None: a store in memory
    with _LOCK:
        kept = _KEPT.get(key) if key is not None else None
    if (
        kept is not None
        and kept.marks[0] == marks[0]
        and kept.marks[1] <= marks[1]
        and (kept.population.corpus_id, kept.population.retrieval_unit)
        == (study.corpus_id, study.retrieval_unit)
    ):
        if kept.marks[1] == marks[1]:
            return kept.population
        population = replace(
            kept.population,
            outside=kept.population.outside
            + (_outside(db, study, since=kept.marks[1]) if kept.population.documents else 0),
        )
    else:
        row = db.execute(f"SELECT count(*) FROM documents WHERE corpus_id = ? AND {published()}",
                         [study.corpus_id]).fetchone()
        documents = int(row[0])
        population = StudyPopulation(
            corpus_id=study.corpus_id,
            retrieval_unit=study.retrieval_unit,
            documents=documents,
            outside=_outside(db, study, since=0) if documents else 0,
        )
    if (
        key is not None and population.documents >= _KEEP_FROM and _marks(db, study) == marks
    ):  # nothing moved while it was read
        with _LOCK:
            _KEPT[key] = _Kept(marks, population)
            while len(_KEPT) > _KEEP:
                del _KEPT[next(iter(_KEPT))]
    return population


@dataclass(frozen=True)
class _Kept:
    #: (the corpus's generation, the study's unit codes assigned) when it was read
    marks: tuple[int, int]
    population: StudyPopulation


#: (where the store is kept, study) -> the population last read; a few studies are kept
_KEPT: dict[tuple[str, str], _Kept] = {}
_KEEP = 64
#: Smaller corpora are counted again on every read (a few milliseconds at most).
_KEEP_FROM = 5_000
_LOCK = threading.Lock()


def _marks(db: sqlite_utils.Database, study: StudyIn) -> tuple[int, int]:
    row = db.execute(
        "SELECT (SELECT coalesce(max(generation), 0) FROM corpus_generations WHERE "
        "corpus_id = ?), (SELECT coalesce(max(unit_code) + 1, 0) FROM study_units WHERE "
        "study_id = ?)",
        [study.corpus_id, study.study_id],
    ).fetchone()
    return int(row[0]), int(row[1])


def _outside(db: sqlite_utils.Database, study: StudyIn, *, since: int) -> int:
    """The study's units with a code from ``since`` on that are not published documents of
    its corpus (none are counted for a study whose unit is not the document)."""
    if study.retrieval_unit != "document":
        return 0
    return int(
        db.execute(
            "SELECT count(*) FROM study_units su WHERE su.study_id = ? AND su.unit_code >= ? "
            "AND NOT EXISTS (SELECT 1 FROM documents d WHERE d.corpus_id = ? AND "
            f"d.doc_id = su.unit_id AND {published('d')})",
            [study.study_id, since, study.corpus_id],
        ).fetchone()[0]
    )
