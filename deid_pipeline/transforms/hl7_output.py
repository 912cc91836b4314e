"""HL7 out: de-identified messages, one output file per input file, same framing.

A caTIES-style stage hands HL7 to the next system, so each input HL7 file is
rewritten as a whole (framing, batch envelopes, separators kept) by the
Beam-free ``deidentify_hl7_file`` with the same tagger and rewriter as the
document path; both are deterministic, so the narrative in the HL7 output
and the text in the research table agree. Messages that fail are left out of
the file and recorded in the quarantine with stage ``hl7_output:<stage>``.
"""

from __future__ import annotations

import os

import apache_beam as beam
from apache_beam.io import fileio
from apache_beam.io.filesystems import FileSystems
from apache_beam.metrics import Metrics
from apache_beam.utils import shared

from deid_pipeline.corpora import sniff_format
from deid_pipeline.deidentify import Rewriter
from deid_pipeline.detectors import TaggerConfig
from deid_pipeline.model import QuarantineRecord
from deid_pipeline.transforms.tag import acquire_tagger

STAGE_PREFIX = "hl7_output:"


class Hl7FileFn(beam.DoFn):
    """One HL7 input file -> its de-identified twin in ``directory``."""

    def __init__(
        self,
        directory: str,
        input_format: str,
        config: TaggerConfig,
        rewriter: Rewriter,
        shared_handle: shared.Shared,
    ) -> None:
        self._directory = directory
        self._format = input_format
        self._config = config
        self._rewriter = rewriter
        self._shared = shared_handle
        self._in = Metrics.counter("deid", "hl7_messages_in")
        self._out = Metrics.counter("deid", "hl7_messages_out")

    def setup(self) -> None:
        self._tagger = acquire_tagger(self._shared, self._config)

    def process(self, readable_file):
        from deid_pipeline.hl7.writeback import deidentify_hl7_file

        path = readable_file.metadata.path
        data = readable_file.read()
        fmt = sniff_format(path, data[:64]) if self._format == "auto" else self._format
        if fmt != "hl7":
            return
        result = deidentify_hl7_file(path, data, self._tagger, self._rewriter)
        self._in.inc(result.messages_in)
        self._out.inc(result.messages_out)
        target = FileSystems.join(self._directory, os.path.basename(path))
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


class WriteHl7Files(beam.PTransform):
    """Input globs -> de-identified HL7 files; returns their quarantine records."""

    def __init__(
        self,
        patterns: list[str],
        input_format: str,
        directory: str,
        config: TaggerConfig,
        rewriter: Rewriter,
    ) -> None:
        super().__init__()
        self._patterns = list(patterns)
        self._format = input_format
        self._directory = directory
        self._config = config
        self._rewriter = rewriter
        self._shared = shared.Shared()

    def expand(self, pbegin):
        return (
            pbegin
            | "Hl7Patterns" >> beam.Create(self._patterns)
            | "Hl7Match" >> fileio.MatchAll()
            | "Hl7Open" >> fileio.ReadMatches()
            | "Hl7Spread" >> beam.Reshuffle()
            | "Hl7Rewrite"
            >> beam.ParDo(
                Hl7FileFn(
                    self._directory,
                    self._format,
                    self._config,
                    self._rewriter,
                    self._shared,
                )
            )
        )
