"""Read: file globs -> ClinicalDocuments (main) and unreadable records (quarantine)."""

from __future__ import annotations

import bz2
import gzip
import os

import apache_beam as beam
from apache_beam.io import fileio
from apache_beam.io.filesystem import CompressionTypes
from apache_beam.metrics import Metrics

from deid_pipeline.corpora import read_records
from deid_pipeline.model import ClinicalDocument, QuarantineRecord
from deid_pipeline.progress import process_progress


class ReadFileFn(beam.DoFn):
    """One input file -> its records; bad records go to the quarantine output."""

    QUARANTINE = "quarantine"

    def __init__(self, input_format: str) -> None:
        self._format = input_format
        self._files = Metrics.counter("deid", "files_read")
        self._records = Metrics.counter("deid", "records_read")

    def process(self, readable_file):
        path = readable_file.metadata.path
        self._files.inc()
        process_progress("read").add(files=1)
        data = b""
        try:
            if is_special_local_file(path):
                # A FIFO or device matched by a glob would block or never end.
                raise ValueError("not a regular file (FIFO, socket or device)")
            with readable_file.open(
                compression_type=CompressionTypes.UNCOMPRESSED
            ) as fh:
                data = fh.read()
            data = decompress(path, data)
            for record in read_records(path, data, self._format):
                self._records.inc()
                if isinstance(record, ClinicalDocument):
                    yield record
                else:
                    yield beam.pvalue.TaggedOutput(self.QUARANTINE, record)
        except Exception as exc:  # noqa: BLE001 - a reader bug must not lose the file
            # Records already yielded stay yielded; the whole file goes to
            # quarantine as well so the rest of it is not silently lost.
            self._records.inc()
            yield beam.pvalue.TaggedOutput(
                self.QUARANTINE,
                QuarantineRecord(
                    doc_id=path,
                    stage="read",
                    error_type=type(exc).__name__,
                    error_message=f"reading stopped: {exc!r}",
                    raw=data,
                    origin=path,
                    source=self._format,
                ),
            )


def is_special_local_file(path: str) -> bool:
    """A local path that exists but is not a regular file."""
    return os.path.exists(path) and not os.path.isfile(path)


def decompress(path: str, data: bytes) -> bytes:
    """Decompress by extension with the stdlib, which rejects a truncated stream.

    Beam's own decompression returns whatever it could read of a cut gzip file
    without an error, which would write a shortened note as if it were whole.
    """
    lower = path.lower()
    if lower.endswith(".gz"):
        return gzip.decompress(data)
    if lower.endswith(".bz2"):
        return bz2.decompress(data)
    return data


class ReadRecords(beam.PTransform):
    """Match the patterns, read every file, and spread documents over workers.

    The Reshuffle matters: one big corpus file is one element until it is
    read, and without a fusion break all of its documents would be tagged by
    the worker that read it.
    """

    def __init__(self, patterns: list[str], input_format: str = "auto") -> None:
        super().__init__()
        self._patterns = list(patterns)
        self._format = input_format

    def expand(self, pbegin):
        files = (
            pbegin
            | "Patterns" >> beam.Create(self._patterns)
            | "Match" >> fileio.MatchAll()
            | "Open" >> fileio.ReadMatches()
        )
        documents, unreadable = files | "Read" >> beam.ParDo(
            ReadFileFn(self._format)
        ).with_outputs(ReadFileFn.QUARANTINE, main="documents")
        return (
            documents | "Spread" >> beam.Reshuffle(),
            unreadable,
        )
