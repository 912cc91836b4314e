"""The top-level composites: documents in, research rows, persons and quarantine out.

``DeidentifyRecords`` (per record, streaming) and
``DeidentifyClinicalDocuments`` (a PCollection of documents, linked) return
PCollections; ``DeidentifyFiles`` (the batch job over files) writes the
documents and identifiers tables itself, chunk by chunk, so that no document
crosses a shuffle and memory does not grow with the input.
"""

from __future__ import annotations

from typing import NamedTuple

import apache_beam as beam
from apache_beam.io.filesystems import FileSystems
from apache_beam.metrics import Metrics
from apache_beam.utils import shared

from deid_pipeline.document_rewriter import Rewriter
from deid_pipeline.flow import DocumentFlow
from deid_pipeline.model import ClinicalDocument, QuarantineRecord
from deid_pipeline.run_options import DEFAULT_CHUNK_SIZE
from deid_pipeline.runtime.progress import process_progress
from deid_pipeline.store.files import FileSystemFlags, is_local
from deid_pipeline.store.incremental import LinkHistory
from deid_pipeline.tagger.detectors import TaggerConfig
from deid_pipeline.transforms.chunks import (
    MatchIndexedFiles,
    PersonOriginals,
    SolveLinks,
    SpillFileFn,
    TagChunkFn,
    WriteChunkFn,
)
from deid_pipeline.transforms.hl7_output import Hl7Output, WriteHl7Files
from deid_pipeline.transforms.link import Link
from deid_pipeline.transforms.persons import Persons
from deid_pipeline.transforms.quarantine import quarantined, with_quarantine
from deid_pipeline.transforms.read import DEFAULT_MAX_FILE_BYTES, BrokenLinksFn
from deid_pipeline.transforms.spread import SpreadChunks
from deid_pipeline.transforms.surrogate import Surrogate
from deid_pipeline.transforms.tag import Tag, acquire_tagger


class DeidOutputs(NamedTuple):
    """What the pipeline produces: research-safe documents, persons and failures."""

    research: beam.PCollection
    persons: beam.PCollection
    quarantine: beam.PCollection


class ProcessFn(beam.DoFn):
    """ClinicalDocument -> research document or quarantine row (``flow.process``)."""

    def __init__(self, config: TaggerConfig, shared_handle: shared.Shared,
                 rewriter: Rewriter) -> None:
        self._config = config
        self._shared = shared_handle
        self._rewriter = rewriter
        self._flow: DocumentFlow | None = None
        self._docs = Metrics.counter("deid", "documents_written")

    def setup(self) -> None:
        self._flow = DocumentFlow(acquire_tagger(self._shared, self._config),
                                  self._rewriter)

    def process(self, doc: ClinicalDocument):
        outcome = self._flow.process(doc)
        if isinstance(outcome, QuarantineRecord):
            yield quarantined(outcome)
            return
        self._docs.inc()
        process_progress("deidentify").add(documents=1, spans=outcome.n_phi)
        yield outcome


class DeidentifyRecords(beam.PTransform):
    """The per-record chain (tag -> surrogate -> leak guard), with no shuffle.

    Safe on unbounded PCollections (Kafka, Pub/Sub, an MLLP feed): every
    person id and surrogate is a pure function of the key and the record
    itself (its header key, else the document), so streaming gives the same
    bytes as the batch run for any record that carries its own person key,
    but for a record whose sibling reports (or, for a sure name, place or
    id, another record of its patient in the same chunk) were tagged with a
    value it missed: the batch run marks it there too
    (``tagging.reconcile_documents``), a record alone cannot; nor can it
    avoid the originals of the person's other records: its surrogates
    avoid its own (its message's) originals only, while the batch run also
    redraws one that spells an original of another document of the same
    person. Returns (research documents,
    quarantine).
    """

    def __init__(self, tagger: TaggerConfig, rewriter: Rewriter) -> None:
        super().__init__()
        self._tagger = tagger
        self._rewriter = rewriter
        self._shared = shared.Shared()

    def expand(self, documents):
        return with_quarantine(
            documents, "Deidentify",
            ProcessFn(self._tagger, self._shared, self._rewriter))


class DeidentifyClinicalDocuments(beam.PTransform):
    """Tag, link into persons, rewrite each person's documents together.

    Each document is rewritten against the originals of all of its person's
    documents, as the batch job's chunks do; stage failures are flattened
    into one quarantine.
    """

    def __init__(self, tagger: TaggerConfig, rewriter: Rewriter) -> None:
        super().__init__()
        self._tagger = tagger
        self._rewriter = rewriter

    def expand(self, documents) -> DeidOutputs:
        tagged, tag_failed = documents | "Tag" >> Tag(self._tagger)
        linked = tagged | "Link" >> Link()
        research, rewrite_failed = linked | "Surrogate" >> Surrogate(self._rewriter)
        persons = linked | "Persons" >> Persons(self._rewriter)
        quarantine = (tag_failed, rewrite_failed) | "MergeQuarantine" >> beam.Flatten()
        return DeidOutputs(research, persons, quarantine)


class FileOutputs(NamedTuple):
    """What the batch file path produces besides the Parquet files it wrote itself.

    ``written`` holds one ``ChunkWritten`` (row counts) per chunk whose
    documents and identifiers were written; ``persons`` persons-table rows;
    ``quarantine`` every failed record of every stage.
    """

    written: beam.PCollection
    persons: beam.PCollection
    quarantine: beam.PCollection


class DeidentifyFiles(beam.PTransform):
    """Read input globs, de-identify them and write documents and identifiers.

    The batch job minus the persons and quarantine sinks. Documents never
    cross a shuffle (see ``transforms/chunks.py``): they go through spill
    files under ``spill_directory`` (default ``directory/_spill``; the caller
    deletes it) in chunks of ``chunk_size`` documents of one input file, and
    each chunk's rows are written to ``directory/documents`` and
    ``directory/identifiers`` as ``part-FFFFF-CCCCC.parquet``. With
    ``hl7_output``, each HL7 input file is also written de-identified to its
    directory (``transforms/hl7_output.py``), from the same tagged chunks.
    ``filesystem_flags`` (the job's Beam options) go to every worker step
    that touches files, so s3:// and gs:// paths work on any SDK harness.
    ``link_history`` (``--incremental``): persons of earlier runs to link to.
    ``workers``: how many workers the runner splits a stage among, to deal
    the chunks to by their cost (``transforms/spread.py``).
    Both outputs rewrite each document of a person with several documents
    against the originals of all of them (``PersonOriginals``).
    """

    def __init__(
        self,
        patterns: list[str],
        input_format: str,
        tagger: TaggerConfig,
        rewriter: Rewriter,
        directory: str,
        spill_directory: str | None = None,
        chunk_size: int = DEFAULT_CHUNK_SIZE,
        hl7_output: Hl7Output | None = None,
        max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
        filesystem_flags: FileSystemFlags = None,
        link_history: LinkHistory | None = None,
        workers: int = 1,
    ) -> None:
        super().__init__()
        if chunk_size < 1:
            raise ValueError(f"chunk size must be at least 1, not {chunk_size}")
        self._patterns = list(patterns)
        self._format = input_format
        self._tagger = tagger
        self._rewriter = rewriter
        self._directory = directory
        self._spill = spill_directory or FileSystems.join(directory, "_spill")
        self._chunk_size = chunk_size
        self._hl7_output = hl7_output
        self._max_file_bytes = max_file_bytes
        self._flags = filesystem_flags
        self._history = link_history
        self._workers = workers
        self._shared = shared.Shared()

    def expand(self, pbegin) -> FileOutputs:
        files = pbegin | "Files" >> MatchIndexedFiles(self._patterns, self._flags)
        chunks, unreadable = (
            files
            | "Read"
            >> beam.ParDo(
                SpillFileFn(
                    self._spill,
                    self._format,
                    self._chunk_size,
                    self._max_file_bytes,
                    self._flags,
                )
            ).with_outputs(SpillFileFn.QUARANTINE, main="chunks")
        )
        # Several workers of one machine take chunks as they get free.
        claims = (FileSystems.join(self._spill, "claims")
                  if self._workers > 1 and is_local(self._spill) else None)
        tagged, links, tag_failed = (
            chunks
            | "SpreadChunks" >> SpreadChunks(self._workers, offer_all=bool(claims))
            | "Tag"
            >> beam.ParDo(
                TagChunkFn(
                    self._spill, self._tagger, self._shared, self._rewriter,
                    self._flags, claims_directory=claims,
                )
            ).with_outputs(TagChunkFn.LINKS, TagChunkFn.QUARANTINE, main="tagged")
        )
        person_keys, persons, shared_persons, duplicates = links | "Link" >> SolveLinks(
            self._rewriter, self._history
        )
        avoid = shared_persons | "PersonOriginals" >> PersonOriginals(
            self._spill, self._flags
        )
        tagged_by_id = tagged | "ChunkId" >> beam.Map(
            lambda ref: ((ref.file_index, ref.chunk_index), ref)
        )
        written, rewrite_failed = (
            {"chunk": tagged_by_id, "keys": person_keys, "avoid": avoid,
             "duplicates": duplicates}
            | "JoinKeys" >> beam.CoGroupByKey()
            | "Write"
            >> beam.ParDo(
                WriteChunkFn(
                    self._directory, self._rewriter, self._flags, self._spill
                )
            ).with_outputs(WriteChunkFn.QUARANTINE, main="written")
        )
        broken = (
            pbegin
            | "LinkPatterns" >> beam.Create([tuple(self._patterns)])
            | "BrokenLinks" >> beam.ParDo(BrokenLinksFn(self._format))
        )
        failed = [unreadable, broken, tag_failed, rewrite_failed]
        if self._hl7_output is not None:
            failed.append(
                {"file": files, "tagged": tagged, "keys": person_keys,
                 "avoid": avoid}
                | "Hl7Output"
                >> WriteHl7Files(
                    self._format,
                    self._hl7_output,
                    self._tagger,
                    self._rewriter,
                    self._max_file_bytes,
                )
            )
        quarantine = failed | "AllQuarantine" >> beam.Flatten()
        return FileOutputs(written, persons, quarantine)
