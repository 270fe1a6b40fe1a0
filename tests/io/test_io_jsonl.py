"""Observation JSONL reader: every schema error of contract section 2, all at once."""

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from observation_strategies import write_observations

from evalcore.contract.observation import Label, Observation
from evalcore.io.errors import MAX_REPORTED, InputError, InputErrors
from evalcore.io.observations_jsonl import parse_observations, read_observations
from evalcore.io.text_lines import decode_source


def obs(qid="q1", **over) -> dict:
    base = {
        "query_id": qid,
        "k": 3,
        "returned_ids": ["A", "X", "B"],
        "labels": [{"id": "A", "gain": 2}, {"id": "X", "gain": 0}],
        "population_complete": True,
    }
    base.update(over)
    return base


def write_lines(tmp_path: Path, lines: list[str], name="obs.jsonl") -> Path:
    p = tmp_path / name
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return p


def errors_of(path: Path) -> InputErrors:
    with pytest.raises(InputErrors) as info:
        read_observations(path)
    return info.value


def test_reads_valid_file_in_order(tmp_path):
    p = write_lines(tmp_path, [json.dumps(obs("q2")), "", json.dumps(obs("q1"))])
    got = read_observations(p)
    assert [o.query_id for o in got] == ["q2", "q1"]
    assert got[0].labels[0] == Label(id="A", gain=2)


@pytest.mark.parametrize("bad", [True, 2.5, "3", 5, -1])
def test_every_non_integer_or_out_of_range_gain_is_rejected(tmp_path, bad):
    labels = [{"id": "A", "gain": 1}, {"id": "B", "gain": 1}, {"id": "C", "gain": bad}]
    p = write_lines(tmp_path, [json.dumps(obs(labels=labels))] * 1)
    err = errors_of(p)
    assert len(err.errors) == 1
    e = err.errors[0]
    assert (e.line, e.field) == (1, "labels[2].gain")
    assert e.message == f"must be an integer 0..4, got {json.dumps(bad)}"
    assert str(e) == (
        f"obs.jsonl:1: labels[2].gain: must be an integer 0..4, got {json.dumps(bad)} "
        '(true, 2.5, "3", 5, -1 are rejected)'
    ).replace("obs.jsonl", str(p))


def test_all_errors_reported_together_with_lines(tmp_path):
    lines = [
        json.dumps(obs("q1")),
        "{not json",
        json.dumps({k: v for k, v in obs("q3").items() if k != "population_complete"}),
        json.dumps(obs("q4", k=0)),
        json.dumps(obs("q5", scores=[1.0, 2.0])),
        json.dumps(obs("q1")),
        "[1, 2]",
        json.dumps(obs("q8", population_compelte=True)),
    ]
    err = errors_of(write_lines(tmp_path, lines))
    got = {(e.line, e.field): e.message for e in err.errors}
    assert got[(2, None)].startswith("not valid JSON")
    assert got[(3, "population_complete")] == "missing required field 'population_complete'"
    assert got[(4, "k")] == "must be an integer >= 1, got 0"
    assert "scores has 2 values but returned_ids has 3" in got[(5, "scores")]
    assert got[(6, "query_id")] == 'duplicate query_id "q1", first on line 1'
    assert got[(7, None)] == "must be a JSON object, got an array"
    assert got[(8, "population_compelte")] == (
        "unknown field 'population_compelte'; did you mean 'population_complete'?"
    )
    assert err.total == 7
    text = str(err)
    assert text.count("\n") == 6 and "obs.jsonl:6: query_id:" in text


def test_label_extra_field_and_missing_gain(tmp_path):
    p = write_lines(tmp_path, [json.dumps(obs(labels=[{"id": "A", "gian": 2}]))])
    got = {e.field: e.message for e in errors_of(p).errors}
    assert got["labels[0].gain"] == "missing required field 'gain'"
    assert got["labels[0].gian"] == "unknown field 'gian'; did you mean 'gain'?"


def test_duplicate_query_id_is_reported_even_when_first_line_is_invalid(tmp_path):
    p = write_lines(tmp_path, [json.dumps(obs("q1", k=0)), json.dumps(obs("q1"))])
    msgs = [str(e) for e in errors_of(p).errors]
    assert any("first on line 1" in m for m in msgs)


def test_repeated_json_key_and_nan_are_errors(tmp_path):
    line = json.dumps(obs()).replace('"k": 3', '"k": 3, "k": 5')
    nan = json.dumps(obs("q2", scores=[1.0, 2.0, 3.0])).replace("3.0", "NaN")
    got = {e.line: str(e) for e in errors_of(write_lines(tmp_path, [line, nan])).errors}
    assert "field 'k' appears twice" in got[1]
    assert "NaN is not a JSON value" in got[2]


def test_empty_file_and_blank_only_file(tmp_path):
    for content in ["", "\n \n\t\n"]:
        p = tmp_path / "empty.jsonl"
        p.write_text(content)
        err = errors_of(p)
        assert err.errors[0].message == "no observations" and err.errors[0].line is None


def test_missing_file_is_an_input_error(tmp_path):
    err = errors_of(tmp_path / "nope.jsonl")
    assert err.errors[0].message == "file not found"


def test_bom_crlf_and_invalid_utf8_line(tmp_path):
    p = tmp_path / "o.jsonl"
    data = (
        b"\xef\xbb\xbf"
        + json.dumps(obs("q1")).encode()
        + b"\r\n"
        + b'{"query_id": "\xff"}\r\n'
        + json.dumps(obs("q3")).encode()
        + b"\r"
        + json.dumps(obs("q3")).encode()
        + b"\n"
    )
    p.write_bytes(data)
    err = errors_of(p)
    got = {e.line: e.message for e in err.errors}
    assert got[2].startswith("not valid UTF-8 (byte 0xff")
    assert got[4] == 'duplicate query_id "q3", first on line 3'
    assert err.total == 2


def test_error_cap_counts_everything(tmp_path):
    lines = ["{bad"] * (MAX_REPORTED + 50)
    err = errors_of(write_lines(tmp_path, lines))
    assert len(err.errors) == MAX_REPORTED and err.total == MAX_REPORTED + 50
    assert str(err).endswith(f"... and 50 more errors ({MAX_REPORTED + 50} in total)")


def test_whole_file_error_renders_without_line():
    assert str(InputError(file="f.jsonl", message="no observations")) == "f.jsonl: no observations"


def test_parse_from_bytes_upload():
    src = decode_source(json.dumps(obs()).encode(), "upload.jsonl")
    assert parse_observations(src)[0].query_id == "q1"


_ids = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=8)


@st.composite
def observations(draw) -> list[Observation]:
    qids = draw(st.lists(_ids, min_size=1, max_size=5, unique=True))
    out = []
    for q in qids:
        returned = draw(st.lists(_ids, max_size=6))
        out.append(
            Observation(
                query_id=q,
                k=draw(st.integers(1, 10)),
                returned_ids=returned,
                scores=draw(
                    st.none()
                    | st.lists(
                        st.floats(allow_nan=False, allow_infinity=False),
                        min_size=len(returned),
                        max_size=len(returned),
                    )
                ),
                labels=[
                    Label(id=i, gain=g)
                    for i, g in draw(st.lists(st.tuples(_ids, st.integers(0, 4)), max_size=6))
                ],
                population_complete=draw(st.booleans()),
                scan_complete=draw(st.booleans()),
                unit_of=draw(st.none() | st.dictionaries(_ids, _ids, max_size=3)),
                reference_version=draw(st.none() | _ids),
            )
        )
    return out


@settings(max_examples=60, deadline=None)
@given(observations())
def test_write_then_read_round_trips(tmp_path_factory, items):
    p = tmp_path_factory.mktemp("rt") / "o.jsonl"
    assert write_observations(p, items) == len(items)
    assert read_observations(p) == items


def test_labels_jsonl_rejects_a_repeated_key_instead_of_keeping_the_last() -> None:
    from evalcore.io.label_rows import parse_labels

    text = (
        '{"query_id": "q1", "unit_id": "A", "gain": 3, "gain": 0}\n'
        '{"query_id": "q1", "unit_id": "B", "gain": NaN}\n'
    )
    with pytest.raises(InputErrors) as caught:
        parse_labels(decode_source(text.encode(), "labels.jsonl"), "jsonl", default_annotator="a")
    got = {(e.line, e.field): e.message for e in caught.value.errors}
    assert got[(1, "gain")] == "field 'gain' appears twice in one object"
    assert got[(2, None)] == "not valid JSON: NaN is not a JSON value"


def test_conflict_labels_read_and_write_back(tmp_path):
    from evalcore.io.observations_jsonl import read_observations

    line = obs(labels=[{"id": "A", "gain": 2}, {"id": "B", "conflict": [2, 0, 2]}])
    (o,) = read_observations(write_lines(tmp_path, [json.dumps(line)]))
    assert o.labels[1].conflict == (0, 2) and o.labels[1].gain is None
    out = tmp_path / "again.jsonl"
    write_observations(out, [o])
    assert '{"id":"B","conflict":[0,2]}' in out.read_text()
    assert read_observations(out) == [o]


def test_conflict_label_schema_errors_name_line_and_field(tmp_path):
    lines = [
        json.dumps(obs(query_id="a", labels=[{"id": "A", "gain": 1, "conflict": [0, 2]}])),
        json.dumps(obs(query_id="b", labels=[{"id": "A", "conflict": [2, 2]}])),
        json.dumps(obs(query_id="c", labels=[{"id": "A", "conflict": [0, 5]}])),
        json.dumps(obs(query_id="d", labels=[{"id": "A", "conflict": 2}])),
        json.dumps(obs(query_id="e", labels=[{"id": "A"}])),
    ]
    got = {(e.line, e.field): e.message for e in errors_of(write_lines(tmp_path, lines)).errors}
    assert "not both" in got[(1, "labels[0]")]
    assert "at least two distinct gains" in got[(2, "labels[0].conflict")]
    assert got[(3, "labels[0].conflict[1]")] == "must be an integer 0..4, got 5"
    assert "at least two distinct gains 0..4" in got[(4, "labels[0].conflict")]
    assert got[(5, "labels[0].gain")] == "missing required field 'gain'"
