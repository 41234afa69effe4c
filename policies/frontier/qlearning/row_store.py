"""The features of the links a frontier holds, kept together in two arrays.

The Q-learning frontier keeps each queued link's hashed features (a `Row`: indices and
values) to value it again whenever its model moves. Kept as two small arrays a link,
re-valuing a host's queue would join thousands of them from all over the heap, one by
one.
Here every row lives in one array of indices and one of values, a link's row at its
(start, length), and the rows of many links come out with one vectorised gather, with
a small integer the frontier keeps beside each (its section's number). A row taken out
leaves a gap; when gaps are most of the arrays, the rows held are copied together.
The values are kept in single precision (a feature's weight, 1 / sqrt of its field's
words, needs no more): 8 bytes a feature held, not 12.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from policies.frontier.qlearning.link_model import Row


class RowStore:
    """Rows by key (a URL's id)."""

    def __init__(self, capacity: int = 4_096) -> None:
        self._indices = np.zeros(capacity, dtype=np.int32)
        self._values = np.zeros(capacity, dtype=np.float32)
        self._end = 0  # the arrays' used length, gaps included
        self._held = 0  # the length of the rows held
        self._slots: dict[int, tuple[int, int, int]] = {}  # key: (start, length, label)

    def __len__(self) -> int:
        return len(self._slots)

    def __contains__(self, key: object) -> bool:
        return key in self._slots

    @property
    def allocated(self) -> int:
        """The arrays' length: the room the rows take, gaps included."""
        return len(self._indices)

    def put(self, key: int, row: Row, label: int = 0) -> None:
        self.pop(key)
        indices, values = row
        length = len(indices)
        self._make_room(length)
        start = self._end
        self._indices[start : start + length] = indices
        self._values[start : start + length] = values
        self._end += length
        self._held += length
        self._slots[key] = (start, length, label)

    def get(self, key: int) -> Row | None:
        slot = self._slots.get(key)
        if slot is None:
            return None
        start, length, _ = slot
        end = start + length
        return self._indices[start:end].copy(), self._values[start:end].copy()

    def pop(self, key: int) -> Row | None:
        row = self.get(key)
        if row is not None:
            self._held -= len(row[0])
            del self._slots[key]
        return row

    def gather(self, keys: Sequence[int]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The rows of `keys` one after another: their indices, their values, each
        row's length, and each one's label. KeyError if one is not held."""
        slots = np.array([self._slots[key] for key in keys], dtype=np.int64).reshape(-1, 3)
        starts, lengths, labels = slots.T
        positions = _ranges(starts, lengths)
        return self._indices[positions], self._values[positions], lengths, labels

    def labels(self, keys: Sequence[int]) -> np.ndarray:
        """The labels of `keys`. KeyError if one is not held."""
        slots = self._slots
        return np.fromiter((slots[key][2] for key in keys), dtype=np.int64, count=len(keys))

    def _make_room(self, length: int) -> None:
        if self._end + length <= len(self._indices):
            return
        if self._held + length <= len(self._indices) // 2:
            self._compact(len(self._indices))  # gaps are most of it: close them
        else:
            self._compact(2 * (self._held + length))

    def _compact(self, capacity: int) -> None:
        """Copy the rows held to the start of arrays of `capacity`, in no gaps."""
        keys = list(self._slots)
        starts, lengths, labels = (
            np.array(list(self._slots.values()), dtype=np.int64).reshape(-1, 3).T
        )
        positions = _ranges(starts, lengths)
        indices = np.zeros(capacity, dtype=np.int32)
        values = np.zeros(capacity, dtype=np.float32)
        indices[: len(positions)] = self._indices[positions]
        values[: len(positions)] = self._values[positions]
        new_starts = (np.cumsum(lengths) - lengths).tolist()
        slots = zip(new_starts, lengths.tolist(), labels.tolist(), strict=True)
        self._slots = dict(zip(keys, slots, strict=True))
        self._indices, self._values = indices, values
        self._end = self._held = len(positions)


def _ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The positions start, start + 1, ..., start + length - 1 of each (start, length)."""
    if len(lengths) == 0:
        return np.zeros(0, dtype=np.int64)
    ends = np.cumsum(lengths)
    return np.arange(ends[-1]) + np.repeat(starts - (ends - lengths), lengths)
