"""Read: one file -> ClinicalDocuments and unreadable records; broken links counted."""

from __future__ import annotations

import bz2
import glob
import os
import zlib

import apache_beam as beam
from apache_beam.io.filesystem import CompressionTypes
from apache_beam.io.filesystems import FileSystems
from apache_beam.metrics import Metrics

from deid_pipeline.model import ClinicalDocument, QuarantineRecord
from deid_pipeline.readers.formats import read_records
from deid_pipeline.run_options import DEFAULT_MAX_FILE_BYTES
from deid_pipeline.runtime.interrupts import reraise_interrupt
from deid_pipeline.runtime.progress import process_progress


class FileTooLargeError(ValueError):
    """An input file (decompressed) over the size limit; its path says which."""


class ReadFileFn(beam.DoFn):
    """One input file -> its records; bad records go to the quarantine output."""

    QUARANTINE = "quarantine"

    def __init__(self, input_format: str,
                 max_bytes: int = DEFAULT_MAX_FILE_BYTES) -> None:
        self._format = input_format
        self._max_bytes = max_bytes
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
            size = readable_file.metadata.size_in_bytes
            if size is not None and size > self._max_bytes:
                raise FileTooLargeError(
                    too_large(f"is {size} bytes, over", self._max_bytes))
            with readable_file.open(
                compression_type=CompressionTypes.UNCOMPRESSED
            ) as fh:
                data = fh.read()
            data = decompress(path, data, self._max_bytes)
            for record in read_records(path, data, self._format):
                self._records.inc()
                if isinstance(record, ClinicalDocument):
                    yield record
                else:
                    yield beam.pvalue.TaggedOutput(self.QUARANTINE, record)
        except Exception as exc:  # noqa: BLE001 - a reader bug must not lose the file
            reraise_interrupt(exc)
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


class BrokenLinksFn(beam.DoFn):
    """All patterns -> a quarantine record per broken symbolic link they match.

    Beam's local file system lists only paths whose size it can read, so a
    dangling link or a link loop that matches ``--input`` would vanish from
    the run with no count. Local patterns are globbed again here (``**``
    recursive, as in Beam) and each such link becomes a ``read`` quarantine
    record with no content, counted as a file and a record read.
    """

    def __init__(self, input_format: str) -> None:
        self._format = input_format
        self._files = Metrics.counter("deid", "files_read")
        self._records = Metrics.counter("deid", "records_read")

    def process(self, patterns: tuple[str, ...]):
        """Local-only: links exist on a local file system; other patterns skipped."""
        paths = set()
        for pattern in patterns:
            if FileSystems.get_scheme(pattern) not in (None, "file"):
                continue
            local = pattern.removeprefix("file://")
            paths.update(glob.glob(local, recursive=True))
        for path in sorted(paths):  # once, however many patterns match it
            if os.path.islink(path) and not os.path.exists(path):
                self._files.inc()
                self._records.inc()
                yield QuarantineRecord(
                    doc_id=path, stage="read", error_type="BrokenLink",
                    error_message="symbolic link to a missing target, or a loop",
                    raw=b"", origin=path, source=self._format)


def is_special_local_file(path: str) -> bool:
    """Local-only: a local path that exists but is not a regular file.

    Only a local file system has FIFOs and devices; for a path of another
    scheme ``os.path.exists`` is False, so the answer is False.
    """
    return os.path.exists(path) and not os.path.isfile(path)


def too_large(what: str, limit: int) -> str:
    """The PHI-free reason a file is refused: ``file <what> the <limit>-byte limit``."""
    return f"file {what} the {limit}-byte limit (--max-file-bytes)"


def decompress(path: str, data: bytes, limit: int | None = None) -> bytes:
    """Decompress by extension with the stdlib, which rejects a truncated stream.

    Beam's own decompression returns whatever it could read of a cut gzip file
    without an error, which would write a shortened note as if it were whole.
    Output is produced at most ``limit`` bytes at a time, so a small file that
    inflates to gigabytes (a gzip bomb) raises :class:`FileTooLargeError`
    before it is held in memory. Concatenated members are read like ``gzip``.
    """
    lower = path.lower()
    if lower.endswith(".gz"):
        return _inflate(data, lambda: zlib.decompressobj(wbits=31), limit)
    if lower.endswith(".bz2"):
        return _inflate(data, bz2.BZ2Decompressor, limit)
    if limit is not None and len(data) > limit:
        raise FileTooLargeError(too_large(f"is {len(data)} bytes, over", limit))
    return data


def _inflate(data: bytes, decompressor, limit: int | None) -> bytes:
    """Every member of a gzip or bzip2 stream, never more than ``limit`` bytes."""
    out = bytearray()
    rest = data
    while rest:
        d = decompressor()
        pending = rest
        while not d.eof:
            room = -1 if limit is None else limit + 1 - len(out)
            if isinstance(d, bz2.BZ2Decompressor):
                if d.needs_input and not pending:
                    break
                out += d.decompress(pending, room)
                pending = b""
            else:
                if not pending:
                    break
                out += d.decompress(pending, max(room, 0))
                pending = d.unconsumed_tail
            if limit is not None and len(out) > limit:
                raise FileTooLargeError(too_large("inflates past", limit))
        if not d.eof:
            raise EOFError("compressed file ended before the end-of-stream marker")
        rest = d.unused_data
    return bytes(out)
