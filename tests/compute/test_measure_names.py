"""Measure names (contract section 10): parse, print back unchanged, refuse clearly."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalcore.contract.gains import MAX_GAIN
from evalcore.contract.measures import (
    DEFAULT_MEASURES,
    FAMILIES,
    Measure,
    UnknownMeasure,
    parse_measure,
)

CANONICAL = [
    "P@5",
    "P(rel=2)@5",
    "R@100",
    "nDCG@10",
    "RR@10",
    "AP@100",
    "Success@10",
    "Judged@10",
    "RBP(p=0.8)@10",
    "P",
    "nDCG",
]


@pytest.mark.parametrize("text", CANONICAL)
def test_canonical_names_print_back_unchanged(text):
    assert str(parse_measure(text)) == text


def test_fields_of_a_parsed_measure():
    assert parse_measure("P(rel=2)@5") == Measure("P", k=5, rel=2)
    assert parse_measure("RBP(p=0.5)@3") == Measure("RBP", k=3, p=0.5)
    assert parse_measure("nDCG") == Measure("nDCG")


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("MRR@10", "RR@10"),
        ("ndcg@10", "nDCG@10"),
        ("success@3", "Success@3"),
        (" P@5 ", "P@5"),
        ("RBP@10", "RBP(p=0.8)@10"),
        ("RBP(rel=2, p=0.5)@4", "RBP(p=0.5,rel=2)@4"),
    ],
)
def test_aliases_and_spacing_read_as_the_canonical_measure(text, canonical):
    assert str(parse_measure(text)) == canonical


def test_reciprocal_rank_mean_is_named_mrr():
    assert parse_measure("RR@10").aggregate_name == "MRR@10"
    assert parse_measure("P@10").aggregate_name == "P@10"


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("X@5", "no measure family 'X'"),
        ("P@0", "cutoff '0' is not a positive integer"),
        ("P@-1", "cutoff '-1' is not a positive integer"),
        ("P@5.5", "cutoff '5.5' is not a positive integer"),
        ("P@", "cutoff '' is not a positive integer"),
        ("", "it is not of the form"),
        ("P@5@6", "it is not of the form"),
        ("nDCG(rel=2)@10", "nDCG takes no parameters, not rel="),
        ("P(p=0.5)@3", "P takes rel=, not p="),
        ("P(rel=0)@3", f"rel must be an integer 1..{MAX_GAIN}, got 0"),
        ("P(rel=9)@3", f"rel must be an integer 1..{MAX_GAIN}, got 9"),
        ("P(rel=x)@3", "rel must be an integer"),
        ("P(rel)@3", "parameter 'rel' is not name=value"),
        ("P(rel=1,rel=2)@3", "given twice"),
        ("RBP(p=1)@3", "0 < p < 1"),
        ("RBP(p=0)@3", "0 < p < 1"),
        ("RBP(p=nan)@3", "0 < p < 1"),
        ("RBP(p=high)@3", "p must be a number"),
    ],
)
def test_unknown_or_malformed_names_say_what_is_wrong_and_list_the_known_forms(text, problem):
    with pytest.raises(UnknownMeasure) as caught:
        parse_measure(text)
    message = str(caught.value)
    assert problem in message
    assert repr(text) in message
    for form in ("P@k", "P(rel=r)@k", "nDCG@k", "RBP(p=0.8)@k", "Judged@k", "MRR@k"):
        assert form in message
    assert isinstance(caught.value, ValueError)


def test_a_measure_cannot_be_built_outside_the_catalogue():
    with pytest.raises(UnknownMeasure):
        Measure("MAP", 10)
    with pytest.raises(UnknownMeasure):
        Measure("P", 0)
    with pytest.raises(UnknownMeasure):
        Measure("nDCG", 10, rel=2)


def test_default_measures_are_the_section_7_set_at_each_observations_k():
    assert [str(m) for m in DEFAULT_MEASURES] == ["P", "R", "nDCG", "RR"]


@st.composite
def measures(draw):
    family = draw(st.sampled_from(sorted(FAMILIES)))
    k = draw(st.none() | st.integers(1, 10_000))
    rel = draw(st.none() | st.integers(1, MAX_GAIN)) if "rel" in FAMILIES[family] else None
    p = None
    if family == "RBP":
        p = draw(st.floats(min_value=1e-6, max_value=1 - 1e-6, allow_nan=False))
    return Measure(family, k, rel, p)


@settings(deadline=None, max_examples=300)
@given(measures())
def test_parse_of_str_is_the_measure(m):
    assert parse_measure(str(m)) == m
    assert str(parse_measure(str(m))) == str(m)


def test_numpy_integers_make_the_measure_the_same_python_integers_make():
    # Cutoffs and thresholds read from a DataFrame are numpy integers: they were refused as
    # "cutoff k must be a positive integer, got np.int64(5)".
    import numpy as np

    made = Measure("P", k=np.int64(5), rel=np.int8(2))
    assert made == parse_measure("P(rel=2)@5") and str(made) == "P(rel=2)@5"
    assert type(made.k) is int and type(made.rel) is int
    with pytest.raises(UnknownMeasure, match="cutoff k must be a positive integer"):
        Measure("P", k=np.bool_(True))
