"""The top-level composites: documents in, research rows, persons and quarantine out."""

from __future__ import annotations

from typing import NamedTuple

import apache_beam as beam

from deid_pipeline.deidentify import Rewriter
from deid_pipeline.detectors import TaggerConfig
from deid_pipeline.transforms.link import Link
from deid_pipeline.transforms.persons import Persons
from deid_pipeline.transforms.read import ReadRecords
from deid_pipeline.transforms.surrogate import Surrogate
from deid_pipeline.transforms.tag import Tag


class DeidOutputs(NamedTuple):
    """What the pipeline produces: research-safe documents, persons and failures."""

    research: beam.PCollection
    persons: beam.PCollection
    quarantine: beam.PCollection


class DeidentifyRecords(beam.PTransform):
    """The per-record chain (tag -> surrogate -> leak guard), with no shuffle.

    Safe on unbounded PCollections (Kafka, Pub/Sub, an MLLP feed): every
    person id and surrogate is a pure function of the key and the record
    itself (its header key, else the document), so streaming gives the same
    bytes as the batch run for any record that carries its own person key.
    Returns (research documents, quarantine).
    """

    def __init__(self, tagger: TaggerConfig, rewriter: Rewriter) -> None:
        super().__init__()
        self._tagger = tagger
        self._rewriter = rewriter

    def expand(self, documents):
        tagged, tag_failed = documents | "Tag" >> Tag(self._tagger)
        research, rewrite_failed = tagged | "Surrogate" >> Surrogate(self._rewriter)
        quarantine = (tag_failed, rewrite_failed) | "RecordQuarantine" >> beam.Flatten()
        return research, quarantine


class DeidentifyClinicalDocuments(beam.PTransform):
    """Tag, link into persons, rewrite; stage failures flattened into one quarantine."""

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


class DeidentifyFiles(beam.PTransform):
    """Read input globs and de-identify them: the whole batch job minus the sinks."""

    def __init__(
        self,
        patterns: list[str],
        input_format: str,
        tagger: TaggerConfig,
        rewriter: Rewriter,
    ) -> None:
        super().__init__()
        self._read = ReadRecords(patterns, input_format)
        self._deid = DeidentifyClinicalDocuments(tagger, rewriter)

    def expand(self, pbegin) -> DeidOutputs:
        documents, unreadable = pbegin | "Read" >> self._read
        outputs = documents | "Deidentify" >> self._deid
        quarantine = (
            unreadable,
            outputs.quarantine,
        ) | "AllQuarantine" >> beam.Flatten()
        return outputs._replace(quarantine=quarantine)
