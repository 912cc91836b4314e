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

Dealt by estimate, the shares still ended apart: the estimate misses a
dense note, and on a shared machine one core can run a tenth slower than the
other for seconds, so a worker idled up to 1.6 s of 7 at the end of tagging
on 8,000 notes. Where the spill directory is local, every worker is
therefore *offered* every chunk (:func:`offered`): its own share first, then
the others' from their ends, and it tags a chunk only if it is the first to
claim it (:func:`claimed`: a file created exclusively, which one process
alone can do). A worker that is done with its share takes the chunks the
other has not reached yet; the workers end within one chunk of each other.
Which worker tags a chunk does not change what is written (the outputs are
named and sorted by chunk), and a chunk no one tagged would show as records
read but neither written nor quarantined, which fails the run.
"""

from __future__ import annotations

import multiprocessing
import os
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


def offered(refs: Iterable[_Weighed], workers: int) -> list:
    """Every reference ``workers`` times, each worker's in the order it tries them.

    The runner gives place ``q`` to worker ``q % workers``, so worker ``w``'s
    ``k``-th is at ``k * workers + w``: its :func:`dealt` share, then each
    other worker's share from its end (the chunks that worker reaches last).
    """
    order = dealt(refs, workers)
    shares = [order[w::workers] for w in range(workers)]
    plans = [shares[w] + [ref for v in range(1, workers)
                          for ref in reversed(shares[(w + v) % workers])]
             for w in range(workers)]
    return [plans[w][k] for k in range(len(order)) for w in range(workers)]


def claimed(directory: str, ref: _Weighed) -> bool:
    """Local-only: True for the first caller, in any process: it is to tag ``ref``.

    ``directory`` (created when missing) is on this machine: claims are used
    only where the spill directory is, and a file created with ``O_EXCL``
    there is created by one caller alone.
    """
    os.makedirs(directory, exist_ok=True)
    name = os.path.join(directory, f"{ref.file_index:05d}-{ref.chunk_index:05d}")
    try:
        os.close(os.open(name, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
    except FileExistsError:
        return False
    return True


class SpreadChunks(beam.PTransform):
    """Chunk references, dealt to ``workers`` workers by their cost (see module).

    ``offer_all``: every worker gets every reference (:func:`offered`), for a
    step that tags only those it :func:`claimed`.
    """

    def __init__(self, workers: int = 1, offer_all: bool = False) -> None:
        super().__init__()
        self._workers = max(1, workers)
        self._offer_all = offer_all

    def expand(self, refs):
        workers = self._workers
        if workers == 1:  # one process, or a runner that places groups by hash
            return refs | "Spread" >> beam.Reshuffle()
        order = offered if self._offer_all else dealt
        return (
            refs
            | "OnePlace" >> beam.Map(lambda ref: (None, ref))
            | "All" >> beam.GroupByKey()
            | "Deal" >> beam.FlatMap(lambda kv: enumerate(order(kv[1], workers)))
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
