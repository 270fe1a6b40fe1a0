"""The store's marks name exactly the study's removed queries, whatever their ids hold."""

from evalcore.store.labels import record_label
from evalcore.store.marks import store_marks
from evalcore.store.removed_queries import remove_query, removed_query_ids
from evalcore.store.study_handle import open_study
from tests.store_fixtures import new_store

#: ids a separator-joined read would split or merge (unit separator, comma, quote, newline)
ODD_IDS = ["q\x1fpart", "q,1", 'q"2', "q\n3"]


def test_the_marks_name_every_removed_query_whole(store_target) -> None:
    db = new_store(store_target)
    for query_id in [*ODD_IDS, "kept"]:
        record_label(db, study_id="s", query_id=query_id, unit_id="d1", gain=1,
                     annotator="alice")
    for query_id in ODD_IDS:
        remove_query(db, study_id="s", query_id=query_id, actor=None)
    study = open_study(db, "s", None)
    assert store_marks(study).removed == removed_query_ids(study) == frozenset(ODD_IDS)
