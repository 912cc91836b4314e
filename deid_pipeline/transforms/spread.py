"""Chunks dealt to the workers by their cost, so that the workers finish together.

The DirectRunner's ``multi_processing`` mode splits a stage's input among its
workers once, group by group in the order the groups reached the shuffle, with
no work stealing: the stage ends when its most loaded worker does. Chunks
differ in cost: on the benchmark's nursing-size set one of 256 HL7 reports took
1.5 times one of 256 notes (each report carries a header of some 300 values),
and the last chunk of a file is short. Over 5,000 mixed documents on two
workers, one worker idled 2 s of 28 at the end of tagging (issue 45).

:class:`SpreadChunks` brings the chunk references to one place, sorts them by
an estimate of their tagging cost (:func:`chunk_weight`), deals them to the
workers heaviest first, each to the least loaded worker that still takes one
(:func:`dealt`), and sends them on in the order that gives each worker its
share. With one worker (``run``'s default, one process) and on runners that
place a group by its key's hash (Flink) the order is of no use: there the
references are reshuffled as before, without the two extra steps (a one-note
run took 4% longer with them).
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Iterable
from typing import Protocol

import apache_beam as beam
from apache_beam.options.pipeline_options import (
    DirectOptions,
    PipelineOptions,
    StandardOptions,
)

# What one header entry adds to a document's tagging, in characters of its
# text, rounded: on the benchmark's nursing-size set a chunk of 256 notes
# (180,000 characters) took 1.29 s, one of 256 reports (216,000 characters,
# 77,000 entries) 1.94 s, so an entry cost about 0.7 characters.
HEADER_ENTRY_CHARS = 1
# The runners of this split (``--runner`` unset is the DirectRunner).
_DIRECT_RUNNERS = (None, "DirectRunner", "SwitchingDirectRunner")


class _Weighed(Protocol):
    weight: int
    file_index: int
    chunk_index: int


def chunk_weight(documents: Iterable) -> int:
    """Estimated tagging cost of a chunk: its text, plus its headers' entries."""
    return sum(len(doc.text) + HEADER_ENTRY_CHARS * (
        len(doc.dictionary.values) if doc.dictionary is not None else 0)
        for doc in documents)


def dealt(refs: Iterable[_Weighed], workers: int) -> list:
    """``refs`` in the order that deals them to ``workers`` by cost.

    The runner gives the group at place ``p`` to worker ``p % workers``, so
    each worker's count is fixed; within those counts each reference, the
    heaviest first, goes to the least loaded worker with room (ties: the
    lowest). Sorted by (weight, file, chunk): the same input, the same order.
    """
    ordered = sorted(refs, key=lambda r: (-r.weight, r.file_index, r.chunk_index))
    if workers <= 1:
        return ordered
    total = len(ordered)
    room = [len(range(w, total, workers)) for w in range(workers)]
    queues: list[list] = [[] for _ in range(workers)]
    loads = [0] * workers
    for ref in ordered:
        w = min((w for w in range(workers) if len(queues[w]) < room[w]),
                key=lambda w: (loads[w], w))
        queues[w].append(ref)
        loads[w] += ref.weight
    return [queues[p % workers][p // workers] for p in range(total)]


class SpreadChunks(beam.PTransform):
    """Chunk references, dealt to ``workers`` workers by their cost (see module)."""

    def __init__(self, workers: int = 1) -> None:
        super().__init__()
        self._workers = max(1, workers)

    def expand(self, refs):
        workers = self._workers
        if workers == 1:  # one process, or a runner that places groups by hash
            return refs | "Spread" >> beam.Reshuffle()
        return (
            refs
            | "OnePlace" >> beam.Map(lambda ref: (None, ref))
            | "All" >> beam.GroupByKey()
            | "Deal" >> beam.FlatMap(lambda kv: enumerate(dealt(kv[1], workers)))
            | "Spread" >> beam.GroupByKey()
            | "Refs" >> beam.FlatMap(lambda kv: kv[1])
        )


def direct_workers(options: PipelineOptions) -> int:
    """How many workers the DirectRunner splits a stage among.

    1 in one process (``in_memory``) and on any other runner, which deals
    groups out its own way.
    """
    if options.view_as(StandardOptions).runner not in _DIRECT_RUNNERS:
        return 1
    direct = options.view_as(DirectOptions)
    if direct.direct_running_mode == "in_memory":
        return 1
    # 0 is every core, counted as the runner counts them.
    return direct.direct_num_workers or multiprocessing.cpu_count()
