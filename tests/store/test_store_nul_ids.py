"""An id with a NUL character is refused at the store's Python API, on both engines.

PostgreSQL cannot store NUL in text; SQLite can. The file readers refuse it with
``file:line: field``; the library's own entry points (a label, a study, a query)
refuse it too, with a message naming the field, so both engines hold the same
data and a PostgreSQL driver error never reaches the caller.
"""

import pytest
from pydantic import ValidationError

from evalcore.store.labels import record_label
from evalcore.store.studies import QueryIn, StudyIn
from evalcore.store.study_setup import add_queries, create_study
from tests.store_fixtures import new_store


@pytest.mark.parametrize("field", ["query_id", "unit_id"])
def test_a_label_on_an_id_with_nul_is_refused_and_nothing_is_written(store_target, field):
    db = new_store(store_target)
    label = {"study_id": "s", "query_id": "q1", "unit_id": "d1", "gain": 2, "annotator": "a"}
    label[field] = "d\x001"
    with pytest.raises(ValueError, match=rf"{field}: .*NUL character"):
        record_label(db, **label)
    assert db.execute("SELECT COUNT(*) FROM label_events").fetchone()[0] == 0


def test_a_study_or_query_id_with_nul_is_refused(store_target):
    db = new_store(store_target)
    with pytest.raises(ValidationError, match="NUL character"):
        create_study(db, StudyIn(study_id="t\x00", corpus_id="c"))
    with pytest.raises(ValidationError, match="NUL character"):
        add_queries(db, "s", [QueryIn(query_id="q\x00", text="text")])
    assert db.execute("SELECT COUNT(*) FROM queries").fetchone()[0] == 0
    assert db.execute("SELECT COUNT(*) FROM studies").fetchone()[0] == 1
