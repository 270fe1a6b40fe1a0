"""Tied-pair counting, the one home both the TREC reader and the store use."""

from evalcore.io.ties import tied_score_pairs


def test_runs_of_equal_scores_within_a_ranking_hold_s_choose_2_pairs():
    assert tied_score_pairs([[3.0, 2.0, 2.0, 2.0, 1.0, 1.0]]) == 3 + 1


def test_equal_scores_in_different_rankings_never_tie():
    assert tied_score_pairs([[1.0, 1.0], [1.0], [1.0, 0.5]]) == 1


def test_rankings_without_scores_are_skipped():
    assert tied_score_pairs([None, [], [2.0, None, None], [5.0, 5.0]]) == 1
    assert tied_score_pairs([]) == 0
