"""Which of many spans a region overlaps or lies inside, in log time.

A long document holds tens of thousands of spans and eponym regions; asking
each new match "does any span overlap me?" by a scan made the tagger
quadratic in the document's length (4,000 notes as one document: 98 million
comparisons in the eponym allowlist alone).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterable
from itertools import accumulate


class Intervals:
    """A fixed set of half-open ``(start, end)`` intervals, overlapping or not."""

    def __init__(self, pairs: Iterable[tuple[int, int]]) -> None:
        ordered = sorted(pairs)
        self._pairs = ordered
        self._starts = [s for s, _ in ordered]
        # The furthest end among the intervals up to each one, in start order:
        # the intervals starting before a point reach past it iff this does.
        self._reach = list(accumulate((e for _, e in ordered), max))

    def overlaps(self, start: int, end: int) -> bool:
        """Whether an interval shares a position with ``[start, end)``."""
        before = bisect_left(self._starts, end)  # intervals starting before ``end``
        return before > 0 and self._reach[before - 1] > start

    def contains(self, start: int, end: int) -> bool:
        """Whether one interval holds all of ``[start, end)``."""
        before = bisect_right(self._starts, start)  # intervals starting at or before
        return before > 0 and self._reach[before - 1] >= end

    def overlapping(self, start: int, end: int) -> list[tuple[int, int]]:
        """The intervals that share a position with ``[start, end)``, in start order.

        Only those from the first whose reach passes ``start`` up to the last
        starting before ``end`` are looked at.
        """
        first = bisect_right(self._reach, start)
        last = bisect_left(self._starts, end)
        return [(s, e) for s, e in self._pairs[first:last] if e > start]

    def __len__(self) -> int:
        return len(self._starts)
