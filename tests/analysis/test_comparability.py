"""Run comparability: one rule (same corpus, protocol and cutoff) for reports and the Compare page."""

from report_builders import report_from

from evalcore.analysis.comparability import (
    Comparable,
    NotComparable,
    NotVerified,
    RunTerms,
    comparability,
    cutoff,
)
from evalcore.contract.evaluation_protocol import EvalProtocol

FP = "sha256:" + "a" * 64


def terms(name: str, *, fp: str | None = FP, protocol: EvalProtocol | None = None,
          k: int = 10) -> RunTerms:
    return RunTerms.of(name, report_from({"q1": 0.5}, k=k, protocol=protocol), fp)


def test_same_corpus_protocol_and_cutoff_is_comparable() -> None:
    assert comparability(terms("B"), terms("A")) == Comparable()
    # No fingerprint on either side: compared (the report warns it is unverified).
    assert comparability(terms("B", fp=None), terms("A", fp=None)) == Comparable()


def test_each_difference_is_a_reason_and_all_are_given() -> None:
    base = terms("A")
    corpus = comparability(terms("B", fp="sha256:" + "b" * 64), base)
    assert isinstance(corpus, NotComparable) and len(corpus.reasons) == 1
    assert "searched a different corpus" in str(corpus) and "A's sha256:aaaa" in str(corpus)
    protocol = comparability(terms("B", protocol=EvalProtocol(gain="exponential")), base)
    assert isinstance(protocol, NotComparable) and "'gain': 'exponential'" in str(protocol)
    depth = comparability(terms("B", k=5), base)
    assert str(depth) == "cutoff k=5 differs from the baseline 'A' (k=10), so it is not compared"
    everything = comparability(
        terms("B", fp=None, protocol=EvalProtocol(relevance_threshold=3), k=5), base
    )
    assert isinstance(everything, NotComparable) and len(everything.reasons) == 3
    assert str(everything) == "; ".join(everything.reasons)


def test_a_missing_fingerprint_on_either_side_is_not_verified_not_a_different_corpus() -> None:
    verdict = comparability(terms("B", fp=None), terms("A"), owner="the report's")
    assert isinstance(verdict, NotVerified)
    assert str(verdict) == (
        "the run records no corpus fingerprint while the report's is sha256:aaaaaaaaaaaaaaaa…: "
        "whether it searched the same corpus is not verified"
    )
    assert "different corpus" not in str(verdict)
    # The case: the baseline has no fingerprint, the run has one.
    baseline_unknown = comparability(terms("B"), terms("A", fp=None))
    assert isinstance(baseline_unknown, NotVerified)
    assert str(baseline_unknown).startswith("A's corpus fingerprint is not recorded (the run's is ")
    # Left out unless accepted; acceptance never overrides a real difference.
    assert not verdict.admitted() and verdict.admitted(accepted=True)
    refused = comparability(terms("B", fp="sha256:" + "b" * 64), terms("A"))
    assert not refused.admitted(accepted=True)
    assert Comparable().admitted()
    # Unknown corpus plus a real difference: not comparable, and both reasons are given.
    both = comparability(terms("B", fp=None, k=5), terms("A"))
    assert isinstance(both, NotComparable) and len(both.reasons) == 2
    assert "cutoff k=5" in str(both) and "is not verified" in str(both)


def test_mixed_cutoffs_are_a_cutoff_of_their_own() -> None:
    mixed = report_from({"q1": 0.5}, k=5).model_copy(
        update={"queries": [*report_from({"q1": 0.5}, k=5).queries,
                            *report_from({"q2": 0.5}, k=10).queries]}
    )
    assert cutoff(mixed) is None
    assert cutoff(report_from({"q1": 0.5}, k=3)) == 3
    verdict = comparability(RunTerms.of("B", mixed, FP), terms("A"))
    assert isinstance(verdict, NotComparable) and "cutoff k=mixed" in str(verdict)
