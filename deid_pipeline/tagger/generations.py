"""A per-process cache that stays bounded without forgetting what is in use.

The CRF's feature caches (:mod:`deid_pipeline.tagger.features`) hold one
entry per distinct token text; a worker sees millions over a night.
"""

from __future__ import annotations


class Generations:
    """A per-process cache bounded without forgetting what is in use.

    Two generations: a lookup that misses ``current`` tries ``previous`` and
    moves a hit into ``current``; when ``current`` holds ``limit`` entries it
    becomes ``previous`` and the old ``previous`` is dropped. An entry used
    since the last turnover survives it, so the working vocabulary (common
    words, section labels) stays cached, while texts seen once (names,
    numbers) fall out. A plain dict cleared when full lost everything at
    once: it had to be twice as big for the same hit rate, and a worker's
    memory grew with it. Holds at most ``2 * limit`` entries.
    """

    __slots__ = ("limit", "current", "previous")

    def __init__(self, limit: int) -> None:
        """Start empty; ``limit`` entries per generation."""
        self.limit = limit
        self.current: dict = {}
        self.previous: dict = {}

    def get(self, key):
        """The cached value of ``key``, or None.

        Hot loops read ``current.get(key)`` themselves (no method call per
        token) and call :meth:`recall` on a miss.
        """
        value = self.current.get(key)
        return self.recall(key) if value is None else value

    def recall(self, key):
        """The previous generation's value of ``key`` (moved up), or None.

        For a key that just missed ``current``.
        """
        value = self.previous.get(key)
        if value is not None:
            self.put(key, value)
        return value

    def put(self, key, value) -> None:
        """Cache ``value`` under ``key`` (a key not in ``current``)."""
        if len(self.current) >= self.limit:
            self.previous = self.current
            self.current = {}
        self.current[key] = value

    def __len__(self) -> int:
        """Entries held (a key in both generations counts twice)."""
        return len(self.current) + len(self.previous)
