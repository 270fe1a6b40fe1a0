"""The lexical protocol model and protocol.json loading."""

import json
from datetime import UTC, datetime

import pytest
from pydantic import ValidationError

from evalcore.io.errors import InputErrors
from evalcore.retrieval.lexical_protocol import LexicalProtocol, load_protocol, parse_protocol

BASE = {"method": "lexical", "top_k": 10, "cutoff": "2026-06-30T00:00:00Z", "organisations": ["a"]}


def with_(**changes):
    data = dict(BASE)
    data.update(changes)
    return data


def test_valid_protocol_defaults_and_normalisation():
    p = LexicalProtocol.model_validate(
        with_(cutoff="2026-06-30T02:00:00+02:00", organisations=["b", "a"])
    )
    assert p.cutoff == datetime(2026, 6, 30, tzinfo=UTC)
    assert p.organisations == ["a", "b"]
    assert p.tie_rule == "doc_id_descending"  # trec_eval's rule, the product's one rule
    old = LexicalProtocol.model_validate(with_(tie_rule="doc_id_ascending"))
    assert old.tie_rule == "doc_id_ascending"  # a protocol pinned under the old rule still loads
    assert p.tokenizer == "porter unicode61"
    assert p.to_json_dict()["cutoff"] == "2026-06-30T00:00:00Z"
    assert LexicalProtocol.model_validate_json(p.model_dump_json()) == p


@pytest.mark.parametrize("method", ["dense", "LEXICAL", "bm25", ""])
def test_method_other_than_lexical_is_rejected_with_a_clear_message(method):
    with pytest.raises(ValidationError) as info:
        LexicalProtocol.model_validate(with_(method=method))
    assert '"lexical" (SQLite FTS5 BM25) is the only retrieval method' in str(info.value)


@pytest.mark.parametrize("top_k", [1, 1000])
def test_top_k_bounds_accepted(top_k):
    assert LexicalProtocol.model_validate(with_(top_k=top_k)).top_k == top_k


@pytest.mark.parametrize("top_k", [0, -1, 1001, 2.5, "10", True])
def test_top_k_out_of_bounds_or_not_integer_rejected(top_k):
    with pytest.raises(ValidationError):
        LexicalProtocol.model_validate(with_(top_k=top_k))


def test_cutoff_needs_a_time_zone():
    with pytest.raises(ValidationError, match="no time zone"):
        LexicalProtocol.model_validate(with_(cutoff="2026-06-30T00:00:00"))


@pytest.mark.parametrize("orgs", [[], ["a", "a"], [""], "a"])
def test_organisations_must_be_a_non_empty_list_of_distinct_ids(orgs):
    with pytest.raises(ValidationError):
        LexicalProtocol.model_validate(with_(organisations=orgs))


def test_weights_validated():
    p = LexicalProtocol.model_validate(with_(weights={"title": 2, "text": 0.5}))
    assert (p.weights.title, p.weights.text) == (2, 0.5)
    for bad in ({"title": 0, "text": 0}, {"title": -1}, {"body": 1}):
        with pytest.raises(ValidationError):
            LexicalProtocol.model_validate(with_(weights=bad))


def test_unknown_field_and_bad_fingerprint_rejected():
    with pytest.raises(ValidationError):
        LexicalProtocol.model_validate(with_(topk=5))
    with pytest.raises(ValidationError):
        LexicalProtocol.model_validate(with_(corpus_fingerprint="md5:abc"))
    with pytest.raises(ValidationError):
        LexicalProtocol.model_validate(with_(tie_rule="random"))


def test_load_protocol_reports_every_error_with_file_line_and_field(tmp_path):
    path = tmp_path / "protocol.json"
    path.write_text(
        '{\n  "method": "dense",\n  "top_k": 5000,\n  "cutoff": "2026-06-30T00:00:00Z",\n'
        '  "organisations": ["a"],\n  "topk": 3\n}\n'
    )
    with pytest.raises(InputErrors) as info:
        load_protocol(path)
    text = str(info.value)
    assert info.value.total == 3
    assert f"{path}:2: method:" in text and "only retrieval method" in text
    assert f"{path}:3: top_k:" in text
    assert f"{path}:6: topk: unknown field 'topk'; did you mean 'top_k'?" in text


def test_load_protocol_invalid_json_names_the_line(tmp_path):
    path = tmp_path / "protocol.json"
    path.write_text('{\n  "method": "lexical",\n  "top_k": 5,,\n}')
    with pytest.raises(InputErrors) as info:
        load_protocol(path)
    assert f"{path}:3: not valid JSON" in str(info.value)


def test_load_protocol_missing_file_and_non_object(tmp_path):
    with pytest.raises(InputErrors, match="cannot read the protocol file"):
        load_protocol(tmp_path / "missing.json")
    path = tmp_path / "list.json"
    path.write_text(json.dumps([BASE]))
    with pytest.raises(InputErrors, match="must be a JSON object"):
        load_protocol(path)


def test_load_protocol_round_trip(tmp_path):
    path = tmp_path / "protocol.json"
    path.write_text(json.dumps(BASE))
    assert load_protocol(path) == LexicalProtocol.model_validate(BASE)
    assert parse_protocol(BASE) == LexicalProtocol.model_validate(BASE)
    with pytest.raises(InputErrors, match="missing required field 'top_k'"):
        parse_protocol({k: v for k, v in BASE.items() if k != "top_k"}, source="api")
