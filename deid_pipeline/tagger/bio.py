"""BIO tags <-> spans: the one conversion.

Everything that turns spans into per-token labels and back lives here, so
training, tagging and evaluation cannot disagree about a boundary
(nedap/deidentify's ``tagging_utils`` idea).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from itertools import compress

from deid_pipeline.model import PhiSpan
from deid_pipeline.tokenizer import Token

OUTSIDE = "O"
# The span source of the CRF detector, and of spans read from its tags.
SOURCE = "crf"


def marked(kinds: Sequence[str | None]) -> Iterator[int]:
    """The tokens with a kind (not None), read as the walk reaches each.

    The rules after decoding each walk the few marked tokens of a note, not
    all of them (issue 45); a kind a rule sets or clears ahead of the walk
    is seen when it gets there, as in a walk over every token.
    """
    return compress(range(len(kinds)), kinds)


def spans_to_bio(tokens: Sequence[Token], spans: Iterable[PhiSpan]) -> list[str]:
    """BIO tags for ``tokens``: a token overlapping a span gets its label.

    The first token of each span is ``B-``, the rest ``I-``. When spans overlap
    (they should not, gold is merged), the earlier span keeps its tokens.
    """
    tags = [OUTSIDE] * len(tokens)
    ordered = sorted(spans, key=lambda s: (s.start, s.end))
    i = 0
    n = len(tokens)
    for span in ordered:
        while i < n and tokens[i].end <= span.start:
            i += 1
        j = i
        first = True
        while j < n and tokens[j].start < span.end:
            if tags[j] == OUTSIDE:
                tags[j] = ("B-" if first else "I-") + span.label
                first = False
            j += 1
    return tags


def bio_to_spans(tokens: Sequence[Token], tags: Sequence[str], source: str = SOURCE,
                 confidences: Sequence[float] | None = None) -> list[PhiSpan]:
    """Spans from BIO tags, lenient: ``I-X`` after ``O`` or another type starts a span.

    A span runs from its first token's start to its last token's end in the
    original text. ``confidences`` (per token) gives each span the minimum over
    its tokens: how sure the model is that every token of it is PHI.
    """
    spans = []
    start = end = -1
    label = None
    conf = 1.0

    def close() -> None:
        if label is not None:
            spans.append(PhiSpan(start, end, label, source,
                                 None if confidences is None else conf))

    for i, tag in enumerate(tags):
        if tag == OUTSIDE:
            close()
            label = None
            continue
        prefix, _, kind = tag.partition("-")
        if label is None or prefix == "B" or kind != label:
            close()
            start, label, conf = tokens[i].start, kind, 1.0
        end = tokens[i].end
        if confidences is not None:
            conf = min(conf, confidences[i])
    close()
    return spans
