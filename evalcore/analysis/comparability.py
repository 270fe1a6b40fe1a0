"""Run comparability: whether a run's numbers may be compared with the baseline's at all.

Three outcomes (:func:`comparability`):

* **comparable** — the run searched the same corpus (equal corpus
  fingerprints; when neither the run nor the baseline records one, the runs
  are compared and the report warns that this is unverified), was evaluated
  under the same protocol and was cut at the same depth k;
* **comparability not verified** (:class:`NotVerified`) — protocol and cutoff
  agree, but one side records no corpus fingerprint, so whether the corpus is
  the same is unknown. Unknown is not different: the run is not called a
  different corpus, but it enters no comparison unless the lead accepts it
  explicitly (:meth:`NotVerified.admitted`; reports record the acceptance);
* **not comparable** (:class:`NotComparable`) — a recorded fingerprint
  differs, or the protocol or cutoff differs. No acceptance overrides this.

A run that is not compared is still shown with its own numbers, but enters no
comparison: no deltas, no significance, no table marks.

The one home of this rule: reports (:func:`evalcore.report.build.build_report`)
and the Compare page both decide with :func:`comparability`, so the page never
compares runs a report refuses.
"""

from __future__ import annotations

from dataclasses import dataclass

from evalcore.contract.evaluation_protocol import EvalProtocol
from evalcore.contract.frozen import FrozenModel
from evalcore.contract.results import EvaluationReport


def cutoff(evaluation: EvaluationReport) -> int | None:
    """The run's k: the one cutoff all its queries share, else None ("mixed")."""
    ks = {q.k for q in evaluation.queries}
    return next(iter(ks)) if len(ks) == 1 else None


class RunTerms(FrozenModel):
    """What decides whether a run can be compared: its corpus, protocol and cutoff."""

    name: str
    corpus_fingerprint: str | None
    protocol: EvalProtocol
    #: None when the run's queries were cut at different depths.
    k: int | None

    @classmethod
    def of(
        cls, name: str, evaluation: EvaluationReport, corpus_fingerprint: str | None
    ) -> RunTerms:
        """The terms of an evaluated run."""
        return cls(name=name, corpus_fingerprint=corpus_fingerprint,
                   protocol=evaluation.protocol, k=cutoff(evaluation))


@dataclass(frozen=True)
class Comparable:
    """The run may be compared with the baseline."""

    def admitted(self, accepted: bool = False) -> bool:
        """Whether the run enters the comparison (always)."""
        return True


@dataclass(frozen=True)
class _Refusal:
    """A verdict that keeps the run out of the comparison, with every reason why."""

    reasons: tuple[str, ...]

    def __str__(self) -> str:
        return "; ".join(self.reasons)


@dataclass(frozen=True)
class NotVerified(_Refusal):
    """Whether the run searched the baseline's corpus is unknown, and why."""

    def admitted(self, accepted: bool = False) -> bool:
        """Whether the run enters the comparison: only when the lead ``accepted`` it."""
        return accepted


@dataclass(frozen=True)
class NotComparable(_Refusal):
    """The run may not be compared with the baseline, and every reason why."""

    def admitted(self, accepted: bool = False) -> bool:
        """Whether the run enters the comparison (never: acceptance does not override)."""
        return False


#: The outcome of :func:`comparability`.
Verdict = Comparable | NotVerified | NotComparable


def _short(fingerprint: str) -> str:
    return fingerprint if len(fingerprint) <= 23 else fingerprint[:23] + "…"


def _k(k: int | None) -> str:
    return str(k) if k is not None else "mixed"


def comparability(
    run: RunTerms, baseline: RunTerms, *, owner: str | None = None
) -> Verdict:
    """Whether ``run`` may be compared with ``baseline`` (see the module docstring).

    ``baseline`` holds the corpus fingerprint and protocol every compared run
    must share and the baseline run's cutoff. ``owner`` names whose corpus and
    protocol those are in the messages (a report passes ``"the report's"``;
    default: the baseline run's). A missing fingerprint on one side gives
    :class:`NotVerified` unless another difference makes the run
    :class:`NotComparable` (then the missing fingerprint is one of the reasons).
    """
    whose = owner if owner is not None else f"{baseline.name}'s"
    reasons = []
    unknown = None
    if (run.corpus_fingerprint is None) != (baseline.corpus_fingerprint is None):
        if run.corpus_fingerprint is None:
            unknown = (
                f"the run records no corpus fingerprint while {whose} is "
                f"{_short(baseline.corpus_fingerprint)}: whether it searched the same corpus "
                "is not verified"
            )
        else:
            unknown = (
                f"{whose} corpus fingerprint is not recorded (the run's is "
                f"{_short(run.corpus_fingerprint)}): whether it searched the same corpus "
                "is not verified"
            )
    elif run.corpus_fingerprint is not None and baseline.corpus_fingerprint is not None and (
        run.corpus_fingerprint != baseline.corpus_fingerprint
    ):
        reasons.append(
            f"corpus fingerprint {_short(run.corpus_fingerprint)} differs from {whose} "
            f"{_short(baseline.corpus_fingerprint)}: the run searched a different corpus, "
            "so it is not compared"
        )
    if run.protocol != baseline.protocol:
        reasons.append(
            f"evaluated under protocol {run.protocol.model_dump()} but {whose} "
            f"is {baseline.protocol.model_dump()}, so it is not compared"
        )
    if run.k != baseline.k:
        reasons.append(
            f"cutoff k={_k(run.k)} differs from the baseline {baseline.name!r} "
            f"(k={_k(baseline.k)}), so it is not compared"
        )
    if reasons:
        return NotComparable(tuple(reasons + ([unknown] if unknown else [])))
    return NotVerified((unknown,)) if unknown else Comparable()
