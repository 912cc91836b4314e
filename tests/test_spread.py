"""Chunks dealt to workers by their cost (``deid_pipeline/transforms/spread.py``).

The chunk shapes are those of the benchmark's mixed set (five HL7 files and
five note files): full and short chunks of reports and of notes. Whole runs on
two workers against one are in ``tests/test_run_job.py``.
"""

import multiprocessing
import random

import apache_beam as beam
import pytest
from apache_beam.options.pipeline_options import PipelineOptions
from apache_beam.testing.util import assert_that, equal_to
from faker import Faker

from deid_pipeline.model import ClinicalDocument, DictionaryEntry, PatientDictionary
from deid_pipeline.transforms.chunks import ChunkRef
from deid_pipeline.transforms.spread import (
    HEADER_ENTRY_CHARS,
    SpreadChunks,
    chunk_weight,
    dealt,
    direct_workers,
)


def _mixed_refs() -> list[ChunkRef]:
    """Ten files as the benchmark writes them: reports, then notes, in turn."""
    refs = []
    for f in range(10):
        if f % 2 == 0:  # HL7: a full chunk of reports and a short one
            weights = [292_000, 50_000]
        else:  # notes: two full chunks and a short one
            weights = [180_000, 180_000, 132_000]
        refs += [ChunkRef(f"spill/{f}-{c}", f, c, 256, w)
                 for c, w in enumerate(weights)]
    return refs


def _loads(order: list[ChunkRef], workers: int) -> list[int]:
    """What each worker gets when the runner deals place p to worker p % workers."""
    loads = [0] * workers
    for p, ref in enumerate(order):
        loads[p % workers] += ref.weight
    return loads


@pytest.mark.parametrize("workers", [2, 3, 4])
def test_dealt_chunks_leave_the_workers_closer_than_file_order_does(workers):
    refs = _mixed_refs()
    order = dealt(refs, workers)
    assert sorted(order, key=lambda r: r.path) == sorted(refs, key=lambda r: r.path)
    spread = _loads(order, workers)
    as_read = _loads(refs, workers)
    # Each worker's count is fixed by the runner (one more for the first ones):
    # within one chunk of each other, and closer than in the order read.
    assert max(spread) - min(spread) <= max(r.weight for r in refs)
    assert max(spread) - min(spread) < 0.6 * (max(as_read) - min(as_read))


def test_the_same_chunks_in_any_order_are_dealt_alike():
    refs = _mixed_refs()
    shuffled = refs[:]
    random.Random(45).shuffle(shuffled)
    assert dealt(shuffled, 2) == dealt(refs, 2)
    assert dealt(refs, 1) == sorted(refs, key=lambda r: (-r.weight, r.file_index,
                                                           r.chunk_index))
    assert dealt([], 2) == []
    (only,) = refs[:1]
    assert dealt([only], 4) == [only]


def test_a_chunk_weighs_its_text_and_its_header_entries():
    fake = Faker()
    Faker.seed(7)
    note = ClinicalDocument("n1", fake.paragraph(nb_sentences=8), "jsonl")
    entries = tuple(DictionaryEntry(fake.name(), "PATIENT", "PID-5") for _ in range(3))
    report = ClinicalDocument("r1", fake.paragraph(), "hl7",
                              dictionary=PatientDictionary(entries, "MRN1"))
    assert chunk_weight([note]) == len(note.text)
    assert chunk_weight([note, report]) == (
        len(note.text) + len(report.text) + 3 * HEADER_ENTRY_CHARS)
    assert chunk_weight([]) == 0


@pytest.mark.parametrize("args, workers", [
    ([], 1),
    (["--direct_running_mode=in_memory", "--direct_num_workers=1"], 1),
    (["--direct_running_mode=multi_processing", "--direct_num_workers=2"], 2),
    (["--direct_running_mode=multi_threading", "--direct_num_workers=3"], 3),
    (["--runner=FlinkRunner", "--direct_running_mode=multi_processing",
      "--direct_num_workers=2"], 1),
])
def test_workers_are_the_direct_runner_s_split_and_one_elsewhere(args, workers):
    assert direct_workers(PipelineOptions(args)) == workers


def test_zero_workers_is_every_core_as_the_runner_counts_them():
    options = PipelineOptions(["--direct_running_mode=multi_processing",
                               "--direct_num_workers=0"])
    assert direct_workers(options) == multiprocessing.cpu_count()


@pytest.mark.parametrize("workers", [1, 2])
def test_spreading_passes_every_chunk_on_once(workers):
    refs = _mixed_refs()
    with beam.Pipeline() as pipeline:
        out = (pipeline | beam.Create(refs, reshuffle=False)
               | SpreadChunks(workers))
        assert_that(out, equal_to(refs))
