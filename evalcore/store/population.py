"""A study's population: how many units its corpus holds, which bounds open populations.

On a query whose relevant set is not declared complete, up to ``U_out`` units no one
labeled may be relevant (contract section 12); the metric computer derives ``U_out``
from the corpus size (:meth:`ObservationBatch.with_corpus_size
<evalcore.compute.batch.ObservationBatch.with_corpus_size>`). The store knows the corpus
size when the study's units are documents of a corpus it holds: the size is then the
number of that corpus's published documents (those every reader sees; a pending import's
are not yet part of it).

The size is only known when it is sound: every unit the study mentions (returned by one
of its runs or labeled, :mod:`evalcore.store.unit_codes`) must be one of those documents.
A study whose runs return ids that are not in the corpus (a corpus not held in the store,
or held only in part), or whose unit is not the document, has no known size: outside
units stay unbounded. :func:`study_population_unchecked` is the one place that decides;
the store's observation reads (:mod:`evalcore.store.observations`) carry its size to
every evaluation of the study.
"""

from dataclasses import dataclass

import sqlite_utils

from evalcore.store.document_imports import published
from evalcore.store.studies import get_study


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
        """The note recording the corpus size used, or none when no size is known (outside
        units are then unbounded, as on observations without one)."""
        return [] if self.corpus_size is None else [self.note()]

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


def study_population_unchecked(db: sqlite_utils.Database, study_id: str) -> StudyPopulation:
    """The study's :class:`StudyPopulation` now (the caller authorised the read)."""
    study = get_study(db, study_id)
    documents = int(
        db.execute(
            f"SELECT count(*) FROM documents WHERE corpus_id = ? AND {published()}",
            [study.corpus_id],
        ).fetchone()[0]
    )
    outside = 0
    if documents and study.retrieval_unit == "document":
        outside = int(
            db.execute(
                "SELECT count(*) FROM study_units su WHERE su.study_id = ? AND NOT EXISTS ("
                "SELECT 1 FROM documents d WHERE d.corpus_id = ? AND d.doc_id = su.unit_id AND "
                f"{published('d')})",
                [study_id, study.corpus_id],
            ).fetchone()[0]
        )
    return StudyPopulation(
        corpus_id=study.corpus_id,
        retrieval_unit=study.retrieval_unit,
        documents=documents,
        outside=outside,
    )
