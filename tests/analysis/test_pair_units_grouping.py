"""``pair_units._group_units``: positions grouped by (query, unit id), whatever the hashes."""

import random

import numpy as np
import pytest

import evalcore.analysis.pair_units as pair_units


def _expected(flat: list[str], query: np.ndarray) -> set[frozenset[int]]:
    groups: dict[tuple[int, str], set[int]] = {}
    for i, (q, unit) in enumerate(zip(query.tolist(), flat, strict=True)):
        groups.setdefault((q, unit), set()).add(i)
    return {frozenset(g) for g in groups.values()}


def _check(flat: list[str], query: np.ndarray) -> None:
    group, rep, group_query = pair_units._group_units(flat, query)
    found: dict[int, set[int]] = {}
    for i, g in enumerate(group.tolist()):
        found.setdefault(g, set()).add(i)
    assert {frozenset(g) for g in found.values()} == _expected(flat, query)
    assert all(flat[int(rep[g])] == flat[i] for i, g in enumerate(group.tolist()))
    assert group_query.tolist() == sorted(group_query.tolist())
    assert [int(query[rep[g]]) for g in range(rep.size)] == group_query.tolist()


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_units_of_two_runs_are_grouped_per_query(seed: int) -> None:
    rng = random.Random(seed)
    flat, queries = [], []
    for _ in range(2):  # two runs, each in query order
        for q in range(50):
            for unit in rng.sample(range(30), rng.randrange(0, 12)):
                flat.append(f"d{unit}")
                queries.append(q)
    _check(flat, np.asarray(queries, dtype=np.int64))


def test_ids_alike_in_the_kept_hash_bits_are_told_apart(monkeypatch) -> None:
    """Different ids whose hashes share the kept low bits (forced here: every hash is 7)
    still make one group per (query, id)."""
    flat = ["a", "b", "a", "c", "b", "a"]
    query = np.asarray([0, 0, 1, 1, 0, 1], dtype=np.int64)
    monkeypatch.setattr(pair_units, "hash", lambda _s: 7, raising=False)
    _check(flat, query)
    monkeypatch.setattr(pair_units, "hash", lambda s: (1 << 45) * ord(s[0]) + 7, raising=False)
    _check(flat, query)


def test_queries_too_many_for_one_key_are_sorted_by_lexsort() -> None:
    flat = ["x", "y", "x", "x"]
    query = np.asarray([1 << 30, 0, 1 << 30, 0], dtype=np.int64)
    _check(flat, query)
