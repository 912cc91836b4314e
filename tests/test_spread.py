"""Chunks dealt to workers by their cost (``deid_pipeline/transforms/spread.py``).

The chunk shapes are those of the benchmark's mixed set (five HL7 files and
five note files): full and short chunks of reports and of notes. Whole runs on
two workers against one are in ``tests/test_run_job.py``.
"""

import multiprocessing
import os
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
    claimed,
    dealt,
    direct_workers,
    offered,
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


@pytest.mark.parametrize("workers", [2, 3])
def test_every_worker_is_offered_every_chunk_its_own_share_first(workers):
    refs = _mixed_refs()
    places = offered(refs, workers)
    assert len(places) == workers * len(refs)
    share = dealt(refs, workers)
    for w in range(workers):
        plan = places[w::workers]  # place q goes to worker q % workers
        assert sorted(plan, key=lambda r: r.path) == sorted(refs, key=lambda r: r.path)
        own = share[w::workers]
        assert plan[:len(own)] == own
        # Then the others', each from the end its worker reaches last.
        after = plan[len(own):]
        nxt = share[(w + 1) % workers::workers]
        assert after[:len(nxt)] == nxt[::-1]


def test_spreading_with_every_chunk_offered_passes_each_once_per_worker():
    refs = _mixed_refs()
    with beam.Pipeline() as pipeline:
        out = (pipeline | beam.Create(refs, reshuffle=False)
               | SpreadChunks(2, offer_all=True))
        assert_that(out, equal_to(refs + refs))


def _claim_all(args) -> list[int]:
    directory, count = args
    refs = [ChunkRef(f"spill/{c}", 0, c, 1) for c in range(count)]
    return [ref.chunk_index for ref in refs if claimed(directory, ref)]


def test_each_chunk_is_claimed_by_one_of_many_racing_processes(tmp_path):
    directory = str(tmp_path / "claims")  # made by the first to claim
    with multiprocessing.get_context("spawn").Pool(4) as pool:
        won = pool.map(_claim_all, [(directory, 200)] * 4)
    assert sorted(c for w in won for c in w) == list(range(200))
    assert len(os.listdir(directory)) == 200
    assert not claimed(directory, ChunkRef("spill/7", 0, 7, 1))
    assert claimed(directory, ChunkRef("spill/7", 1, 7, 1))  # another file's


def test_a_chunk_another_worker_claimed_is_left_to_it(tmp_path, physionet_docs):
    """Two tag steps offered the same chunks: each chunk tagged once, in all."""
    from deid_pipeline.document_rewriter import Rewriter
    from deid_pipeline.flow import DocumentFlow
    from deid_pipeline.tagger.detectors import TaggerConfig, create
    from deid_pipeline.tagger.tagging import PhiTagger
    from deid_pipeline.transforms.chunks import TagChunkFn, spill_path, write_spill

    notes = [d.text for d in physionet_docs[:4]]
    rules_tagger = create(TaggerConfig(detectors=("rules",)))
    (tmp_path / "read").mkdir()
    refs = []
    for c in range(3):
        docs = [ClinicalDocument(f"note-{c}-{k}", note, "text")
                for k, note in enumerate(notes[c:c + 2])]
        path = spill_path(str(tmp_path), "read", 0, c)
        write_spill(path, docs)
        refs.append(ChunkRef(path, 0, c, len(docs)))
    claims = str(tmp_path / "claims")
    workers = []
    for _ in range(2):
        fn = TagChunkFn(str(tmp_path), TaggerConfig(detectors=("rules",)), None,
                        Rewriter("surrogate", b"k" * 32, as_of_year=2026),
                        claims_directory=claims)
        fn._flow = DocumentFlow(PhiTagger(rules_tagger))  # what setup() builds
        workers.append(fn)
    first = [out for ref in refs[:2] for out in workers[0].process(ref)]
    second = [out for ref in refs[::-1] for out in workers[1].process(ref)]
    tagged = [o for o in first + second if isinstance(o, ChunkRef)]
    assert sorted(r.chunk_index for r in tagged) == [0, 1, 2]
    assert [r.chunk_index for r in second if isinstance(r, ChunkRef)] == [2]
