"""Remember per-key results of a batched computation: compute only the keys not seen recently, in one batch.

Why one class: the query embedder (graphs/vectors/query_vectors.py) and the entity search of ``ner_link``
(tools/ner_link.py) both take a batch of keys, of which a consult's later rounds have mostly seen before,
and both must keep one batched call for the rest (one encoder pass, one matrix product). The same
look-up / batch / store / evict steps were written twice; they live here, thread-safe, least recently used
dropped first.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class BatchMemo(Generic[K, V]):
    """The results of the last ``capacity`` keys; ``hits`` and ``misses`` count keys asked for."""

    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError(f"capacity must be >= 1, got {capacity}")
        self.capacity = capacity
        self.hits = 0
        self.misses = 0
        self._items: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def get_many(self, keys: Sequence[K], compute: Callable[[list[K]], Sequence[V]]) -> list[V]:
        """The result of every key (in order), calling ``compute`` once with the distinct unknown keys."""
        distinct = list(dict.fromkeys(keys))
        with self._lock:
            known = {k: self._items[k] for k in distinct if k in self._items}
            for k in known:
                self._items.move_to_end(k)
        missing = [k for k in distinct if k not in known]
        if missing:
            computed = dict(zip(missing, compute(missing), strict=True))
            with self._lock:
                for k, value in computed.items():
                    self._items[k] = value
                    self._items.move_to_end(k)
                while len(self._items) > self.capacity:
                    self._items.popitem(last=False)
            known.update(computed)
        with self._lock:
            self.hits += len(keys) - len(missing)
            self.misses += len(missing)
        return [known[k] for k in keys]

    def clear(self) -> None:
        with self._lock:
            self._items.clear()

    def __len__(self) -> int:
        return len(self._items)
