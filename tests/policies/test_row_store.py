"""The row store: the rows put are the rows gathered, through gaps and compactions, their
values in single precision."""

from __future__ import annotations

import numpy as np

from policies.frontier.qlearning.link_model import Row
from policies.frontier.qlearning.row_store import RowStore


def row(key: int) -> Row:
    """A row of its own for each key: `key % 7` features (none for some)."""
    length = key % 7
    indices = np.arange(length, dtype=np.int32) * 1_000 + key
    return indices, np.full(length, key / 10)


def assert_rows_equal(found: Row | None, expected: Row) -> None:
    assert found is not None
    np.testing.assert_array_equal(found[0], expected[0])
    assert found[1].dtype == np.float32
    np.testing.assert_array_equal(found[1], expected[1].astype(np.float32))


def test_rows_come_back_as_put_one_by_one_and_gathered() -> None:
    store = RowStore(capacity=8)
    for key in range(50):
        store.put(key, row(key), label=key // 10)
    store.put(3, row(10), label=7)  # put again: replaced
    assert len(store) == 50
    assert 3 in store
    assert 50 not in store
    assert_rows_equal(store.get(3), row(10))
    keys = [7, 3, 49, 0, 13]
    indices, values, lengths, labels = store.gather(keys)
    expected = [row(10) if key == 3 else row(key) for key in keys]
    assert lengths.tolist() == [len(r[0]) for r in expected]
    assert labels.tolist() == store.labels(keys).tolist() == [0, 7, 4, 0, 1]
    np.testing.assert_array_equal(indices, np.concatenate([r[0] for r in expected]))
    assert values.dtype == np.float32
    np.testing.assert_array_equal(
        values, np.concatenate([r[1] for r in expected]).astype(np.float32)
    )
    assert_rows_equal(store.pop(7), row(7))
    assert store.pop(7) is None
    assert store.get(7) is None
    assert 7 not in store


def test_the_arrays_close_their_gaps_instead_of_growing_with_rows_taken_out() -> None:
    store = RowStore(capacity=64)
    for key in range(10_000):  # a queue of about 100 rows, each put and later taken
        store.put(key, row(key), label=key % 3)
        if key >= 100:
            assert_rows_equal(store.pop(key - 100), row(key - 100))
    assert len(store) == 100
    assert store.allocated <= 4 * 100 * 6  # room for the rows held, not for all put
    for key in range(9_900, 10_000):
        assert_rows_equal(store.get(key), row(key))
    indices, _, lengths, labels = store.gather(list(range(9_900, 10_000)))
    assert lengths.sum() == len(indices) == sum(key % 7 for key in range(9_900, 10_000))
    assert labels.tolist() == [key % 3 for key in range(9_900, 10_000)]
