"""The batch file path in chunks: heavy data never crosses a shuffle.

A Beam runner keeps (and on the DirectRunner, the driver process buffers)
every PCollection that crosses a shuffle, so a pipeline whose documents cross
one grows in memory with its input. Here documents travel only through spill
files under a spill directory (``FileSystems``, so shared storage works);
PCollections carry chunk descriptors, link records and counts:

1. ``SpillFileFn``: one input file -> chunks of up to ``chunk_size``
   documents in spill files; emits a ``ChunkRef`` per chunk (plus the read
   quarantine). The refs are reshuffled so chunks spread over workers.
2. ``TagChunkFn``: one chunk -> tagged chunk spill file, and beside it the
   originals of each document (what no surrogate may spell); emits one
   small ``link_item`` per document (its linkable identifier keys and
   generalised quasi-identifiers, as plain values).
3. ``SolveLinks``: all link items in one place -> the person keys of each
   chunk (only those linking decided: a few short strings) and the persons
   rows. The keys are joined to the tagged chunks by chunk id (a shuffle of
   small values), not broadcast: no worker holds every document's key.
   It also gives, per chunk, the person id of each document whose person
   has other documents in the run.
4. ``PersonOriginals``: those person ids -> each such person's originals,
   the union over all of its documents (read from the originals spill files,
   grouped by person id), sent to every chunk that holds one of them. Only
   persons with several documents cross this shuffle.
5. ``WriteChunkFn``: one tagged chunk -> rewrite with its person keys and
   its persons' originals, leak guard, and its documents and identifiers
   rows straight into Parquet files named after (input file index, chunk
   index), rows sorted inside the file, so the output bytes do not depend on
   the number of workers nor on which worker ran a chunk.

Spill files hold PHI: they live inside the run's staging directory (protected
like the identifiers table) and are deleted before the tables are published.
"""

from __future__ import annotations

import pickle
import zlib
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import NamedTuple

import apache_beam as beam
from apache_beam.io.fileio import ReadableFile
from apache_beam.io.filesystem import CompressionTypes
from apache_beam.io.filesystems import FileSystems
from apache_beam.metrics import Metrics
from apache_beam.utils import shared

from deid_pipeline.document_rewriter import Rewriter, originals_of
from deid_pipeline.flow import SURROGATE, DocumentFlow, StageError, stage
from deid_pipeline.keys import person_id
from deid_pipeline.linking.solver import (
    ChunkId,
    DuplicateDocumentIdError,
    LinkItem,
    duplicate_message,
    link_item,
    solve_links_with_prior,
)
from deid_pipeline.model import ClinicalDocument, TaggedDocument
from deid_pipeline.outputs.rows import IdentifierColumns, document_row
from deid_pipeline.runtime.progress import DOCUMENT_PROGRESS, process_progress
from deid_pipeline.schemas import PERSON_MERGES
from deid_pipeline.store.files import (
    FileSystemFlags,
    delete_tree,
    is_local_directory,
    use_filesystem_flags,
)
from deid_pipeline.store.incremental import (
    LinkHistory,
    read_history,
    write_history,
)
from deid_pipeline.store.tables import (
    SCHEMAS,
    chunk_path,
    sort_columns,
    sort_key,
    write_table_file,
    written_counts,
)
from deid_pipeline.surrogates import Originals
from deid_pipeline.tagger.detectors import TaggerConfig
from deid_pipeline.transforms.quarantine import QUARANTINE, dead_letter
from deid_pipeline.transforms.read import DEFAULT_MAX_FILE_BYTES, ReadFileFn
from deid_pipeline.transforms.spread import chunk_weight, claimed
from deid_pipeline.transforms.stage_clock import StageClock
from deid_pipeline.transforms.tag import acquire_tagger


@dataclass(frozen=True, slots=True)
class ChunkRef:
    """Where one chunk of documents of one input file lies (no content)."""

    path: str
    file_index: int
    chunk_index: int
    count: int
    # Estimated tagging cost (transforms/spread.py), to deal chunks to workers.
    weight: int = 0


@dataclass(frozen=True, slots=True)
class ChunkWritten:
    """What writing one chunk produced: row counts of its Parquet files.

    ``counts`` is the ``write.written_counts`` of both files together.
    """

    file_index: int
    chunk_index: int
    documents: int
    identifiers: int
    counts: Counter = field(default_factory=Counter, compare=False)


def spill_path(directory: str, kind: str, file_index: int, chunk_index: int) -> str:
    """The spill file of one chunk at one step (``read``, ``tagged``, ``originals``)."""
    return FileSystems.join(directory, kind, f"{file_index:05d}-{chunk_index:05d}.pkl")


def write_spill(path: str, items: list) -> None:
    """Write a chunk's items (documents or tagged documents) as one spill file.

    Pickled straight into the file, as :func:`read_spill` reads it: one
    huge tagged document is a pickle of hundreds of MB, which as one bytes
    object beside the objects it holds was a spike of the run's memory.
    """
    with FileSystems.create(
        path,
        mime_type="application/octet-stream",
        compression_type=CompressionTypes.UNCOMPRESSED,
    ) as channel:
        pickle.dump(items, channel, protocol=pickle.HIGHEST_PROTOCOL)


def read_spill(path: str) -> list:
    """The items of a spill file this pipeline wrote (never an input file)."""
    with FileSystems.open(
        path,
        mime_type="application/octet-stream",
        compression_type=CompressionTypes.UNCOMPRESSED,
    ) as channel:
        return pickle.load(channel)


def delete_spill(directory: str) -> None:
    """Remove a spill directory and everything in it, if it exists.

    On an object store a directory is a prefix, which ``exists`` never finds.
    """
    delete_tree(directory)


def pack(values) -> bytes:
    """Values as one opaque bytes element.

    What crosses a shuffle in bytes stays bytes in the runner: the
    DirectRunner decodes grouped values into Python objects in its driver,
    several times the size of their encoding.
    """
    return pickle.dumps(values, protocol=pickle.HIGHEST_PROTOCOL)


def unpack(blob: bytes):
    return pickle.loads(blob)


def _index_files(_key, metadata_list) -> Iterable[tuple[int, object]]:
    """Number the matched files in path order: stable names for their chunks.

    They are emitted in a hash order of their paths, not in path order: a
    runner that deals elements out to workers in turn would otherwise give
    one worker every ``.hl7`` file and the other every ``.jsonl`` file of a
    directory of pairs.
    """
    # A file two patterns match (`dir/*` and `dir/*.hl7`) is read once.
    unique = {m.path: m for m in metadata_list if not m.path.endswith(("/", "\\"))}
    files = sorted(unique.values(), key=lambda m: m.path)
    indexed = list(enumerate(files))
    indexed.sort(key=lambda im: zlib.crc32(im[1].path.encode("utf-8")))
    yield from indexed


class _MatchFn(beam.DoFn):
    """Pattern -> metadata of each file it matches (``fileio.MatchAll``'s job).

    Our own, for its ``setup``: a worker's file systems get the job's options.
    A plain path that matches nothing was refused by the driver already.
    """

    def __init__(self, filesystem_flags: FileSystemFlags = None) -> None:
        self._flags = filesystem_flags

    def setup(self) -> None:
        use_filesystem_flags(self._flags)

    def process(self, pattern: str):
        (match,) = FileSystems.match([pattern])
        # Directories are not input files (the driver refused a pattern
        # that names only directories).
        yield from (m for m in match.metadata_list if not is_local_directory(m.path))


class MatchIndexedFiles(beam.PTransform):
    """Patterns -> (index in sorted path order, FileMetadata), spread over workers."""

    def __init__(
        self, patterns: list[str], filesystem_flags: FileSystemFlags = None
    ) -> None:
        super().__init__()
        self._patterns = list(patterns)
        self._flags = filesystem_flags

    def expand(self, pbegin):
        return (
            pbegin
            # A few patterns: not redistributed (a Reshuffle, one more stage
            # to build and run); the matched files are, below.
            | "Patterns" >> beam.Create(self._patterns, reshuffle=False)
            | "Match" >> beam.ParDo(_MatchFn(self._flags))
            | "AllFiles" >> beam.Map(lambda m: (None, m))
            | "GroupFiles" >> beam.GroupByKey()
            | "Index" >> beam.FlatMapTuple(_index_files)
            | "SpreadFiles" >> beam.Reshuffle()
        )


class SpillFileFn(beam.DoFn):
    """(file index, metadata) -> ``ChunkRef`` per chunk; read failures quarantined."""

    QUARANTINE = QUARANTINE

    def __init__(
        self, spill_directory: str, input_format: str, chunk_size: int,
        max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
        filesystem_flags: FileSystemFlags = None,
    ) -> None:
        if chunk_size < 1:
            raise ValueError(f"chunk size must be at least 1, not {chunk_size}")
        self._directory = spill_directory
        self._read = ReadFileFn(input_format, max_file_bytes)
        self._chunk_size = chunk_size
        self._flags = filesystem_flags
        self._clock = StageClock()

    def setup(self) -> None:
        use_filesystem_flags(self._flags)

    def process(self, element):
        file_index, metadata = element
        chunk: list[ClinicalDocument] = []
        chunk_index = 0
        for record in self._clock.each(self._read.process(ReadableFile(metadata))):
            if isinstance(record, ClinicalDocument):
                chunk.append(record)
                if len(chunk) == self._chunk_size:
                    yield self._spill(file_index, chunk_index, chunk)
                    chunk, chunk_index = [], chunk_index + 1
            else:  # a TaggedOutput of the read quarantine
                yield record
        self._clock.flush()
        if chunk:
            yield self._spill(file_index, chunk_index, chunk)

    def _spill(self, file_index: int, chunk_index: int, chunk: list) -> ChunkRef:
        path = spill_path(self._directory, "read", file_index, chunk_index)
        write_spill(path, chunk)
        return ChunkRef(path, file_index, chunk_index, len(chunk), chunk_weight(chunk))


class TagChunkFn(beam.DoFn):
    """``ChunkRef`` of documents -> ``ChunkRef`` of tagged documents, plus link items.

    The link items of the tagged chunk, one per document, go out packed as
    one bytes element (tagged output ``links``); tag and link failures go to
    ``quarantine`` as stages ``tag`` and ``link``, with the document whole.
    Each document's originals (``DocumentFlow.originals``) are spilled
    beside the tagged chunk, in the same order, for ``PersonOriginals``.
    With ``claims_directory`` (every worker is offered every chunk), a chunk
    another worker claimed first is left to it (``spread.claimed``).
    """

    LINKS = "links"
    QUARANTINE = QUARANTINE

    def __init__(
        self,
        spill_directory: str,
        config: TaggerConfig,
        shared_handle: shared.Shared,
        rewriter: Rewriter,
        filesystem_flags: FileSystemFlags = None,
        claims_directory: str | None = None,
    ) -> None:
        self._directory = spill_directory
        self._config = config
        self._shared = shared_handle
        self._key = rewriter.key
        self._claims = claims_directory
        self._flags = filesystem_flags
        self._docs = Metrics.counter("deid", "documents_tagged")
        self._spans = Metrics.counter("deid", "spans_tagged")
        self._clock = StageClock()

    def setup(self) -> None:
        use_filesystem_flags(self._flags)
        with self._clock:  # the tagger's load (once a process)
            self._flow = DocumentFlow(acquire_tagger(self._shared, self._config))
        self._clock.flush()

    def process(self, ref: ChunkRef):
        # (Not a return in this generator: Beam warns of one at every run.)
        if self._claims is None or claimed(self._claims, ref):  # else another's
            # A chunk may be one huge document, some of whose steps count
            # nothing for minutes: the process's line keeps coming meanwhile.
            with process_progress(DOCUMENT_PROGRESS).busy():
                yield from self._tag(ref)

    def _tag(self, ref: ChunkRef):
        flow, clock = self._flow, self._clock
        tagged_chunk: list[TaggedDocument] = []
        items: list[LinkItem] = []
        originals: list[Originals] = []
        chunk_id: ChunkId = (ref.file_index, ref.chunk_index)
        tagged_docs: list[TaggedDocument] = []
        # A chunk of short documents is tagged for minutes before the rewrite
        # counts anything: count them as they come (counts only).
        progress = process_progress(DOCUMENT_PROGRESS)
        for doc in read_spill(ref.path):
            progress.add(documents_tagged=1)
            try:
                with clock:
                    tagged = flow.tag(doc)
                tagged_docs.append(tagged)
            except StageError as error:
                yield dead_letter(error, doc)
        # A file's reports of one HL7 message are consecutive, so in one chunk
        # (but for a message cut by a chunk boundary): one value, every report.
        # A patient's notes lend each other their sure names, places and ids
        # within the chunk too (a patient cut by a chunk boundary: each part).
        with clock:
            reconciled = flow.reconcile(tagged_docs)
        for tagged in reconciled:
            self._docs.inc()
            self._spans.inc(len(tagged.spans))
            try:
                with stage("link"), clock:
                    item = link_item(tagged, chunk_id, len(tagged_chunk), self._key)
                    own = flow.originals(tagged)
            except StageError as error:
                yield dead_letter(error, tagged)
                continue
            tagged_chunk.append(tagged)
            items.append(item)
            originals.append(own)
        clock.flush()
        if tagged_chunk:
            path = spill_path(
                self._directory, "tagged", ref.file_index, ref.chunk_index
            )
            write_spill(path, tagged_chunk)
            write_spill(
                spill_path(
                    self._directory, "originals", ref.file_index, ref.chunk_index
                ),
                originals,
            )
            yield beam.pvalue.TaggedOutput(self.LINKS, pack(items))
            yield ChunkRef(path, ref.file_index, ref.chunk_index, len(tagged_chunk))


class _SolveFn(beam.DoFn):
    PERSONS = "persons"
    SHARED = "shared"
    DUPLICATES = "duplicates"

    def __init__(self, rewriter: Rewriter, history: LinkHistory | None = None
                 ) -> None:
        self._rewriter = rewriter
        self._key = rewriter.key
        self._history = history
        self._clock = StageClock()

    def setup(self) -> None:
        if self._history is not None:
            use_filesystem_flags(self._history.filesystem_flags)

    def process(self, element):
        _none, packed = element
        items = (item for blob in packed for item in unpack(blob))
        history = self._history
        prior = (
            [] if history is None
            else [p for path in history.prior_paths for p in read_history(path)]
        )
        with self._clock:
            solution = solve_links_with_prior(items, self._rewriter, prior)
        self._clock.flush()
        if history is not None:
            self._write_history(solution.history, solution.merges)
        by_chunk = solution.keys_by_chunk
        for chunk_id in sorted(by_chunk):
            yield chunk_id, pack(by_chunk[chunk_id])
        for row in solution.persons_rows:
            yield beam.pvalue.TaggedOutput(self.PERSONS, row)
        shared = solution.shared_by_chunk
        for chunk_id in sorted(shared):
            yield beam.pvalue.TaggedOutput(
                self.SHARED, (chunk_id, pack(shared[chunk_id]))
            )
        duplicates = solution.duplicates_by_chunk
        for chunk_id in sorted(duplicates):
            yield beam.pvalue.TaggedOutput(
                self.DUPLICATES, (chunk_id, pack(duplicates[chunk_id]))
            )

    def _write_history(self, persons, merges) -> None:
        """Write this run's link history and the merges of earlier persons."""
        history = self._history
        write_history(history.output_path, persons)
        merge_rows = [
            {"person_id": person_id(self._key, kept),
             "merged_person_id": person_id(self._key, other)}
            for kept, other in merges
        ]
        write_table_file(history.merges_path, PERSON_MERGES, sorted(
            merge_rows, key=lambda r: (r["person_id"], r["merged_person_id"])
        ))


class SolveLinks(beam.PTransform):
    """Link items -> person keys, persons rows, shared persons, duplicate ids.

    Takes the packed link items of every chunk. The first output is
    ``((file index, chunk index), packed person keys by position)``, joined
    with the tagged chunks; the second the persons table; the third
    ``(chunk id, packed person id or None by position)`` for the chunks
    holding documents of persons with several documents, for
    ``PersonOriginals``; the fourth ``(chunk id, packed {position: chunk id
    of the first})`` for the chunks holding a document whose id an earlier
    document of the run has (``WriteChunkFn`` quarantines it). The link
    graph is solved in one place (a few short strings per document).
    """

    def __init__(
        self, rewriter: Rewriter, history: LinkHistory | None = None
    ) -> None:
        super().__init__()
        self._rewriter = rewriter
        self._history = history

    def expand(self, links):
        solved = (
            links
            | "AllLinks" >> beam.Map(lambda item: (None, item))
            | "GroupLinks" >> beam.GroupByKey()
            | "Solve"
            >> beam.ParDo(_SolveFn(self._rewriter, self._history)).with_outputs(
                _SolveFn.PERSONS, _SolveFn.SHARED, _SolveFn.DUPLICATES,
                main="keys"
            )
        )
        return (solved.keys, solved[_SolveFn.PERSONS], solved[_SolveFn.SHARED],
                solved[_SolveFn.DUPLICATES])


class PersonPart(NamedTuple):
    """The originals of one person's documents in one chunk (packed, by person id)."""

    chunk_id: ChunkId
    originals: Originals


class PersonWhole(NamedTuple):
    """A person's originals over all its documents, sent to each of its chunks."""

    person_id: str
    originals: Originals


class _PersonPartsFn(beam.DoFn):
    """(chunk id, packed person ids) -> (person id, packed ``PersonPart``).

    Reads the chunk's originals spill and joins those of each person's
    documents in the chunk.
    """

    def __init__(
        self, spill_directory: str, filesystem_flags: FileSystemFlags = None
    ) -> None:
        self._directory = spill_directory
        self._flags = filesystem_flags

    def setup(self) -> None:
        use_filesystem_flags(self._flags)

    def process(self, element):
        chunk_id, blob = element
        pids = unpack(blob)
        originals = read_spill(spill_path(self._directory, "originals", *chunk_id))
        parts: dict[str, list[Originals]] = {}
        for pid, own in zip(pids, originals):
            if pid is not None:
                parts.setdefault(pid, []).append(own)
        for pid in sorted(parts):
            yield pid, pack(PersonPart(chunk_id, Originals.union(parts[pid])))


def _spread_person(pid: str, blobs):
    """A person's ``PersonPart``s -> (chunk id, packed ``PersonWhole``)."""
    parts: list[PersonPart] = [unpack(blob) for blob in blobs]
    whole = pack(PersonWhole(pid, Originals.union(p.originals for p in parts)))
    for chunk_id in sorted({p.chunk_id for p in parts}):
        yield chunk_id, whole


class PersonOriginals(beam.PTransform):
    """Shared persons per chunk -> (chunk id, packed ``PersonWhole``).

    Each person with several documents in the run gets the union of the
    originals of all of them (grouped by person id: one shuffle of the
    originals, a few dozen short strings per document), sent to each chunk
    that holds one of its documents: no surrogate of a person spells an
    original of any document of that person, and the same value of a
    person gets the same surrogate in each of its documents.
    """

    def __init__(
        self, spill_directory: str, filesystem_flags: FileSystemFlags = None
    ) -> None:
        super().__init__()
        self._directory = spill_directory
        self._flags = filesystem_flags

    def expand(self, shared_persons):
        return (
            shared_persons
            | "PersonParts" >> beam.ParDo(_PersonPartsFn(self._directory, self._flags))
            | "GroupByPerson" >> beam.GroupByKey()
            | "ToChunks" >> beam.FlatMapTuple(_spread_person)
        )


def person_originals(blobs: Iterable[bytes]) -> dict[str, Originals]:
    """Person id -> originals, from ``PersonOriginals``'s packed values."""
    wholes: list[PersonWhole] = [unpack(blob) for blob in blobs]
    return {w.person_id: w.originals for w in wholes}


class NoPersonAssignmentError(LookupError):
    """A tagged document the linking stage gave no person (a bug)."""


class WriteChunkFn(beam.DoFn):
    """(chunk id, {tagged ``ChunkRef``, person keys, avoid}) -> Parquet files.

    ``avoid`` holds ``PersonOriginals``'s values for the chunk: a document
    whose person has other documents is rewritten against the originals of
    all of them, any other against its own (read from the originals spill
    under ``spill_directory`` when given, else collected again). Rewrite
    failures go to quarantine as stage ``surrogate``, leak-guard failures as
    ``leak_guard``, as in ``Surrogate``. Emits a ``ChunkWritten``.
    """

    QUARANTINE = QUARANTINE

    def __init__(
        self, directory: str, rewriter: Rewriter,
        filesystem_flags: FileSystemFlags = None,
        spill_directory: str | None = None,
    ) -> None:
        self._directory = directory
        self._rewriter = rewriter
        self._flags = filesystem_flags
        self._spill = spill_directory
        self._flow = DocumentFlow(rewriter=rewriter)
        self._docs = Metrics.counter("deid", "documents_written")
        self._clock = StageClock()

    def setup(self) -> None:
        use_filesystem_flags(self._flags)

    def process(self, element):
        _chunk_id, joined = element
        refs = list(joined["chunk"])
        keys = [unpack(blob) for blob in joined["keys"]]
        duplicates: dict[int, ChunkId] = {}
        for blob in joined.get("duplicates", ()):
            duplicates.update(unpack(blob))
        with process_progress(DOCUMENT_PROGRESS).busy():  # see TagChunkFn
            avoid = person_originals(joined.get("avoid", ()))
            for ref in refs:
                yield from self._write(ref, keys[0] if len(keys) == 1 else (), avoid,
                                       duplicates)

    def _batch_originals(
        self, chunk: list[TaggedDocument], own: list[Originals],
        person_keys: tuple[str | None, ...], avoid: dict[str, Originals] | None,
    ) -> dict[int, Originals]:
        """Position -> originals, for HL7 messages that share a batch file.

        An auditor reads a batch file whole: a surrogate in one message's
        research text must not spell another patient's value of the same file
        (hl7feeds found 24 such in 200 synthetic messages in batches of 10).
        So every message of the file in this chunk is rewritten against the
        originals of all of them and of their persons: the set HL7
        write-back uses for the file (the same, when the file fits a chunk),
        so the research text and the written file draw alike.
        """
        files: dict[str, list[int]] = {}
        for position, tagged in enumerate(chunk):
            if tagged.document.source == "hl7" and position < len(person_keys):
                files.setdefault(tagged.document.origin, []).append(position)
        batch: dict[int, Originals] = {}
        for positions in files.values():
            if len(positions) < 2:
                continue
            parts = [own[p] if p < len(own) else originals_of(chunk[p])
                     for p in positions]
            if avoid:
                pids = {self._rewriter.person_id_for(chunk[p], person_keys[p])
                        for p in positions}
                parts += [avoid[pid] for pid in sorted(pids) if pid in avoid]
            union = Originals.union(parts)
            batch.update(dict.fromkeys(positions, union))
        return batch

    def _write(
        self, ref: ChunkRef, person_keys: tuple[str | None, ...],
        avoid: dict[str, Originals] | None = None,
        duplicates: dict[int, ChunkId] | None = None,
    ):
        documents: list[dict] = []
        identifiers = IdentifierColumns()
        progress = process_progress(DOCUMENT_PROGRESS)
        rewriter = self._rewriter
        own: list[Originals] = []
        if self._spill is not None:
            own = read_spill(spill_path(
                self._spill, "originals", ref.file_index, ref.chunk_index
            ))
        flow, clock = self._flow, self._clock
        chunk = read_spill(ref.path)
        with clock:
            batch = self._batch_originals(chunk, own, person_keys, avoid)
        for position in range(len(chunk)):
            # Each document is let go once its rows are made: one huge document
            # (and its rewrite) held through the table building and writing
            # was the run's peak memory.
            tagged, chunk[position] = chunk[position], None
            if duplicates and position in duplicates:
                # One row per document id: a later one is quarantined, counted.
                yield dead_letter(StageError("link", DuplicateDocumentIdError(
                    duplicate_message(duplicates[position]))), tagged)
                continue
            try:
                with clock:
                    with stage(SURROGATE):
                        if position >= len(person_keys):
                            raise NoPersonAssignmentError(
                                "document got no person assignment")
                        key = person_keys[position]
                        originals = batch.get(position) or (
                            avoid.get(rewriter.person_id_for(tagged, key))
                            if avoid else None)
                        if originals is None and position < len(own):
                            originals = own[position]
                    result = flow.write(tagged, key, originals)
            except StageError as error:
                yield dead_letter(error, tagged)
                continue
            self._docs.inc()
            progress.add(documents=1, spans=result.n_phi)
            with clock:
                documents.append(document_row(result))
                identifiers.add(result)
            del tagged, result
        with clock:
            documents.sort(key=sort_key("documents"))
            tables = {"documents": documents}
            if identifiers:
                tables["identifiers"] = identifiers.table(
                    SCHEMAS["identifiers"], sort_columns("identifiers"))
            counts = written_counts("documents", documents) + written_counts(
                "identifiers", tables.get("identifiers", []))
            for table, rows in tables.items():
                if len(rows):
                    path = chunk_path(
                        self._directory, table, ref.file_index, ref.chunk_index
                    )
                    write_table_file(path, SCHEMAS[table], rows)
        clock.flush()
        yield ChunkWritten(
            ref.file_index, ref.chunk_index, len(documents), len(identifiers), counts
        )
