"""graphs/vectors/batch_memo.py: one batched call for the unknown keys, least recently used dropped first."""

from __future__ import annotations

import pytest

from graphs.vectors.batch_memo import BatchMemo


def test_only_unknown_distinct_keys_are_computed_in_one_call() -> None:
    calls: list[list[str]] = []

    def upper(keys: list[str]) -> list[str]:
        calls.append(keys)
        return [k.upper() for k in keys]

    memo: BatchMemo[str, str] = BatchMemo(3)
    assert memo.get_many(["a", "b", "a"], upper) == ["A", "B", "A"]
    assert memo.get_many(["b", "c"], upper) == ["B", "C"]
    assert calls == [["a", "b"], ["c"]]
    assert (memo.hits, memo.misses) == (2, 3)
    memo.get_many(["a"], upper)  # a is now the most recently used; b the least
    memo.get_many(["d"], upper)
    assert len(memo) == 3
    memo.get_many(["a", "c", "d", "b"], upper)
    assert calls[-1] == ["b"]  # b was dropped, a was kept
    memo.clear()
    assert len(memo) == 0
    with pytest.raises(ValueError, match="capacity"):
        BatchMemo(0)
