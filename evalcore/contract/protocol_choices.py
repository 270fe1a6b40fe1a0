"""The evaluation protocol's choices as plain values, without pydantic.

:class:`ProtocolChoices` has the fields, defaults and rules of
:class:`~evalcore.contract.evaluation_protocol.EvalProtocol` (a test checks that they
agree) and nothing else: no validation. It is for the command line's fast path
(``evalcore evaluate`` from TREC files to JSON, :mod:`evalcore.api.report_text`),
which would otherwise spend a third of its start-up importing pydantic; its
options are checked by click. Everywhere else the model is the contract. The
metric computer reads either one: the fields and :attr:`unjudged_are_nonrelevant`
(``EvalProtocol.of(choices)`` is the model of the same choices).
The rules written here are the model's too: which switches are printed only when on.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal

GainMode = Literal["linear", "exponential"]
#: Switches a protocol prints only when on, so outputs without them are unchanged.
PRINTED_WHEN_ON = ("trec_eval", "populations_declared_complete")
#: A report's protocol also prints this compatibility policy only when on (``report_json``).
REPORTED_WHEN_ON = "unjudged_as_nonrelevant"


def unjudged_are_nonrelevant(unjudged_as_nonrelevant: bool, trec_eval: bool) -> bool:
    """Whether unlabeled returned units count as gain 0 (either compatibility switch)."""
    return unjudged_as_nonrelevant or trec_eval


@dataclass(frozen=True, slots=True)
class ProtocolChoices:
    """How labels become metric values (see :class:`EvalProtocol`), as plain values."""

    relevance_threshold: int = 1
    gain: GainMode = "linear"
    unjudged_as_nonrelevant: bool = False
    trec_eval: bool = False
    populations_declared_complete: bool = False

    @property
    def unjudged_are_nonrelevant(self) -> bool:
        return unjudged_are_nonrelevant(self.unjudged_as_nonrelevant, self.trec_eval)

    def reported(self) -> dict[str, Any]:
        """The ``protocol`` object of a report's JSON (``report_json`` of the model's)."""
        out = asdict(self)
        for switch in (*PRINTED_WHEN_ON, REPORTED_WHEN_ON):
            if not out[switch]:
                del out[switch]
        return out
