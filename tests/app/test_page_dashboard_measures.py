"""The dashboard page shows the study's measures, Judged@k beside them, and intervals."""

from evalcore.store.labels import record_label
from evalcore.store.study_measures import set_study_measures

PAGE = "views/dashboard.py"


def _texts(at) -> str:
    """The page's text as read: markdown escapes and badge markup gone."""
    text = "\n".join([m.value for m in at.markdown] + [c.value for c in at.caption])
    return text.replace("\\", "").replace(":orange-badge[unavailable]", "unavailable")


def _label(db) -> None:
    for query_id, unit_id, gain in (("q1", "d1", 2), ("q1", "d2", 0), ("q2", "d5", 1),
                                    ("q2", "d6", 0)):
        record_label(db, study_id="s1", query_id=query_id, unit_id=unit_id, gain=gain,
                     annotator="ann")


def test_cards_show_judged_and_the_interval_beside_unavailable(small_store, new_app) -> None:
    _, db = small_store
    _label(db)
    at = new_app(page=PAGE)
    text = _texts(at)
    # r1: q1 has d3 unlabeled (P@3 of q1 in [1/3, 2/3]), q2 is 1/3: the mean lies in [0.33, 0.5]
    assert "unavailable · 0.33 to 0.50, 1 unlabeled" in text
    # no query is declared complete: recall and nDCG are bounded over the open populations
    # (section 12). The store holds the 7-document corpus, so at most its unlabeled
    # documents may be relevant elsewhere: q1 at worst 1 / (1 + 4), q2 1 / (1 + 5), the
    # mean 0.183 (printed rounded down), up to 1
    assert "**R@3**\nunavailable · 0.18 to 1.00, 1 unlabeled" in text
    assert "population incomplete on 2 queries" not in text
    assert "**Judged@3**" in text and "### 0.5000" in text
    for name in ("**P@3**", "**R@3**", "**nDCG@3**", "**MRR@3**"):
        assert name in text
    chart = at.selectbox(key="rl_dash_metric")
    assert chart.options == ["P@3", "R@3", "nDCG@3", "RR@3", "Judged@3"]


def test_the_leads_choice_is_what_the_cards_show(small_store, new_app) -> None:
    _, db = small_store
    _label(db)
    set_study_measures(db, study_id="s1", measures=["P@1", "Success@2", "R@9"], actor=None)
    at = new_app(page=PAGE)
    text = _texts(at)
    for name in ("**P@1**", "**Success@2**", "**R@9**", "**Judged@1**", "**Judged@2**",
                 "**Judged@9**"):
        assert name in text, name
    assert "**nDCG@3**" not in text
    assert "the run was stored to depth 3; R@9 needs 9" in text
    assert at.selectbox(key="rl_dash_metric").options[:2] == ["P@1", "Success@2"]
    at.selectbox(key="rl_dash_metric").set_value("Success@2").run()
    assert not at.exception
