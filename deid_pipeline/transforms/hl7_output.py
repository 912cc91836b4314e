"""HL7 out: de-identified messages, one output file per input file, same framing.

A caTIES-style stage hands HL7 to the next system, so each input HL7 file is
rewritten as a whole (framing, batch envelopes, separators kept) by the
Beam-free ``deidentify_hl7_file`` with the same rewriter as the document
path. Its reports are not tagged a second time: the file is joined (by input
file index, a shuffle of chunk references only) with the tagged chunks the
document path spilled for it, and each report takes the tagged document of
the same id and content from there, so the narrative in the HL7 output and
the text in the research table come from the same spans. Only a report the
document path could not tag (it was quarantined there) is tagged again.
The originals of the file's persons that have several documents in the run
(``chunks.PersonOriginals``) come with the join too, so a report is rewritten
against the same originals in both outputs. Messages that fail are left out
of the file and recorded in the quarantine with stage ``hl7_output:<stage>``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import apache_beam as beam
from apache_beam.io.fileio import ReadableFile
from apache_beam.io.filesystem import CompressionTypes
from apache_beam.io.filesystems import FileSystems
from apache_beam.metrics import Metrics
from apache_beam.utils import shared

from deid_pipeline.document_rewriter import Rewriter
from deid_pipeline.model import ClinicalDocument, QuarantineRecord, TaggedDocument
from deid_pipeline.readers.formats import sniff_format
from deid_pipeline.runtime.interrupts import reraise_interrupt
from deid_pipeline.store.files import FileSystemFlags, use_filesystem_flags
from deid_pipeline.tagger.detectors import TaggerConfig
from deid_pipeline.transforms.chunks import (
    ChunkRef,
    person_originals,
    read_spill,
    unpack,
)
from deid_pipeline.transforms.read import DEFAULT_MAX_FILE_BYTES, decompress
from deid_pipeline.transforms.tag import acquire_tagger

STAGE_PREFIX = "hl7_output:"


@dataclass(frozen=True)
class Hl7Output:
    """Where the de-identified HL7 files go, and what becomes of Z-segments.

    ``z_segments`` is one of ``hl7.writeback.Z_SEGMENT_MODES``;
    ``filesystem_flags`` the job's options for the workers' file systems.
    """

    directory: str
    z_segments: str = "empty"
    filesystem_flags: FileSystemFlags = None


class TaggedBefore:
    """A tagger that answers with the tags already made for the same document.

    ``known`` maps doc id to a tagged document and the person key linking
    gave it; it is used only when its document equals the one asked for
    (same text, dictionary and metadata), since two messages of a file may
    share a control id. Anything else goes to ``fallback`` and is counted in
    ``tagged_again``. Called with a tagged document, it is the write-back's
    ``PersonKeys``.
    """

    def __init__(self, known: dict[str, tuple[TaggedDocument, str | None]],
                 fallback) -> None:
        self._known = known
        self._fallback = fallback
        self.tagged_again = 0

    def tag(self, doc: ClinicalDocument) -> TaggedDocument:
        tagged, _key = self._known.get(doc.doc_id, (None, None))
        if tagged is not None and tagged.document == doc:
            return tagged
        self.tagged_again += 1
        return self._fallback.tag(doc)

    def __call__(self, tagged: TaggedDocument) -> tuple[bool, str | None]:
        before, key = self._known.get(tagged.document.doc_id, (None, None))
        return before is tagged, key


class Hl7FileFn(beam.DoFn):
    """(file index, {file, tagged chunk refs, keys, avoid}) -> de-identified file."""

    def __init__(
        self,
        output: Hl7Output,
        input_format: str,
        config: TaggerConfig,
        rewriter: Rewriter,
        shared_handle: shared.Shared,
        max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
    ) -> None:
        self._output = output
        self._max_bytes = max_file_bytes
        self._format = input_format
        self._config = config
        self._rewriter = rewriter
        self._shared = shared_handle
        self._in = Metrics.counter("deid", "hl7_messages_in")
        self._out = Metrics.counter("deid", "hl7_messages_out")
        self._skipped = Metrics.counter("deid", "hl7_stray_runs_skipped")
        self._again = Metrics.counter("deid", "hl7_reports_tagged_again")

    def setup(self) -> None:
        use_filesystem_flags(self._output.filesystem_flags)
        self._tagger = acquire_tagger(self._shared, self._config)

    def process(self, element):
        _file_index, joined = element
        keys = {chunk: unpack(blob) for chunk, blob in joined["keys"]}
        avoid = person_originals(joined.get("avoid", ()))
        for metadata in joined["file"]:
            yield from self._rewrite(metadata, list(joined["tagged"]), keys, avoid)

    def _read(self, metadata) -> bytes | None:
        """The file's bytes, decompressed, if it is HL7; None otherwise.

        Read and decompressed as the document path reads it (bounded, cut
        streams refused); a file it refuses is in its quarantine already.
        """
        path = metadata.path
        if metadata.size_in_bytes > self._max_bytes or self._format not in (
                "auto", "hl7"):
            return None
        inner = _uncompressed_name(path)
        if self._format == "auto" and inner == path:
            with ReadableFile(metadata).open(
                    compression_type=CompressionTypes.UNCOMPRESSED) as head:
                if sniff_format(path, head.read(64)) != "hl7":
                    return None
        elif self._format == "auto" and sniff_format(inner, b"") in (
                "jsonl", "parquet"):
            return None  # decided by its name: not worth inflating
        with ReadableFile(metadata).open(
                compression_type=CompressionTypes.UNCOMPRESSED) as fh:
            raw = fh.read()
        try:
            data = decompress(path, raw, self._max_bytes)
        except Exception as exc:  # noqa: BLE001 - quarantined at read by the document path
            reraise_interrupt(exc)
            return None
        if self._format == "auto" and sniff_format(inner, data[:64]) != "hl7":
            return None
        return data

    def _rewrite(self, metadata, refs: list[ChunkRef],
                 keys: dict[int, tuple[str | None, ...]],
                 avoid: dict | None = None):
        from deid_pipeline.hl7.writeback import deidentify_hl7_file

        path = metadata.path
        data = self._read(metadata)
        if data is None:
            return
        known: dict[str, tuple[TaggedDocument, str | None]] = {}
        for ref in sorted(refs, key=lambda r: r.chunk_index):
            linked = keys.get(ref.chunk_index, ())
            for position, tagged in enumerate(read_spill(ref.path)):
                key = linked[position] if position < len(linked) else None
                known.setdefault(tagged.document.doc_id, (tagged, key))
        tagger = TaggedBefore(known, self._tagger)
        result = deidentify_hl7_file(path, data, tagger, self._rewriter,
                                     self._output.z_segments, person_keys=tagger,
                                     person_originals=avoid)
        self._in.inc(result.messages_in)
        self._out.inc(result.messages_out)
        self._skipped.inc(result.skipped)
        self._again.inc(tagger.tagged_again)
        # Written uncompressed, so under its name without .gz/.bz2.
        target = FileSystems.join(self._output.directory,
                                  os.path.basename(_uncompressed_name(path)))
        with FileSystems.create(target) as channel:
            channel.write(result.output)
        for record in result.quarantined:
            yield QuarantineRecord(
                doc_id=record.doc_id,
                stage=STAGE_PREFIX + record.stage,
                error_type=record.error_type,
                error_message=record.error_message,
                raw=record.raw,
                origin=record.origin,
                source=record.source,
            )


def _uncompressed_name(path: str) -> str:
    """``x.hl7.gz`` -> ``x.hl7``; other paths unchanged."""
    for suffix in (".gz", ".bz2"):
        if path.lower().endswith(suffix):
            return path[: -len(suffix)]
    return path


class WriteHl7Files(beam.PTransform):
    """Indexed input files + their tagged chunk refs -> de-identified HL7 files.

    Applied to ``{"file": (file index, FileMetadata), "tagged": ChunkRef,
    "keys": ((file index, chunk index), packed person keys)}`` (as
    ``SolveLinks`` gives them) and optionally ``"avoid": ((file index, chunk
    index), packed (person id, originals))`` (as ``chunks.PersonOriginals``
    gives them); returns the quarantine records of the messages left out.
    """

    def __init__(
        self,
        input_format: str,
        output: Hl7Output,
        config: TaggerConfig,
        rewriter: Rewriter,
        max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
    ) -> None:
        super().__init__()
        self._max_file_bytes = max_file_bytes
        self._format = input_format
        self._output = output
        self._config = config
        self._rewriter = rewriter
        self._shared = shared.Shared()

    def expand(self, inputs):
        refs = inputs["tagged"] | "RefsByFile" >> beam.Map(
            lambda ref: (ref.file_index, ref)
        )
        keys = inputs["keys"] | "KeysByFile" >> beam.MapTuple(
            lambda chunk_id, blob: (chunk_id[0], (chunk_id[1], blob))
        )
        joined = {"file": inputs["file"], "tagged": refs, "keys": keys}
        if "avoid" in inputs:
            joined["avoid"] = inputs["avoid"] | "AvoidByFile" >> beam.MapTuple(
                lambda chunk_id, blob: (chunk_id[0], blob)
            )
        return (
            joined
            | "JoinTagged" >> beam.CoGroupByKey()
            | "Hl7Rewrite"
            >> beam.ParDo(
                Hl7FileFn(
                    self._output,
                    self._format,
                    self._config,
                    self._rewriter,
                    self._shared,
                    self._max_file_bytes,
                )
            )
        )
