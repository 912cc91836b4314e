"""The CPU a job spends in de-identification's own steps, counted inside the job.

Why: ``bench_stages`` set a job's CPU against the stage functions timed in
another process at another moment, so Beam's share of the job moved by
several points from run to run with the machine (issue 45). The chunk
transforms time their own steps instead, reading and seeding, the tagger's
load, tagging and reconciling, linking, rewriting and guarding, making and
writing the tables, in the thread that runs them, and add it to one Beam
counter, ``stage_cpu_us``, once a chunk; ``run.json`` reports the sum as
``stage_cpu_seconds``. What a step yields is never inside its time: Beam
runs the next fused transform on the yielded element before the generator
resumes.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from typing import TypeVar

from apache_beam.metrics import Metrics

T = TypeVar("T")

COUNTER = "stage_cpu_us"


class StageClock:
    """Thread CPU of the timed blocks, added to the job's counter on :meth:`flush`.

    ``with clock:`` times a block; blocks do not nest. One clock per DoFn
    instance (Beam runs one bundle at a time through an instance).
    """

    def __init__(self) -> None:
        self._counter = Metrics.counter("deid", COUNTER)
        self._pending_ns = 0
        self._started = 0

    def __enter__(self) -> StageClock:
        self._started = time.thread_time_ns()
        return self

    def __exit__(self, *exc: object) -> None:
        self._pending_ns += time.thread_time_ns() - self._started

    def each(self, items: Iterable[T]) -> Iterator[T]:
        """``items``, the time to make each one timed (not what the caller does)."""
        iterator = iter(items)
        while True:
            with self:
                item = next(iterator, _END)
            if item is _END:
                return
            yield item

    def flush(self) -> None:
        """Add the time of the blocks since the last flush to the counter."""
        if self._pending_ns:
            self._counter.inc(self._pending_ns // 1000)
            self._pending_ns = 0


_END = object()
