"""Tag: every detector over every document, one tagger (and CRF model) per process."""

from __future__ import annotations

from typing import TYPE_CHECKING

import apache_beam as beam
from apache_beam.metrics import Metrics
from apache_beam.utils import shared

from deid_pipeline.flow import DocumentFlow, StageError
from deid_pipeline.model import ClinicalDocument
from deid_pipeline.runtime.process import settle
from deid_pipeline.tagger.detectors import TaggerConfig
from deid_pipeline.transforms.quarantine import dead_letter, with_quarantine

if TYPE_CHECKING:
    from deid_pipeline.tagger.tagging import PhiTagger


class _TaggerHolder:
    """Weak-referenceable box for the per-process tagger (what Shared requires)."""

    def __init__(self, tagger: PhiTagger) -> None:
        self.tagger = tagger


# Taggers built before this process became a worker (pipelines/forked_workers.py).
_PRELOADED: dict[str, _TaggerHolder] = {}


def _load(config: TaggerConfig) -> _TaggerHolder:
    holder = _PRELOADED.get(repr(config))
    if holder is None:
        holder = _TaggerHolder(_built(config))
    settle()  # the model and lexicons live as long as the worker process
    return holder


def _built(config: TaggerConfig) -> PhiTagger:
    # Imported where a tagger is built: a pipeline's client never builds one.
    from deid_pipeline.tagger.tagging import PhiTagger

    return PhiTagger.from_config(config)


def preload_tagger(config: TaggerConfig) -> None:
    """Build this process's tagger for ``config`` before any worker asks for it.

    For a process that forks workers (``pipelines/forked_workers.py``): each
    starts with the tagger built, its model's and lexicons' pages shared.
    (Tagging a few made-up notes first as well saved nothing measurable: a
    worker's first thousand notes cost more for the feature rows of their
    new words, which no short text can fill.)
    """
    _PRELOADED[repr(config)] = _TaggerHolder(_built(config))


def acquire_tagger(handle: shared.Shared, config: TaggerConfig) -> PhiTagger:
    """The one tagger (and CRF model) of this worker process for ``config``."""
    holder = handle.acquire(lambda: _load(config), tag=repr(config))
    return holder.tagger


class TagFn(beam.DoFn):
    """ClinicalDocument -> TaggedDocument (the flow's tag stage), or a dead letter."""

    def __init__(self, config: TaggerConfig, shared_handle: shared.Shared) -> None:
        self._config = config
        self._shared = shared_handle
        self._flow: DocumentFlow | None = None
        self._docs = Metrics.counter("deid", "documents_tagged")
        self._spans = Metrics.counter("deid", "spans_tagged")

    def setup(self) -> None:
        self._flow = DocumentFlow(acquire_tagger(self._shared, self._config))

    def process(self, doc: ClinicalDocument):
        try:
            tagged = self._flow.tag(doc)
        except StageError as error:
            yield dead_letter(error, doc)
            return
        self._docs.inc()
        self._spans.inc(len(tagged.spans))
        yield tagged


class Tag(beam.PTransform):
    """The tag stage: detectors + merge, failures to quarantine (stage ``tag``)."""

    def __init__(self, config: TaggerConfig) -> None:
        super().__init__()
        self._config = config
        self._shared = shared.Shared()

    def expand(self, documents):
        return with_quarantine(documents, "Tag", TagFn(self._config, self._shared))
