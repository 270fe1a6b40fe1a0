"""A run's protocol summarised in one line."""

from evalcore.report.protocol_line import protocol_summary


def test_lexical_protocol_summary_leaves_out_fingerprint_and_execution() -> None:
    protocol = {
        "method": "lexical", "top_k": 8, "cutoff": "2026-06-30T00:00:00Z",
        "organisations": ["acme", "globex"], "weights": {"title": 4.0, "text": 1.0},
        "corpus_fingerprint": "sha256:" + "0" * 64, "execution": {"engine": "x"},
        "pinned_protocol": "p1",
    }
    assert protocol_summary(protocol) == (
        "lexical · top k 8 · weights text 1, title 4 · cutoff 2026-06-30 · orgs acme, globex "
        "· pinned protocol p1"
    )


def test_unknown_protocols_show_their_scalar_keys() -> None:
    assert protocol_summary({"system": "bm25+rm3", "depth": 1000, "notes": ["x"]}) == (
        "depth=1000 · system=bm25+rm3"
    )
    assert protocol_summary({}) == ""
