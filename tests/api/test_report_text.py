"""The one JSON writer (evalcore.api.report_text) against the report models' JSON: the same
bytes, on random files, protocols and measures, valid or not; pydantic's way of writing
numbers; and the plain protocol's fields and printed form against the model's."""

import dataclasses
import tempfile
from pathlib import Path
from unittest.mock import patch

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from evalcore.api import report_text
from evalcore.api.inputs import trec_input
from evalcore.api.report_text import trec_files_json
from evalcore.api.result import report_json
from evalcore.cli import main
from evalcore.cli.evaluate import TrecFiles
from evalcore.compute.batch import ObservationBatch
from evalcore.compute.evaluate import compute, evaluate_batch, packing_depth
from evalcore.contract.evaluation_protocol import EvalProtocol
from evalcore.contract.measures import parse_measure
from evalcore.contract.protocol_choices import ProtocolChoices
from evalcore.contract.results import Diagnostics
from evalcore.io.errors import InputErrors
from tests.io.test_trec_reader import trec_files, write
from tests.observation_strategies import protocols_with_trec_eval, query_sets

MEASURE_NAMES = st.sampled_from(
    ["P@3", "nDCG@5", "RBP(p=0.8)@4", "RR@2", "AP@6", "P(rel=2)@3", "Judged@2", "Success@3",
     "R@4", "R@9"]
)


def model_json(qrels, run, k, choices, measures=None, **options):
    """The report's JSON through the models (the general path of ``evalcore evaluate``)."""
    protocol = EvalProtocol.of(choices)
    source = trec_input(
        qrels, run, k, protocol=protocol, min_depth=packing_depth(measures), **options
    )
    return report_json(
        evaluate_batch(source.batch, protocol, measures=measures, diagnostics=source.diagnostics)
    )


def both(qrels, run, k, choices, measures=None, **options):
    fast = trec_files_json(qrels, run, k, protocol=choices, measures=measures, **options)
    return fast, model_json(qrels, run, k, choices, measures, **options)


MEASURES = st.sampled_from(
    [
        None,
        ("P@3", "nDCG@5"),
        ("RBP(p=0.8)@4", "RR@2"),
        ("AP@6", "P(rel=2)@3", "Judged@2", "Success@3", "R@4"),
    ]
)
CHOICES = st.builds(
    ProtocolChoices,
    relevance_threshold=st.integers(1, 4),
    gain=st.sampled_from(["linear", "exponential"]),
    unjudged_as_nonrelevant=st.booleans(),
    trec_eval=st.booleans(),
    populations_declared_complete=st.booleans(),
)


@settings(max_examples=150, deadline=None)
@given(trec_files(), CHOICES, MEASURES, st.integers(1, 6), st.booleans(), st.booleans())
def test_the_array_json_is_the_models_json(files, choices, names, k, complete, all_queries):
    measures = None if names is None else tuple(parse_measure(n) for n in names)
    options = dict(complete=complete, all_queries=all_queries and choices.trec_eval)
    with tempfile.TemporaryDirectory() as tmp:
        qrels, run = write(Path(tmp), "qrels.txt", files[0]), write(Path(tmp), "run.txt", files[1])
        try:
            slow = model_json(qrels, run, k, choices, measures, **options)
        except InputErrors as exc:
            with pytest.raises(InputErrors) as fast:
                trec_files_json(qrels, run, k, protocol=choices, measures=measures, **options)
            assert str(fast.value) == str(exc)
            return
        fast = trec_files_json(qrels, run, k, protocol=choices, measures=measures, **options)
    assert fast == slow


def plain_files(folder: Path, queries: int = 30, depth: int = 12) -> tuple[Path, Path]:
    qrels = "".join(
        f"q{q} 0 d{q}x{r} {(q + r) % 3}\n" for q in range(queries) for r in range(depth + 2)
    )
    run = "".join(
        f"q{q} Q0 d{q}x{r} {r} {depth - r}.5 tag\n" for q in range(queries) for r in range(depth)
    )
    return write(folder, "qrels.txt", qrels), write(folder, "run.txt", run)


@pytest.mark.parametrize("measures", [None, ("RBP(p=0.8)@10", "AP@10", "P(rel=2)@5")])
def test_every_value_available_is_written_from_the_arrays(tmp_path, measures):
    qrels, run = plain_files(tmp_path)
    ms = None if measures is None else tuple(parse_measure(n) for n in measures)
    choices = ProtocolChoices(unjudged_as_nonrelevant=True, populations_declared_complete=True)
    fast, slow = both(qrels, run, 10, choices, ms, complete=True)
    assert fast == slow


def test_unavailable_values_are_written_from_the_arrays_too(tmp_path):
    """The honest default (unjudged units unknown): reasons, blocking IDs and bounds written
    from the arrays, byte for byte the models' JSON."""
    qrels, run = plain_files(tmp_path)
    qrels.write_text("".join(qrels.read_text().splitlines(True)[::2]))  # unjudged units
    fast, slow = both(qrels, run, 10, ProtocolChoices(), complete=False)
    assert '"unavailable"' in slow and '"lower"' in slow and '"blocking_ids":["d0x' in slow
    assert fast == slow


def test_values_under_1e_4_are_written_as_pydantic_writes_them(tmp_path):
    """pydantic writes 5e-05 as 0.00005 (one query's reciprocal rank; the mean is written
    alike)."""
    depth = 20_000
    qrels = write(tmp_path, "qrels.txt", f"q1 0 d{depth} 1\nq2 0 e1 1\n")
    run = write(
        tmp_path,
        "run.txt",
        "".join(f"q1 Q0 d{r} {r} {depth - r} t\n" for r in range(1, depth + 1))
        + "q2 Q0 e1 1 1 t\n",
    )
    choices = ProtocolChoices(unjudged_as_nonrelevant=True)
    fast, slow = both(qrels, run, depth, choices, (parse_measure(f"RR@{depth}"),), complete=True)
    assert "0.00005" in slow and fast == slow


@pytest.mark.parametrize(
    "x", [5e-05, -1.25e-05, 1e-05, 1.5e-07, 1e-300, 0.0001, 0.1, 2.5, 1e16, 1.5e22, -0.0, 3.0]
)
def test_numbers_are_written_as_pydantic_writes_them(x):
    class Number(BaseModel):
        x: float

    assert f'{{"x":{report_text.number(x)}}}' == Number(x=x).model_dump_json()


def test_the_command_prints_the_writers_json(tmp_path):
    qrels, run = plain_files(tmp_path)
    args = ["evaluate", "--qrels", str(qrels), "--run", str(run), "--k", "10", "--complete"]
    taken = []
    real = TrecFiles.report_json

    def spy(self, choices, measures):
        taken.append(real(self, choices, measures))
        return taken[-1]

    with patch.object(TrecFiles, "report_json", spy):
        out = CliRunner().invoke(main, args)
    assert out.exit_code == 0
    assert out.output == taken[0] + "\n"
    assert taken[0] == model_json(qrels, run, 10, ProtocolChoices(
        populations_declared_complete=True), complete=True)


def test_protocol_choices_are_the_models_fields_and_print_alike():
    fields = {f.name: f.default for f in dataclasses.fields(ProtocolChoices)}
    model = {name: f.default for name, f in EvalProtocol.model_fields.items()}
    assert fields == model
    for bits in range(32):
        choices = ProtocolChoices(
            relevance_threshold=1 + bits % 4,
            gain="exponential" if bits & 1 else "linear",
            unjudged_as_nonrelevant=bool(bits & 2),
            trec_eval=bool(bits & 4),
            populations_declared_complete=bool(bits & 8),
        )
        protocol = EvalProtocol.of(choices)
        assert protocol.unjudged_are_nonrelevant == choices.unjudged_are_nonrelevant
        exclude = None if protocol.unjudged_as_nonrelevant else {"unjudged_as_nonrelevant"}
        assert protocol.model_dump(exclude=exclude) == choices.reported()


def test_query_ids_are_escaped_as_pydantic_escapes_them(tmp_path):
    ids = ['q"1', "q\\2", "qé3", "q\x014", "q\x7f5", "q/6", "q\u00e97"]
    qrels = write(tmp_path, "qrels.txt", "".join(f"{q} 0 d{i} 1\n" for i, q in enumerate(ids)))
    run = write(
        tmp_path,
        "run.txt",
        "".join(f"{q} Q0 d{i} 1 1.5 t\n{q} Q0 x 2 1 t\n" for i, q in enumerate(ids)),
    )
    choices = ProtocolChoices(unjudged_as_nonrelevant=True)
    fast, slow = both(qrels, run, 2, choices, complete=True)
    assert fast == slow


@settings(max_examples=150, deadline=None)
@given(
    query_sets(conflicts=True),
    protocols_with_trec_eval,
    st.none() | st.lists(MEASURE_NAMES, min_size=1, max_size=4, unique=True),
)
def test_observations_with_conflicts_and_invalid_queries_are_written_as_the_models(
    obs_list, protocol, names
):
    """Every case of a report (label conflicts, RBP residuals, invalid observations, returned
    duplicates, unavailable values with and without bounds): the writer's bytes are the
    models'."""
    measures = None if names is None else tuple(parse_measure(n) for n in names)
    diagnostics = Diagnostics(tied_score_pairs=2, notes=["a note", "é"])
    batch = ObservationBatch.from_observations(
        obs_list, protocol, min_depth=packing_depth(measures)
    )
    result = compute(batch, protocol, measures)
    assert report_text.report_text(result, 2, ["a note", "é"]) == report_json(
        result.to_report(diagnostics)
    )
